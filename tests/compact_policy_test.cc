// The compact LevelDB policies: same bytes as CompactFilter, corrupt and
// truncated filters read as "may match" (table of corrupt trailers, every
// truncation, random bit flips on exact-size heap copies for ASan), the
// migrating policy answers built-in and blocked filters exactly as their own
// readers, and real databases on disk: absent-key data-block reads match the
// filters' FPR, and migration works in both directions.
#include "blockbloom/compact_filter_policy.h"
#include "testing/read_counting_env.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "blockbloom/compact_filter.h"
#include "blockbloom/hash.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "blocked/format.h"
#include "compact/builder.h"
#include "compact/format.h"
#include "format/recognize.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/env.h"
#include "leveldb/filter_policy.h"
#include "policy/filter_sizing.h"
#include "test_keys.h"
#include "test_paths.h"
#include "sanitizers.h"

namespace blockbloom {
namespace {

using testing_keys::Key;
using testing_keys::SplitMix64;

using PolicyPtr = std::unique_ptr<const leveldb::FilterPolicy>;

std::string CreateFilter(const leveldb::FilterPolicy& policy,
                         const std::vector<std::string>& keys) {
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string out;
  policy.CreateFilter(slices.data(), static_cast<int>(slices.size()), &out);
  return out;
}

// A format-version-1 filter, as older builds of the compact policy wrote.
std::string CreateFilterV1(const std::vector<std::string>& keys) {
  std::vector<uint64_t> hashes;
  for (const std::string& k : keys) hashes.push_back(HashKey(k));
  std::string out;
  compact::AppendFilterV1(hashes, 10.0, &out);
  return out;
}

std::vector<std::string> PresentKeys(size_t n, size_t first = 0) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < n; ++i) keys.push_back(Key(2 * (first + i)));
  return keys;
}

// A heap copy of exactly `bytes.size()` bytes (none: a pointer to the end of
// a 1-byte allocation), so ASan reports any read past the filter's end.
class ExactCopy {
 public:
  explicit ExactCopy(const std::string& bytes)
      : size_(bytes.size()), storage_(std::make_unique<char[]>(size_ == 0 ? 1 : size_)) {
    if (size_ > 0) std::memcpy(storage_.get(), bytes.data(), size_);
  }
  leveldb::Slice slice() const {
    return leveldb::Slice(storage_.get() + (size_ == 0 ? 1 : 0), size_);
  }

 private:
  size_t size_;
  std::unique_ptr<char[]> storage_;
};

// KeyMayMatch over an ExactCopy of `filter`.
bool MatchOnExactCopy(const leveldb::FilterPolicy& policy, const std::string& key,
                      const std::string& filter) {
  return policy.KeyMayMatch(key, ExactCopy(filter).slice());
}

TEST(CompactPolicyTest, Names) {
  PolicyPtr compact(NewCompactFilterPolicy(10));
  PolicyPtr migrating(NewMigratingCompactFilterPolicy(10));
  PolicyPtr builtin(leveldb::NewBloomFilterPolicy(10));
  EXPECT_STREQ(compact->Name(), "blockbloom.Compact.v1");
  EXPECT_STREQ(migrating->Name(), builtin->Name());
  EXPECT_STREQ(migrating->Name(), "leveldb.BuiltinBloomFilter2");
}

