// FilteredDB's persisted index from bytes, no database (and no file system but
// one test's scratch directory):
// filtered_db::EncodeIndexFile / ParseIndexFile (the BLOCKBLOOM-INDEX framing)
// and KeyIndex::Serialize / Deserialize (the payload), on valid files and on
// damaged ones that still carry a correct checksum (what
// fuzz/index_file_bytes_fuzz.cc feeds them at random). Layouts:
// docs/FORMAT.md, "FilteredDB index file". ListDbDir, which decides whether
// a saved index may be trusted, lists that scratch directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "blockbloom/hash.h"
#include "common/coding.h"
#include "filtered_db/index_file.h"
#include "filtered_db/key_index.h"
#include "test_keys.h"
#include "test_paths.h"

namespace blockbloom {
namespace {

using filtered_db::DirEntry;
using filtered_db::EncodeIndexFile;
using filtered_db::ParseIndexFile;
using testing_keys::SplitMix64;

std::vector<DirEntry> SampleListing() {
  return {{"000005.ldb", 1234, 2049, 77, 1700000000123456789, 0},
          {"CURRENT", 16, 2049, 78, -1, 0x0123456789ABCDEFull}};
}

// The checksum made right again after an edit.
void Rechecksum(std::string* file) {
  const size_t body = file->size() - 8;
  internal::EncodeFixed64(&(*file)[body], HashBytes(file->data(), body));
}

TEST(FilteredDBIndexFileTest, EncodeThenParseRoundTripsListingAndPayload) {
  const std::string payload = "any payload bytes";
  const std::string file = EncodeIndexFile(SampleListing(), payload);
  auto parsed = ParseIndexFile(file);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->listing, SampleListing());
  EXPECT_EQ(parsed->payload, payload);
  EXPECT_EQ(EncodeIndexFile(parsed->listing, parsed->payload), file);
  // The smallest file: no listing, no payload.
  const std::string empty = EncodeIndexFile({}, "");
  EXPECT_EQ(empty.size(), 40u);
  auto parsed_empty = ParseIndexFile(empty);
  ASSERT_TRUE(parsed_empty.ok()) << parsed_empty.status();
  EXPECT_TRUE(parsed_empty->listing.empty());
  EXPECT_TRUE(parsed_empty->payload.empty());
}

TEST(FilteredDBIndexFileTest, EveryTruncationAndBitFlipIsDataLoss) {
  const std::string file = EncodeIndexFile(SampleListing(), "payload");
  for (size_t len = 0; len < file.size(); ++len) {
    EXPECT_TRUE(absl::IsDataLoss(ParseIndexFile(file.substr(0, len)).status())) << len;
  }
  EXPECT_TRUE(absl::IsDataLoss(ParseIndexFile(file + "x").status()));
  for (size_t bit = 0; bit < 8 * file.size(); ++bit) {
    std::string bad = file;
    bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    EXPECT_TRUE(absl::IsDataLoss(ParseIndexFile(bad).status())) << bit;
  }
}

// ListDbDir's listing, on a scratch directory: the content hash covers
// exactly the files LevelDB rewrites or appends to in place (CURRENT,
// MANIFEST-*, *.log), so a same-size rewrite that keeps inode and mtime
// still changes the listing; tables (immutable) and LOCK, LOG, LOG.old and
// the index files themselves are left out or unhashed as documented.
TEST(FilteredDBIndexFileTest, ListDbDirHashesExactlyTheRewrittenFiles) {
  const std::string dir = TestDir("db");
  const auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir + "/" + name, std::ios::binary) << content;
  };
  const std::map<std::string, std::string> files = {
      {"000004.log", "log bytes"},
      {"000005.ldb", "table bytes"},
      {"BLOCKBLOOM-INDEX", "index"},
      {"BLOCKBLOOM-INDEX.tmp", "tmp"},
      {"CURRENT", "MANIFEST-000002\n"},
      {"LOCK", ""},
      {"LOG", "info"},
      {"LOG.old", "old info"},
      {"MANIFEST-000002", "edits"},
  };
  for (const auto& [name, content] : files) write(name, content);
  auto listing = filtered_db::ListDbDir(dir);
  ASSERT_TRUE(listing.ok()) << listing.status();
  std::vector<std::string> names;
  for (const DirEntry& e : *listing) names.push_back(e.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"000004.log", "000005.ldb", "CURRENT", "MANIFEST-000002"}));
  for (const DirEntry& e : *listing) {
    const std::string& content = files.at(e.name);
    EXPECT_EQ(e.size_bytes, content.size()) << e.name;
    const uint64_t want = e.name == "000005.ldb" ? 0 : HashBytes(content.data(), content.size());
    EXPECT_EQ(e.content_hash, want) << e.name;
  }
  for (const auto& [name, content] : files) std::remove((dir + "/" + name).c_str());
  ::rmdir(dir.c_str());
}

