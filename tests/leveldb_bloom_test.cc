// blockbloom's reader of LevelDB's built-in Bloom filter format
// (format/leveldb_bloom.h) against LevelDB's own BloomFilterPolicy: the same
// answer for every key and every filter, built by LevelDB at many sizes and
// bits/key, then damaged (bit flips, every possible last byte, truncations)
// and random bytes.
#include "format/leveldb_bloom.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "blockbloom/leveldb_filter_policy.h"
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"
#include "test_keys.h"

namespace blockbloom {
namespace {

using testing_keys::SplitMix64;

using PolicyPtr = std::unique_ptr<const leveldb::FilterPolicy>;

std::string Bytes(std::initializer_list<uint8_t> bytes) {
  return std::string(bytes.begin(), bytes.end());
}

// LevelDB's hash at its published values (LevelDB's util/hash_test.cc): bytes
// of 0x80 and above in the tail are taken unsigned.
TEST(LevelDbBloomTest, HashPinnedValues) {
  EXPECT_EQ(format::LevelDbHash("", format::kLevelDbBloomSeed), 0xbc9f1d34u);
  EXPECT_EQ(format::LevelDbHash(Bytes({0x62}), format::kLevelDbBloomSeed), 0xef1345c4u);
  EXPECT_EQ(format::LevelDbHash(Bytes({0xc3, 0x97}), format::kLevelDbBloomSeed), 0x5b663814u);
  EXPECT_EQ(format::LevelDbHash(Bytes({0xe2, 0x99, 0xa5}), format::kLevelDbBloomSeed), 0x323c078fu);
  EXPECT_EQ(format::LevelDbHash(Bytes({0xe1, 0x80, 0xb9, 0x32}), format::kLevelDbBloomSeed),
            0xed21633au);
}

// Keys of every shape a LevelDB filter sees: empty, 1-7 bytes (each hash tail
// length), bytes >= 0x80, text, long, and internal-key-like (user key + an
// 8-byte tag).
std::vector<std::string> MixedKeys(size_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<std::string> keys;
  keys.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string key;
    switch (rng.Next() % 5) {
      case 0:  // short binary, every tail length
        for (size_t len = rng.Next() % 8; key.size() < len;) {
          key.push_back(static_cast<char>(rng.Next()));
        }
        break;
      case 1:  // text
        key = "user:" + std::to_string(rng.Next() % 1000000);
        break;
      case 2:  // long binary
        for (size_t len = 8 + rng.Next() % 600; key.size() < len;) {
          key.push_back(static_cast<char>(rng.Next()));
        }
        break;
      case 3:  // high bytes only
        for (size_t len = 1 + rng.Next() % 12; key.size() < len;) {
          key.push_back(static_cast<char>(0x80 | rng.Next()));
        }
        break;
      default:  // user key + 8-byte sequence/type tag
        key = testing_keys::Key(rng.Next() % 100000);
        for (int b = 0; b < 8; ++b) key.push_back(static_cast<char>(rng.Next()));
        break;
    }
    keys.push_back(std::move(key));
  }
  return keys;
}

std::string BuiltinFilter(const leveldb::FilterPolicy& builtin,
                          const std::vector<std::string>& keys) {
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string filter;
  builtin.CreateFilter(slices.data(), static_cast<int>(slices.size()), &filter);
  return filter;
}

// Counts of the answers compared, so a test can require both kinds.
struct Compared {
  size_t yes = 0;
  size_t no = 0;
};

// Every key's answer from blockbloom's reader equals LevelDB's. The filter
// is copied into an allocation of exactly its size, so a read past its end
// is caught under ASan.
void ExpectSameAnswers(const leveldb::FilterPolicy& builtin, const std::string& filter,
                       const std::vector<std::string>& probes, Compared* compared) {
  const std::unique_ptr<char[]> exact(new char[filter.size() + (filter.empty() ? 1 : 0)]);
  std::copy(filter.begin(), filter.end(), exact.get());
  const std::string_view bytes(exact.get(), filter.size());
  size_t mismatches = 0;
  for (const std::string& key : probes) {
    const bool expected = builtin.KeyMayMatch(key, leveldb::Slice(bytes.data(), bytes.size()));
    const bool actual = format::LevelDbBloomMayMatch(key, bytes);
    if (expected != actual && ++mismatches <= 3) {
      ADD_FAILURE() << "filter of " << filter.size() << " bytes, last byte "
                    << (filter.empty() ? -1 : static_cast<uint8_t>(filter.back())) << ", key of "
                    << key.size() << " bytes: LevelDB " << expected << ", blockbloom " << actual;
    }
    ++(actual ? compared->yes : compared->no);
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(LevelDbBloomTest, SameAnswersAsLevelDbOnItsFilters) {
  const std::vector<std::string> absent = MixedKeys(1500, 0xab5e);
  Compared compared;
  size_t filters = 0;
  for (int bits_per_key : {0, 1, 2, 3, 5, 8, 10, 13, 16, 20, 30, 44, 64}) {
    const PolicyPtr builtin(leveldb::NewBloomFilterPolicy(bits_per_key));
    for (size_t n : {0, 1, 2, 3, 7, 20, 64, 300, 2000}) {
      const std::vector<std::string> keys = MixedKeys(n, 1000 * bits_per_key + n);
      const std::string filter = BuiltinFilter(*builtin, keys);
      std::vector<std::string> probes = keys;
      probes.insert(probes.end(), absent.begin(), absent.end());
      ExpectSameAnswers(*builtin, filter, probes, &compared);
      // Every present key may match (LevelDB's own contract, through ours).
      for (const std::string& key : keys) ASSERT_TRUE(format::LevelDbBloomMayMatch(key, filter));
      ++filters;
    }
  }
  EXPECT_GT(compared.no, compared.yes / 4) << "too few 'no' answers to compare: " << filters;
}

// Damage LevelDB's reader answers in its own way: every last byte (k = 0, k
// up to 30, the k > 30 "may match" range, bytes read as negative chars),
// flipped bits, truncation to every length, and random bytes.
TEST(LevelDbBloomTest, SameAnswersAsLevelDbOnDamagedFilters) {
  const PolicyPtr builtin(leveldb::NewBloomFilterPolicy(10));
  const std::vector<std::string> keys = MixedKeys(200, 7);
  const std::vector<std::string> absent = MixedKeys(300, 8);
  std::vector<std::string> probes(keys.begin(), keys.begin() + 100);
  probes.insert(probes.end(), absent.begin(), absent.end());
  const std::string good = BuiltinFilter(*builtin, keys);
  SplitMix64 rng(99);
  Compared compared;

  for (int last = 0; last < 256; ++last) {
    std::string filter = good;
    filter.back() = static_cast<char>(last);
    ExpectSameAnswers(*builtin, filter, probes, &compared);
  }
  for (int round = 0; round < 200; ++round) {
    std::string filter = good;
    for (int flips = 1 + static_cast<int>(rng.Next() % 16); flips > 0; --flips) {
      const size_t bit = rng.Next() % ((filter.size() - 1) * 8);
      filter[bit / 8] = static_cast<char>(filter[bit / 8] ^ (1 << (bit % 8)));
    }
    ExpectSameAnswers(*builtin, filter, probes, &compared);
  }
  for (size_t size = 0; size <= good.size(); ++size) {
    ExpectSameAnswers(*builtin, good.substr(0, size), probes, &compared);
  }
  for (int round = 0; round < 300; ++round) {
    std::string filter(rng.Next() % 80, '\0');
    for (char& c : filter) c = static_cast<char>(rng.Next());
    if (!filter.empty() && round % 2 == 0) filter.back() = static_cast<char>(rng.Next() % 31);
    ExpectSameAnswers(*builtin, filter, probes, &compared);
  }
  EXPECT_GT(compared.no, 1000u);
  EXPECT_GT(compared.yes, 1000u);
}

// A filter of more than 2^32 bits (from 512 MiB), where every 32-bit
// position is its own remainder: on a sparse mapping (untouched pages read
// as zero), the keys whose k bits are all set and those missing one, each
// against LevelDB's own answer on the same bytes.
TEST(LevelDbBloomTest, SameAnswersAsLevelDbAboveTwoToThe32Bits) {
  constexpr size_t kSize = (size_t{1} << 29) + 2;  // m = 2^32 + 8 bits
  static_assert(sizeof(size_t) >= 8, "a 64-bit host");
  void* p = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) GTEST_SKIP() << "no 512 MiB of address space";
  auto* bytes = static_cast<char*>(p);
  constexpr unsigned kProbes = 6;
  bytes[kSize - 1] = static_cast<char>(kProbes);
  const std::string_view filter(bytes, kSize);
  const PolicyPtr builtin(leveldb::NewBloomFilterPolicy(10));
  const std::vector<std::string> keys = MixedKeys(64, 0x5125);
  const auto set_bit = [&](uint32_t pos, bool on) {
    const char mask = static_cast<char>(1 << (pos % 8));
    bytes[pos / 8] = static_cast<char>(on ? bytes[pos / 8] | mask : bytes[pos / 8] & ~mask);
  };
  // Probe j of a key: bit h + j * delta (mod 2^32), LevelDB's double hashing.
  const auto position = [](const std::string& key, unsigned j) {
    const uint32_t h = format::LevelDbHash(key, format::kLevelDbBloomSeed);
    return h + j * ((h >> 17) | (h << 15));
  };
  for (const std::string& key : keys) {
    for (unsigned j = 0; j < kProbes; ++j) set_bit(position(key, j), true);
  }
  // Odd keys miss probe i % k.
  for (size_t i = 1; i < keys.size(); i += 2) {
    set_bit(position(keys[i], static_cast<unsigned>(i % kProbes)), false);
  }
  size_t yes = 0, no = 0;
  for (const std::string& key : keys) {
    const bool expected = builtin->KeyMayMatch(key, leveldb::Slice(filter.data(), filter.size()));
    EXPECT_EQ(format::LevelDbBloomMayMatch(key, filter), expected) << key;
    ++(expected ? yes : no);
  }
  ::munmap(p, kSize);
  // Most odd keys miss a bit (another key may have set it again).
  EXPECT_GE(yes, keys.size() / 2);
  EXPECT_GT(no, keys.size() / 4);
}

// The migrating policy reads built-in filters with this reader: LevelDB's
// answers through the policy, with no LevelDB policy behind it.
TEST(LevelDbBloomTest, MigratingPolicyAnswersAsLevelDb) {
  const PolicyPtr migrating(NewMigratingFilterPolicy(10));
  const std::vector<std::string> absent = MixedKeys(1000, 21);
  Compared compared;
  for (int bits_per_key : {4, 10, 23}) {
    const PolicyPtr builtin(leveldb::NewBloomFilterPolicy(bits_per_key));
    const std::vector<std::string> keys = MixedKeys(500, 20 + bits_per_key);
    const std::string filter = BuiltinFilter(*builtin, keys);
    for (const std::string& key : absent) {
      const bool expected = builtin->KeyMayMatch(key, filter);
      ASSERT_EQ(migrating->KeyMayMatch(key, filter), expected);
      ++(expected ? compared.yes : compared.no);
    }
  }
  EXPECT_GT(compared.no, 2000u);
  EXPECT_GT(compared.yes, 0u);
}

}  // namespace
}  // namespace blockbloom