// The policies write the layout internal::FilterSizing::Compact chooses
// (plugin/policy/filter_sizing.h): version 2 with its R and size, else its
// Bloom filter, byte for byte what the format-level writers produce.
TEST(CompactPolicyTest, WritesTheLayoutFilterSizingChooses) {
  int compact_filters = 0, bloom_filters = 0;
  for (double bpk : {1.0, 2.0, 3.0, 7.5, 10.0, 20.0, 30.0}) {
    PolicyPtr compact(NewCompactFilterPolicy(bpk));
    PolicyPtr migrating(NewMigratingCompactFilterPolicy(bpk));
    const internal::FilterSizing sizing(bpk);
    // 63-65: the last filters hashed on the stack and the first of the
    // per-thread buffer (CompactPolicy::kStackKeys).
    for (size_t n : {0, 1, 2, 3, 8, 10, 35, 63, 64, 65, 100, 300, 1000}) {
      const std::vector<std::string> keys = PresentKeys(n);
      std::vector<uint64_t> hashes;
      for (const std::string& key : keys) hashes.push_back(HashKey(key));
      const internal::CompactLayout layout = sizing.Compact(n);
      std::string want;
      if (layout.version1) {
        compact::AppendFilterV1(hashes, bpk, &want);
      } else if (layout.fingerprint_bits > 0) {
        // R + 1 first where the layout says so (2 seeds), else R.
        compact::BuildInfo info;
        if (layout.first_fingerprint_bits == 0 ||
            !compact::AppendFilterV2(hashes, layout.first_fingerprint_bits, layout.total_bytes,
                                     &want, &info, internal::FilterSizing::kFirstSeeds)) {
          ASSERT_TRUE(compact::AppendFilterV2(hashes, layout.fingerprint_bits, layout.total_bytes,
                                              &want, &info))
              << "bpk=" << bpk << " n=" << n;
        }
        EXPECT_EQ(want.size(), layout.bloom.bytes + compact::kV2TrailerSize);
        ++compact_filters;
      } else {
        blocked::AppendFilter(
            n, layout.bloom.bytes, layout.bloom.num_probes, layout.bloom.geometry,
            [&](size_t i) { return std::string_view(keys[i]); }, &want);
        ++bloom_filters;
      }
      EXPECT_EQ(CreateFilter(*compact, keys), want) << "bpk=" << bpk << " n=" << n;
      EXPECT_EQ(CreateFilter(*migrating, keys), want) << "bpk=" << bpk << " n=" << n;
      // LevelDB appends filters to one string: the appended bytes must be
      // the same as a fresh filter's.
      std::string appended = "prefix";
      std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
      compact->CreateFilter(slices.data(), static_cast<int>(n), &appended);
      EXPECT_EQ(appended, "prefix" + want);
    }
  }
  // Both kinds occur in this sweep (Bloom at 1-3 bits/key of large sets).
  EXPECT_GT(compact_filters, 20);
  EXPECT_GT(bloom_filters, 3);
}

// FilterSizing::For (the policies' process-wide cache) gives what the
// constructor computes, for more bits-per-key values than it keeps (the rest
// are computed each time) and for the values ClampBitsPerKey maps.
TEST(CompactPolicyTest, CachedFilterSizingIsTheComputedOne) {
  std::vector<double> values = {std::nan(""), -1, 0, 0.5, 1e9, 64, 65};
  for (int i = 0; i < 2 * static_cast<int>(internal::FilterSizing::kCachedSizings); ++i) {
    values.push_back(1 + i * 0.37);
  }
  // One object per cached value, shared by every policy of it.
  EXPECT_EQ(internal::FilterSizing::For(10).get(), internal::FilterSizing::For(10.0).get());
  for (const double bpk : values) {
    for (int round = 0; round < 2; ++round) {  // the second from the cache
      const std::shared_ptr<const internal::FilterSizing> shared = internal::FilterSizing::For(bpk);
      ASSERT_NE(shared, nullptr);
      const internal::FilterSizing& cached = *shared;
      const internal::FilterSizing computed(bpk);
      ASSERT_EQ(cached.bits_per_key(), computed.bits_per_key()) << bpk;
      for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{7}, uint64_t{64},
                         uint64_t{65}, uint64_t{1000}, uint64_t{70000}}) {
        const internal::BloomLayout a = cached.Bloom(n), b = computed.Bloom(n);
        EXPECT_EQ(a.bytes, b.bytes) << bpk << " " << n;
        EXPECT_EQ(a.num_probes, b.num_probes) << bpk << " " << n;
        EXPECT_EQ(a.geometry, b.geometry) << bpk << " " << n;
        const internal::CompactLayout c = cached.Compact(n), d = computed.Compact(n);
        EXPECT_EQ(c.fingerprint_bits, d.fingerprint_bits) << bpk << " " << n;
        EXPECT_EQ(c.first_fingerprint_bits, d.first_fingerprint_bits) << bpk << " " << n;
        EXPECT_EQ(c.total_bytes, d.total_bytes) << bpk << " " << n;
        EXPECT_EQ(c.version1, d.version1) << bpk << " " << n;
        EXPECT_EQ(c.bloom.bytes, d.bloom.bytes) << bpk << " " << n;
        EXPECT_EQ(c.bloom.num_probes, d.bloom.num_probes) << bpk << " " << n;
        EXPECT_EQ(c.bloom_fpr, d.bloom_fpr) << bpk << " " << n;
      }
    }
  }
}