// Offsets in EncodeIndexFile({}, payload): magic 0, version 8, flags 12,
// count 16, payload length 24, payload 32.
TEST(FilteredDBIndexFileTest, ChecksummedButInconsistentFramingIsDataLoss) {
  const std::string good = EncodeIndexFile({}, "payload");
  ASSERT_TRUE(ParseIndexFile(good).ok());
  const auto damaged = [&](size_t pos, uint64_t value, int bytes) {
    std::string bad = good;
    for (int i = 0; i < bytes; ++i) bad[pos + i] = static_cast<char>(value >> (8 * i));
    Rechecksum(&bad);
    return ParseIndexFile(bad).status();
  };
  EXPECT_TRUE(absl::IsDataLoss(damaged(0, 'X', 1)));  // magic
  // Version 1 (the older layout: 10-bit front filter, power-of-two d-left)
  // and any unknown version are rejected: Open then rebuilds by scan.
  EXPECT_TRUE(absl::IsDataLoss(damaged(8, 1, 4)));
  EXPECT_TRUE(absl::IsDataLoss(damaged(8, filtered_db::kIndexFileVersion + 1, 4)));
  EXPECT_TRUE(absl::IsDataLoss(damaged(12, 1, 4)));  // flags
  // Entry counts beyond the bytes present: rejected without reserving room
  // for them (a UINT64_MAX count must not allocate).
  EXPECT_TRUE(absl::IsDataLoss(damaged(16, 1, 8)));
  EXPECT_TRUE(absl::IsDataLoss(damaged(16, UINT64_MAX, 8)));
  // Payload lengths past the end, or short of it (bytes left over).
  EXPECT_TRUE(absl::IsDataLoss(damaged(24, UINT64_MAX, 8)));
  EXPECT_TRUE(absl::IsDataLoss(damaged(24, 8, 8)));
  EXPECT_TRUE(absl::IsDataLoss(damaged(24, 6, 8)));
  EXPECT_TRUE(damaged(24, 7, 8).ok());  // the check itself: the true length

  // A name length past the end.
  const std::string listed = EncodeIndexFile({{"CURRENT", 16, 1, 2, 3, 4}}, "");
  std::string bad = listed;
  internal::EncodeFixed64(&bad[24], 0);
  bad[24] = '\xff';
  bad[25] = '\xff';
  bad[26] = '\xff';
  bad[27] = '\xff';
  Rechecksum(&bad);
  EXPECT_TRUE(absl::IsDataLoss(ParseIndexFile(bad).status()));
}

// An index of `kind` holding keys 0..n-1 (by hash), serialized.
std::string IndexPayload(IndexKind kind, uint64_t capacity, int n) {
  auto index = KeyIndex::Create(kind, capacity, 0.01, KeyIndex::NewSeed());
  EXPECT_TRUE(index.ok()) << index.status();
  if (!index.ok()) return "";
  SplitMix64 rng(7);
  for (int i = 0; i < n; ++i) EXPECT_TRUE((*index)->Insert(rng.Next()).ok());
  std::string out;
  (*index)->Serialize(&out);
  return out;
}

class FilteredDBKeyIndexPayloadTest : public ::testing::TestWithParam<IndexKind> {};

TEST_P(FilteredDBKeyIndexPayloadTest, RoundTripsByteExactWithTheSameAnswers) {
  const std::string payload = IndexPayload(GetParam(), 100, 60);
  auto index = KeyIndex::Deserialize(payload);
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ((*index)->kind(), GetParam());
  EXPECT_EQ((*index)->keys(), 60u);
  EXPECT_EQ((*index)->inserted_since_build(), 60u);
  std::string again;
  (*index)->Serialize(&again);
  EXPECT_EQ(again, payload);
  SplitMix64 rng(7);
  for (int i = 0; i < 60; ++i) EXPECT_TRUE((*index)->MayContain(rng.Next())) << i;
}