TEST(CompactPolicyTest, NoFalseNegativesAndEmptySetRejectsEverything) {
  PolicyPtr compact(NewCompactFilterPolicy(10));
  PolicyPtr migrating(NewMigratingCompactFilterPolicy(10));
  for (size_t n : {1, 2, 10, 99, 1000}) {
    const std::vector<std::string> keys = PresentKeys(n);
    const std::string filter = CreateFilter(*compact, keys);
    for (const std::string& key : keys) {
      ASSERT_TRUE(compact->KeyMayMatch(key, filter));
      ASSERT_TRUE(migrating->KeyMayMatch(key, filter));
    }
  }
  const std::string empty = CreateFilter(*compact, {});
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(compact->KeyMayMatch(Key(i), empty));
    EXPECT_FALSE(migrating->KeyMayMatch(Key(i), empty));
  }
}

TEST(CompactPolicyTest, StockLevelDbReadsCompactFiltersAsMayMatch) {
  PolicyPtr migrating(NewMigratingCompactFilterPolicy(10));
  PolicyPtr builtin(leveldb::NewBloomFilterPolicy(10));
  for (size_t n : {0, 10, 1000}) {
    const std::string filter = CreateFilter(*migrating, PresentKeys(n));
    EXPECT_GT(static_cast<uint8_t>(filter.back()), 30);
    EXPECT_NE(static_cast<uint8_t>(filter.back()), 0xBB);  // not the blocked marker
    for (int i = 0; i < 200; ++i) EXPECT_TRUE(builtin->KeyMayMatch(Key(2 * i + 1), filter));
  }
}

TEST(CompactPolicyTest, MigratingAnswersBuiltinAndBlockedFiltersExactly) {
  PolicyPtr migrating(NewMigratingCompactFilterPolicy(10));
  PolicyPtr builtin(leveldb::NewBloomFilterPolicy(10));
  PolicyPtr blocked(NewMigratingFilterPolicy(10));  // writes 0xBB filters
  int builtin_hits = 0;
  for (size_t n : {1, 3, 10, 35, 100, 300, 1000, 5000}) {
    const std::vector<std::string> keys = PresentKeys(n);
    const std::string builtin_filter = CreateFilter(*builtin, keys);
    const std::string blocked_filter = CreateFilter(*blocked, keys);
    ASSERT_LE(static_cast<uint8_t>(builtin_filter.back()), 30);
    for (uint64_t i = 0; i < 2 * n + 4000; ++i) {
      const std::string key = Key(i);
      const bool want = builtin->KeyMayMatch(key, builtin_filter);
      builtin_hits += want;
      ASSERT_EQ(migrating->KeyMayMatch(key, builtin_filter), want) << "n=" << n << " i=" << i;
      ASSERT_EQ(migrating->KeyMayMatch(key, blocked_filter),
                blocked->KeyMayMatch(key, blocked_filter))
          << "n=" << n << " i=" << i;
    }
  }
  EXPECT_GT(builtin_hits, 0);
  // Filters stock LevelDB cannot read (short, or a last byte above 30 that
  // is not a known marker) get stock LevelDB's answer too.
  for (const std::string& odd :
       {std::string(), std::string("x"), std::string(10, '\x7f'), std::string(10, '\x1e')}) {
    for (int i = 0; i < 50; ++i) {
      EXPECT_EQ(migrating->KeyMayMatch(Key(i), odd), builtin->KeyMayMatch(Key(i), odd));
    }
  }
}

// ---- Corrupt and truncated filters: "may match", never a crash. ----

struct Corruption {
  const char* name;
  std::function<void(std::string*)> apply;
};

// Byte i from the end (1 = last).
char& FromEnd(std::string* s, size_t i) { return (*s)[s->size() - i]; }

std::vector<Corruption> CorruptTrailers() {
  // Trailer (from the end): marker, version, check, params, then reverse
  // varints B, W, S (docs/FORMAT.md). For the 100-key golden filter at 10
  // bits/key B = 2 (1 byte), W (2 bytes) and S (2 bytes).
  return {
      // (0 and 1 bytes: "no", as LevelDB; tests/leveldb_policy_test.cc.)
      {"fixed trailer only", [](std::string* s) { *s = s->substr(s->size() - 4); }},
      {"marker 0xBB (blocked)", [](std::string* s) { FromEnd(s, 1) = static_cast<char>(0xBB); }},
      {"marker 0x00", [](std::string* s) { FromEnd(s, 1) = 0; }},
      {"marker 0xFF", [](std::string* s) { FromEnd(s, 1) = static_cast<char>(0xFF); }},
      {"version 0", [](std::string* s) { FromEnd(s, 2) = 0; }},
      {"version 2", [](std::string* s) { FromEnd(s, 2) = 2; }},
      {"version 255", [](std::string* s) { FromEnd(s, 2) = static_cast<char>(255); }},
      {"check byte + 1",
       [](std::string* s) { FromEnd(s, 3) = static_cast<char>(FromEnd(s, 3) + 1); }},
      {"reserved bit 6", [](std::string* s) { FromEnd(s, 4) |= 0x40; }},
      {"reserved bit 7",
       [](std::string* s) { FromEnd(s, 4) = static_cast<char>(FromEnd(s, 4) | 0x80); }},
      {"rice bits 61", [](std::string* s) { FromEnd(s, 4) = 61; }},
      {"rice bits 63", [](std::string* s) { FromEnd(s, 4) = 63; }},
      {"rice bits - 1",
       [](std::string* s) { FromEnd(s, 4) = static_cast<char>(FromEnd(s, 4) - 1); }},
      {"rice bits + 1",
       [](std::string* s) { FromEnd(s, 4) = static_cast<char>(FromEnd(s, 4) + 1); }},
      {"buckets 0", [](std::string* s) { FromEnd(s, 5) = 0; }},
      {"buckets + 1", [](std::string* s) { FromEnd(s, 5) = static_cast<char>(FromEnd(s, 5) + 1); }},
      {"buckets varint unterminated",
       [](std::string* s) { FromEnd(s, 5) |= static_cast<char>(0x80); }},
      {"width low group + 1",
       [](std::string* s) { FromEnd(s, 6) = static_cast<char>(FromEnd(s, 6) + 1); }},
      {"width high group + 1",
       [](std::string* s) { FromEnd(s, 7) = static_cast<char>(FromEnd(s, 7) + 1); }},
      {"stream bits low group + 1",
       [](std::string* s) { FromEnd(s, 8) = static_cast<char>(FromEnd(s, 8) + 1); }},
      {"stream bits high group + 1",
       [](std::string* s) { FromEnd(s, 9) = static_cast<char>(FromEnd(s, 9) + 1); }},
      {"byte appended", [](std::string* s) { s->push_back(static_cast<char>(0xCF)); }},
      {"byte prepended", [](std::string* s) { s->insert(s->begin(), '\0'); }},
      {"first byte removed", [](std::string* s) { s->erase(s->begin()); }},
      {"byte inserted before trailer", [](std::string* s) { s->insert(s->size() - 9, 1, '\x55'); }},
      {"all 0xFF", [](std::string* s) { s->assign(s->size(), static_cast<char>(0xFF)); }},
      {"all 0xCF", [](std::string* s) { s->assign(s->size(), static_cast<char>(0xCF)); }},
      {"doubled", [](std::string* s) { *s += *s; }},
  };
}

// Version 1 (its trailer is the one the table above damages); version 2's
// trailer is tested in CompactPolicyTest.V2TrailerDamage*.
std::string GoldenFilter(const leveldb::FilterPolicy&) { return CreateFilterV1(PresentKeys(100)); }

TEST(CompactPolicyTest, CorruptTrailerTableReadsAsMayMatch) {
  PolicyPtr compact(NewCompactFilterPolicy(10));
  PolicyPtr migrating(NewMigratingCompactFilterPolicy(10));
  const std::string golden = GoldenFilter(*compact);
  {
    // The table's byte positions assume this trailer shape.
    compact::FilterView view;
    ASSERT_TRUE(compact::ParseFilter(golden, &view));
    ASSERT_EQ(view.params.num_buckets, 2u);
    ASSERT_EQ(compact::VarintLength(view.params.bucket_width), 2);
    ASSERT_EQ(compact::VarintLength(view.params.stream_bits), 2);
  }
  for (const Corruption& c : CorruptTrailers()) {
    std::string bad = golden;
    c.apply(&bad);
    SCOPED_TRACE(c.name);
    EXPECT_FALSE(CompactFilter::Deserialize(bad).ok());
    for (int i = 0; i < 400; ++i) {  // present and absent keys alike
      ASSERT_TRUE(MatchOnExactCopy(*compact, Key(i), bad)) << i;
      // The migrating policy hands non-compact markers to the blocked or
      // built-in reader; those may legitimately say "no" to bytes that are
      // valid in their format, but never crash.
      (void)MatchOnExactCopy(*migrating, Key(i), bad);
    }
  }
}

TEST(CompactPolicyTest, EverySingleBitFlipInTheTrailerReadsAsMayMatch) {
  PolicyPtr compact(NewCompactFilterPolicy(10));
  for (size_t n : {10, 100, 1000}) {
    const std::string golden = CreateFilterV1(PresentKeys(n));
    const size_t trailer = std::min<size_t>(golden.size(), 12);  // fixed part + varints
    for (size_t byte = golden.size() - trailer; byte < golden.size(); ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string bad = golden;
        bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
        compact::FilterView view;
        if (!compact::ParseFilter(bad, &view)) {
          for (int i = 0; i < 50; ++i) ASSERT_TRUE(MatchOnExactCopy(*compact, Key(i), bad));
          continue;
        }
        // The flip landed in the index or stream (n = 1000: the trailer is
        // shorter than 12 bytes); those are data, checked below.
        ASSERT_LT(byte, golden.size() - 4) << "n=" << n << " byte " << byte << " bit " << bit;
      }
    }
  }
}