// Each index draws its own seed, and its payload keeps it (the last 8
// bytes): the reloaded index hashes keys as the saved one did.
TEST_P(FilteredDBKeyIndexPayloadTest, EachIndexHasItsOwnSeedAndThePayloadKeepsIt) {
  auto a = KeyIndex::Create(GetParam(), 100, 0.01, KeyIndex::NewSeed());
  auto b = KeyIndex::Create(GetParam(), 100, 0.01, KeyIndex::NewSeed());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE((*a)->seed(), (*b)->seed());  // random: equal w.p. 2^-64
  std::string payload;
  (*a)->Serialize(&payload);
  EXPECT_EQ(internal::DecodeFixed64(payload.data() + payload.size() - 8), (*a)->seed());
  auto reloaded = KeyIndex::Deserialize(payload);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_EQ((*reloaded)->seed(), (*a)->seed());
  EXPECT_NE(KeyIndex::HashOf("key", (*a)->seed()), KeyIndex::HashOf("key", (*b)->seed()));
  EXPECT_EQ(KeyIndex::HashOf("key", (*reloaded)->seed()), KeyIndex::HashOf("key", (*a)->seed()));
}

// The payload's kind byte is the format's (docs/FORMAT.md: 0 counting,
// 1 d-left), whatever IndexKind's values are (those follow blockbloom/c.h).
TEST_P(FilteredDBKeyIndexPayloadTest, KindByteIsTheFormats) {
  const std::string payload = IndexPayload(GetParam(), 100, 10);
  ASSERT_GT(payload.size(), 8u);  // u64 inner length, then the inner payload's u8 kind
  EXPECT_EQ(payload[8], GetParam() == IndexKind::kCounting ? 0 : 1);
}