// A version-1 trailer claiming S within 7 of 2^64 stream bits: ceil(S/8)
// computed as (S + 7) / 8 wrapped to 0, so the trailer alone (B = 1), or
// with B - 1 offsets of 64 bits, "accounted for every byte" and parsed. The
// probe then walked its bucket [0, S), reading zeros past the end 57 bits
// at a time for ~2^58 steps: one 24-byte filter hung a Get (and
// Deserialize) for years. Such sizes cannot fit the bytes: "may match".
TEST(CompactPolicyTest, StreamLengthNearTwoToThe64ReadsAsMayMatch) {
  PolicyPtr compact(NewCompactFilterPolicy(10));
  PolicyPtr migrating(NewMigratingCompactFilterPolicy(10));
  for (uint64_t below = 0; below < 8; ++below) {
    for (uint64_t buckets : {1, 2, 3}) {
      compact::Params params;
      params.num_buckets = buckets;
      params.bucket_width = compact::kMaxRange / buckets;
      params.stream_bits = ~uint64_t{0} - below;
      params.rice_bits = 0;
      const std::vector<uint64_t> offsets(buckets - 1, 1);
      std::string bad;
      compact::AppendIndexAndTrailer(params, offsets.data(), &bad);
      SCOPED_TRACE("S = 2^64 - " + std::to_string(below + 1) + ", B = " + std::to_string(buckets));
      compact::FilterView view;
      ASSERT_FALSE(compact::ParseFilter(bad, &view));
      EXPECT_FALSE(CompactFilter::Deserialize(bad).ok());
      for (int i = 0; i < 20; ++i) {
        ASSERT_TRUE(MatchOnExactCopy(*compact, Key(i), bad)) << i;
        ASSERT_TRUE(MatchOnExactCopy(*migrating, Key(i), bad)) << i;
      }
    }
  }
}

TEST(CompactPolicyTest, EveryTruncationReadsAsMayMatch) {
  PolicyPtr compact(NewCompactFilterPolicy(10));
  PolicyPtr migrating(NewMigratingCompactFilterPolicy(10));
  for (size_t n : {0, 1, 10, 100, 1000}) {
    const std::vector<std::string> keys = PresentKeys(n);
    const std::string golden = CreateFilterV1(keys);
    for (size_t len = 0; len < golden.size(); ++len) {
      for (const std::string& cut : {golden.substr(0, len), golden.substr(golden.size() - len)}) {
        // A cut whose new last byte is in version 2's marker range is caught
        // by version 2's 12-bit check (a false acceptance, w.p. 2^-12, would
        // fail the Deserialize expectation below for this fixed key set).
        EXPECT_FALSE(CompactFilter::Deserialize(cut).ok()) << "n=" << n << " len=" << len;
        // One exact copy per cut (one per probe made this test 28 s of the
        // ASan run).
        const ExactCopy exact(cut);
        for (const std::string& key : keys) {
          // Under 2 bytes every policy answers "no", as LevelDB does.
          ASSERT_EQ(compact->KeyMayMatch(key, exact.slice()), len >= 2)
              << "n=" << n << " len=" << len;
        }
        for (int i = 0; i < 20; ++i) (void)migrating->KeyMayMatch(Key(2 * i + 1), exact.slice());
      }
    }
  }
}

TEST(CompactPolicyTest, RandomBitFlipsNeverCrash) {
  // Flips anywhere (stream, index, trailer): a flipped stream bit may change
  // answers, as in any filter (LevelDB's block checksums guard the bytes on
  // disk), but the reader stays inside the bytes and terminates. Run under
  // ASan to make "inside" a checked claim.
  PolicyPtr compact(NewCompactFilterPolicy(10));
  PolicyPtr migrating(NewMigratingCompactFilterPolicy(10));
  SplitMix64 rng(2024);
  int flips_in_trailer = 0;
  for (size_t n : {1, 10, 35, 100, 300, 1000}) {
    const std::vector<std::string> keys = PresentKeys(n);
    const std::string golden = CreateFilterV1(keys);
    for (int trial = 0; trial < 3000; ++trial) {
      std::string bad = golden;
      const int flips = 1 + static_cast<int>(rng.Next() % 8);
      bool trailer_hit = false;
      for (int f = 0; f < flips; ++f) {
        const size_t byte = rng.Next() % bad.size();
        trailer_hit |= byte + 4 >= bad.size();
        bad[byte] = static_cast<char>(bad[byte] ^ (1 << (rng.Next() % 8)));
      }
      (void)CompactFilter::Deserialize(bad);
      for (int q = 0; q < 8; ++q) {
        (void)MatchOnExactCopy(*compact, keys[rng.Next() % n], bad);
        (void)MatchOnExactCopy(*migrating, Key(rng.Next() % 4000), bad);
      }
      const format::FilterKind kind = format::Recognize(bad).kind;
      if (trailer_hit &&
          (kind == format::FilterKind::kUnknown || kind == format::FilterKind::kLevelDbBuiltin)) {
        ++flips_in_trailer;
        for (const std::string& key : keys) ASSERT_TRUE(MatchOnExactCopy(*compact, key, bad));
      }
    }
  }
  EXPECT_GT(flips_in_trailer, 0);
}

TEST(CompactPolicyTest, V2TrailerDamageMostlyReadsAsMayMatch) {
  // Version 2's 3-byte trailer has a 12-bit check of (total size, R, seed):
  // a damaged trailer or a truncated filter whose last byte is still a
  // version-2 marker passes it w.p. 2^-12 (docs/FORMAT.md), so among all
  // damaged copies below (each at most 2^-12 likely to pass; a truncation
  // must also land on a marker, w.p. 32/256) hardly any may be accepted:
  //  * a flip of any of the 12 check bits changes the stored check and not
  //    its inputs: always caught;
  //  * every other single-bit flip of the trailer and every truncation: at
  //    most 3 of the whole run may parse (expected ~1 at 2^-12 per flip of
  //    seed or R and ~2^-15 per truncation); none may crash (ASan).
  // "Caught" means every stored key still reads "may match".
  PolicyPtr compact(NewCompactFilterPolicy(10));
  int damaged = 0, parsed = 0, missed = 0, check_flips = 0;
  for (size_t n : {10, 16, 35, 100, 164}) {
    for (size_t first = 0; first < 40 * n; first += n) {
      const std::vector<std::string> keys = PresentKeys(n, first);
      const std::string golden = CreateFilter(*compact, keys);
      ASSERT_EQ(compact::TrailerVersion(golden), 2);
      ASSERT_GT(golden.size(), compact::kV2TrailerSize);
      const size_t trailer = golden.size() - compact::kV2TrailerSize;
      std::vector<std::string> bad;
      for (size_t byte = trailer; byte < golden.size(); ++byte) {
        for (int bit = 0; bit < 8; ++bit) {
          std::string b = golden;
          b[byte] = static_cast<char>(b[byte] ^ (1 << bit));
          // Byte 0 of the trailer and the top nibble of byte 1: the check.
          if (byte == trailer || (byte == trailer + 1 && bit >= 4)) {
            ++check_flips;
            compact::V2View view;
            ASSERT_FALSE(compact::ParseV2(b, &view))
                << "n=" << n << " byte " << byte << " bit " << bit;
            for (const std::string& key : keys) ASSERT_TRUE(MatchOnExactCopy(*compact, key, b));
            continue;
          }
          bad.push_back(std::move(b));
        }
      }
      for (size_t len = 2; len < golden.size(); ++len) bad.push_back(golden.substr(0, len));
      for (const std::string& b : bad) {
        ++damaged;
        compact::V2View view;
        parsed += compact::TrailerVersion(b) == 2 && compact::ParseV2(b, &view);
        bool all = true;
        for (const std::string& key : keys) all &= MatchOnExactCopy(*compact, key, b);
        missed += !all;
      }
    }
  }
  EXPECT_EQ(check_flips, 5 * 40 * 12);
  EXPECT_GT(damaged, 18000);
  EXPECT_LE(parsed, 3) << "of " << damaged;
  EXPECT_LE(missed, parsed) << "of " << damaged;
}