// Every declared size is checked against the bytes before anything is
// allocated for it; a mismatch is InvalidArgument, never a crash.
TEST_P(FilteredDBKeyIndexPayloadTest, SizesNotMatchingTheBytesAreRejected) {
  const std::string good = IndexPayload(GetParam(), 100, 10);
  ASSERT_TRUE(KeyIndex::Deserialize(good).ok());
  const uint64_t inner_len = internal::DecodeFixed64(good.data());
  const size_t front = 8 + inner_len;  // the front filter's block count
  const auto with = [&](size_t pos, uint64_t value, int bytes) {
    std::string bad = good;
    for (int i = 0; i < bytes; ++i) bad[pos + i] = static_cast<char>(value >> (8 * i));
    return KeyIndex::Deserialize(bad).status();
  };
  EXPECT_FALSE(with(0, UINT64_MAX, 8).ok());      // inner length past the end
  EXPECT_FALSE(with(0, inner_len - 1, 8).ok());   // inner length short
  EXPECT_FALSE(with(8, 2, 1).ok());               // unknown kind
  EXPECT_FALSE(with(front, UINT64_MAX, 8).ok());  // front blocks past the end
  EXPECT_FALSE(with(front, uint64_t{1} << 40, 8).ok());
  EXPECT_FALSE(with(front, 0, 8).ok());
  if (GetParam() == IndexKind::kCounting) {
    // u8 kind, u64 capacity, u64 keys, then u64 blocks at inner offset 17.
    EXPECT_FALSE(with(8 + 17, uint64_t{1} << 34, 8).ok());
    EXPECT_FALSE(with(8 + 17, UINT64_MAX, 8).ok());
    EXPECT_FALSE(with(8 + 25, 0, 1).ok());   // probes
    EXPECT_FALSE(with(8 + 25, 17, 1).ok());  // probes
    EXPECT_FALSE(with(8 + 1, 0, 8).ok());    // capacity 0
  } else {
    // u8 log2 buckets at inner offset 17.
    EXPECT_FALSE(with(8 + 17, 32, 1).ok());
    EXPECT_FALSE(with(8 + 17, 255, 1).ok());
    EXPECT_FALSE(with(8 + 1, 12345, 8).ok());  // capacity not the geometry's
  }
  EXPECT_FALSE(KeyIndex::Deserialize(good + "x").ok());
  for (size_t len = 0; len < good.size(); ++len) {
    EXPECT_FALSE(KeyIndex::Deserialize(std::string_view(good).substr(0, len)).ok()) << len;
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, FilteredDBKeyIndexPayloadTest,
                         ::testing::Values(IndexKind::kCounting, IndexKind::kDleft),
                         [](const ::testing::TestParamInfo<IndexKind>& info) {
                           return info.param == IndexKind::kCounting ? "Counting" : "Dleft";
                         });

// The sizing rule: for every live-key count, the index built for it holds
// more keys than that and, for d-left, fits the budget of 4 bytes per live
// key plus 256 KiB (the bound docs/FILTERED_DB.md states), with the default
// hint and with a small one; the counting kind fits it while the budget's
// fixed part covers it.
TEST(FilteredDBKeyIndexSizingTest, EveryIndexHoldsItsKeysWithinTheBudget) {
  std::vector<uint64_t> counts = {0, 1, 2, 7, 100, 1000, 4095, 65536, 100000, 777777, 1000000};
  for (uint64_t n = 1; n < (uint64_t{1} << 34); n = n * 5 / 4 + 1) counts.push_back(n);
  for (IndexKind kind : {IndexKind::kDleft, IndexKind::kCounting}) {
    for (uint64_t hint : {uint64_t{1000000}, uint64_t{16}}) {
      for (uint64_t n : counts) {
        SCOPED_TRACE(testing::Message()
                     << static_cast<int>(kind) << " hint " << hint << " n " << n);
        const uint64_t capacity = KeyIndex::CapacityFor(kind, n, hint, 0.002);
        EXPECT_GT(capacity, n);
        if (n > 2000000) continue;  // not built: tens of MB
        auto index = KeyIndex::Create(kind, capacity, 0.002, KeyIndex::NewSeed());
        ASSERT_TRUE(index.ok()) << index.status();
        EXPECT_GE((*index)->capacity(), capacity);
        // One size step (1/8), or one bucket row of keys at the smallest
        // sizes: 30 with 0.2%'s 12-bit cells (24 for the counting kind's).
        EXPECT_LE((*index)->capacity(), capacity + capacity / 8 + 30);
        if (kind == IndexKind::kDleft || n < 50000) {
          EXPECT_LE((*index)->memory_bytes(), KeyIndex::BudgetBytes(n));
        }
        if (hint == 16) EXPECT_LE((*index)->capacity(), std::max<uint64_t>(4 * n, 1024) + 30);
      }
    }
  }
}

// Any target_fpr keeps the d-left index's budget: a target below the lowest
// the budget allows (KeyIndex::kMinTargetFpr, 16-bit cells at their design
// load) is clamped to it, so 0, a negative value, 1e-12 or -inf size it
// exactly as kMinTargetFpr does, within 4 bytes per live key plus 256 KiB.
// The counting kind takes any target, and is bounded by its counters per
// key (at most 64 of 4 bits, 32.75 bytes per key with the front filter).
TEST(FilteredDBKeyIndexSizingTest, ATargetBelowTheBudgetsReachIsClampedToIt) {
  EXPECT_NEAR(KeyIndex::kMinTargetFpr, 8.42e-5, 0.01e-5);
  for (uint64_t n : {uint64_t{0}, uint64_t{2}, uint64_t{1000}, uint64_t{100000}}) {
    for (double fpr : {0.0, -1.0, 1e-12, 1e-6, -HUGE_VAL, KeyIndex::kMinTargetFpr}) {
      SCOPED_TRACE(testing::Message() << "n " << n << " target " << fpr);
      const uint64_t dleft = KeyIndex::CapacityFor(IndexKind::kDleft, n, 1000000, fpr);
      EXPECT_EQ(dleft,
                KeyIndex::CapacityFor(IndexKind::kDleft, n, 1000000, KeyIndex::kMinTargetFpr));
      auto index = KeyIndex::Create(IndexKind::kDleft, dleft, fpr, KeyIndex::NewSeed());
      ASSERT_TRUE(index.ok()) << index.status();
      EXPECT_GT((*index)->capacity(), n);
      EXPECT_LE((*index)->memory_bytes(), KeyIndex::BudgetBytes(n));
      const uint64_t counting = KeyIndex::CapacityFor(IndexKind::kCounting, n, 1000000, fpr);
      auto counted = KeyIndex::Create(IndexKind::kCounting, counting, fpr, KeyIndex::NewSeed());
      ASSERT_TRUE(counted.ok()) << counted.status();
      EXPECT_GT((*counted)->capacity(), n);
      EXPECT_LE((*counted)->memory_bytes(),
                std::max(KeyIndex::BudgetBytes(n), 33 * (*counted)->capacity() + 4096));
    }
  }
}

}  // namespace
}  // namespace blockbloom