TEST(CompactPolicyTest, EveryTruncationOfAVersion2FilterReadsAsMayMatch) {
  // Every prefix of at least 2 bytes (under 2 is LevelDB's "empty filter
  // matches nothing" convention) of version-2 filters: "may match" for every
  // stored and absent key alike, Deserialize refuses it, nothing reads
  // outside the bytes (ASan).
  PolicyPtr compact(NewCompactFilterPolicy(10));
  PolicyPtr migrating(NewMigratingCompactFilterPolicy(10));
  for (size_t n : {10, 16, 30, 164, 1000}) {
    const std::vector<std::string> keys = PresentKeys(n);
    const std::string golden = CreateFilter(*compact, keys);
    ASSERT_EQ(compact::TrailerVersion(golden), 2) << "n=" << n;
    for (size_t len = 2; len < golden.size(); ++len) {
      const std::string cut = golden.substr(0, len);
      EXPECT_FALSE(CompactFilter::Deserialize(cut).ok()) << "n=" << n << " len=" << len;
      const ExactCopy exact(cut);
      for (const std::string& key : keys) {
        ASSERT_TRUE(compact->KeyMayMatch(key, exact.slice())) << "n=" << n << " len=" << len;
      }
      for (int i = 0; i < 20; ++i) {
        ASSERT_TRUE(compact->KeyMayMatch(Key(2 * i + 1), exact.slice()))
            << "n=" << n << " len=" << len;
        (void)migrating->KeyMayMatch(Key(2 * i + 1), exact.slice());
      }
    }
  }
}

// ---- LevelDB on disk. ----

// Forwards to a policy and records the exact FPR (E/U) and key count of every
// compact filter it writes, so a test knows what read rate to expect.
class RecordingPolicy : public leveldb::FilterPolicy {
 public:
  explicit RecordingPolicy(const leveldb::FilterPolicy* inner) : inner_(inner) {}
  const char* Name() const override { return inner_->Name(); }
  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    const size_t start = dst->size();
    inner_->CreateFilter(keys, n, dst);
    auto filter = CompactFilter::Deserialize(std::string_view(*dst).substr(start));
    std::lock_guard<std::mutex> lock(mu_);
    if (filter.ok()) {
      weighted_fpr_ += n * filter->expected_fpr();
      keys_ += n;
      ++filters_;
    }
  }
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    return inner_->KeyMayMatch(key, filter);
  }
  double MeanFpr() const {
    std::lock_guard<std::mutex> lock(mu_);
    return keys_ == 0 ? 0 : weighted_fpr_ / keys_;
  }
  double MeanKeysPerFilter() const {
    std::lock_guard<std::mutex> lock(mu_);
    return filters_ == 0 ? 0 : static_cast<double>(keys_) / filters_;
  }

 private:
  std::unique_ptr<const leveldb::FilterPolicy> inner_;
  mutable std::mutex mu_;
  mutable double weighted_fpr_ = 0;
  mutable uint64_t keys_ = 0;
  mutable uint64_t filters_ = 0;
};

class DbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = TestPath("db");
    leveldb::DestroyDB(path_, leveldb::Options());
  }
  void TearDown() override {
    db_.reset();
    leveldb::DestroyDB(path_, leveldb::Options());
  }

  // Opens the DB at path_ with `policy` (nullptr: no filter) and no block
  // cache, so every data block a Get needs is read from the file.
  void Open(const leveldb::FilterPolicy* policy) {
    db_.reset();
    leveldb::Options options;
    options.create_if_missing = true;
    options.env = &env_;
    options.filter_policy = policy;
    options.block_cache = cache_.get();
    options.write_buffer_size = 256 << 10;  // several tables, several levels
    leveldb::DB* db = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(options, path_, &db).ok());
    db_.reset(db);
  }

  // Keys Key(2i) for i in [first, first + count), 100-byte incompressible
  // values: ~35 keys per 4 KB block, one filter per block.
  void Write(uint64_t first, uint64_t count) {
    SplitMix64 rng(first);
    for (uint64_t i = first; i < first + count; ++i) {
      std::string value = Key(i);
      while (value.size() < 100) value.push_back(static_cast<char>(rng.Next()));
      ASSERT_TRUE(db_->Put(leveldb::WriteOptions(), Key(2 * i), value).ok());
    }
  }
  void Compact() { db_->CompactRange(nullptr, nullptr); }

  void ExpectAllFound(uint64_t count) {
    std::string value;
    for (uint64_t i = 0; i < count; ++i) {
      ASSERT_TRUE(db_->Get(leveldb::ReadOptions(), Key(2 * i), &value).ok()) << i;
      ASSERT_EQ(value.substr(0, 16), Key(i));
    }
  }

  // Data-block reads per Get of the absent keys Key(2i + 1), i < count
  // (all inside the key range). Tables are opened by a first pass.
  double AbsentReadsPerGet(uint64_t count) {
    std::string value;
    for (uint64_t i = 0; i < count; ++i) {
      EXPECT_TRUE(db_->Get(leveldb::ReadOptions(), Key(2 * i + 1), &value).IsNotFound());
    }
    env_.ResetReads();
    for (uint64_t i = 0; i < count; ++i)
      (void)db_->Get(leveldb::ReadOptions(), Key(2 * i + 1), &value);
    return static_cast<double>(env_.reads()) / count;
  }

  ReadCountingEnv env_;  // with the block cache off, each read is a data block
  std::unique_ptr<leveldb::Cache> cache_{leveldb::NewLRUCache(0)};  // 0: caching off
  std::string path_;
  // Policies outlive the DB (LevelDB may still call them until it closes in
  // TearDown): tests take theirs from Own().
  const leveldb::FilterPolicy* Own(const leveldb::FilterPolicy* policy) {
    owned_.emplace_back(policy);
    return policy;
  }
  std::vector<PolicyPtr> owned_;
  std::unique_ptr<leveldb::DB> db_;
};

constexpr uint64_t kDbKeys = 40000;

TEST_F(DbTest, AbsentKeyReadsMatchTheCompactFilterFpr) {
  if (testing_build::kUnderSanitizer) {
    GTEST_SKIP() << "statistics only (10 s under ASan): checked by the uninstrumented run";
  }
  // Baseline first: with no filter, every absent Get reads a data block.
  Open(nullptr);
  Write(0, kDbKeys);
  Compact();
  ExpectAllFound(kDbKeys);
  const double no_filter = AbsentReadsPerGet(kDbKeys);
  db_.reset();
  leveldb::DestroyDB(path_, leveldb::Options());

  auto recording = std::make_unique<RecordingPolicy>(NewCompactFilterPolicy(10));
  Open(recording.get());
  Write(0, kDbKeys);
  Compact();
  ExpectAllFound(kDbKeys);
  const double compact_reads = AbsentReadsPerGet(kDbKeys);
  const double expected = recording->MeanFpr();
  db_.reset();

  EXPECT_GT(no_filter, 0.9);
  ASSERT_GT(expected, 0);
  // Within 5 binomial sigmas (+2 reads) of the filters' exact FPR.
  const double expected_reads = expected * kDbKeys;
  EXPECT_NEAR(compact_reads * kDbKeys, expected_reads, 5 * std::sqrt(expected_reads) + 2);
  EXPECT_LT(compact_reads, 0.0035);
}

TEST_F(DbTest, BuiltinDatabaseReopenedWithMigratingCompactPolicy) {
  const leveldb::FilterPolicy* builtin = Own(leveldb::NewBloomFilterPolicy(10));
  const leveldb::FilterPolicy* migrating = Own(NewMigratingCompactFilterPolicy(10));
  Open(builtin);
  Write(0, kDbKeys / 2);
  Compact();
  const double builtin_reads = AbsentReadsPerGet(kDbKeys / 2);

  // Same name, so LevelDB keeps using the built-in filters.
  Open(migrating);
  ExpectAllFound(kDbKeys / 2);
  const double migrated_reads = AbsentReadsPerGet(kDbKeys / 2);
  EXPECT_EQ(migrated_reads, builtin_reads);  // the very same answers
  EXPECT_LT(migrated_reads, 0.03);           // filters in use (no filter: ~1)

  // New tables get compact filters; old and new coexist, then compaction
  // rewrites everything as compact filters.
  Write(kDbKeys / 2, kDbKeys / 2);
  ExpectAllFound(kDbKeys);
  Compact();
  ExpectAllFound(kDbKeys);
  const double compact_reads = AbsentReadsPerGet(kDbKeys);
  EXPECT_LT(compact_reads, 0.0035);
}

TEST_F(DbTest, MigratingCompactDatabaseReopenedWithStockLevelDb) {
  const leveldb::FilterPolicy* migrating = Own(NewMigratingCompactFilterPolicy(10));
  const leveldb::FilterPolicy* builtin = Own(leveldb::NewBloomFilterPolicy(10));
  Open(migrating);
  Write(0, kDbKeys / 2);
  Compact();
  ExpectAllFound(kDbKeys / 2);

  Open(builtin);
  ExpectAllFound(kDbKeys / 2);
  // Stock LevelDB reads the compact filters as "may match" (asserted filter
  // by filter above) and never misses a key. Its read count is not asserted:
  // LevelDB's seek-triggered compactions may rewrite tables meanwhile.

  // Stock LevelDB adds built-in tables; the migrating policy reads both.
  Write(kDbKeys / 2, kDbKeys / 2);
  ExpectAllFound(kDbKeys);
  Open(migrating);
  ExpectAllFound(kDbKeys);
}

}  // namespace
}  // namespace blockbloom
