// Pins format version 1 of the blocked filter (docs/FORMAT.md). A failure in
// a golden test means the bytes of a filter changed: that is a new format
// version, a new policy Name(), and a new section in docs/FORMAT.md.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "blockbloom/hash.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "blocked/format.h"
#include "leveldb/slice.h"
#include "test_keys.h"

namespace blockbloom {
namespace {

using testing_keys::Key;

std::string BuildPolicyFilter(const leveldb::FilterPolicy& policy, int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back(Key(2 * i));
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string filter;
  policy.CreateFilter(slices.data(), n, &filter);
  return filter;
}

// The first `count` absent keys Key(2i+1) that the filter wrongly admits.
std::vector<int> FirstFalsePositives(const leveldb::FilterPolicy& policy,
                                     const std::string& filter, int count) {
  std::vector<int> found;
  for (int i = 0; static_cast<int>(found.size()) < count && i < 10000000; ++i) {
    if (policy.KeyMayMatch(Key(2 * i + 1), filter)) found.push_back(2 * i + 1);
  }
  return found;
}

TEST(BlockedFormatTest, GoldenFilterBytesAndFalsePositives) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(NewBlockedBloomFilterPolicy(10));
  EXPECT_STREQ(policy->Name(), "blockbloom.BlockedBloom.v1");
  struct Golden {
    int n;
    size_t size;
    uint64_t bytes_hash;
    std::vector<int> first_false_positives;
  };
  const Golden kGolden[] = {
      {0, 3, 0xed9b519dfdf75a15ull, {}},
      {1, 5, 0x9837b13bc3917ebaull,
       {4373, 21975, 22295, 27995, 36545, 40845, 47835, 65729, 81643, 91571}},
      {100, 128, 0xba4532821b80575full, {57, 469, 639, 779, 1299, 1421, 1811, 1949, 2037, 2089}},
      {1000, 1253, 0x836ae80c918a6065ull,
       {125, 217, 571, 655, 783, 1215, 1255, 1705, 2293, 2373}},
  };
  for (const Golden& g : kGolden) {
    const std::string filter = BuildPolicyFilter(*policy, g.n);
    SCOPED_TRACE("n=" + std::to_string(g.n));
    EXPECT_EQ(filter.size(), g.size);
    EXPECT_EQ(HashKey(filter), g.bytes_hash) << std::hex << HashKey(filter);
    const std::vector<int> fps = FirstFalsePositives(*policy, filter, 10);
    std::string printed;
    for (int fp : fps) printed += std::to_string(fp) + ", ";
    EXPECT_EQ(fps, g.first_false_positives) << printed;
    if (::testing::Test::HasFailure()) {
      std::printf("actual: {%d, %zu, 0x%016llxull, {%s}},\n", g.n, filter.size(),
                  static_cast<unsigned long long>(HashKey(filter)), printed.c_str());
    }
  }
}

TEST(BlockedFormatTest, TrailerLayout) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(NewBlockedBloomFilterPolicy(10));
  const std::string filter = BuildPolicyFilter(*policy, 50);
  ASSERT_EQ(filter.size(), 63u + blocked::kTrailerSize);  // ceil(50 * 10 / 8) = 63
  const auto byte = [&](size_t from_end) {
    return static_cast<uint8_t>(filter[filter.size() - from_end]);
  };
  EXPECT_EQ(byte(1), 0xBB);  // marker, > 30 so stock LevelDB answers "may match"
  EXPECT_EQ(byte(2), 0x13);  // version 1 (high nibble), geometry 3 = 512-bit blocks
  EXPECT_EQ(byte(3), 7);     // reserved bits 0, k = 7 at 10 bits/key
}

TEST(BlockedFormatTest, CorruptTrailersMayMatchEverything) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(NewBlockedBloomFilterPolicy(10));
  const std::string good = BuildPolicyFilter(*policy, 200);
  ASSERT_FALSE(policy->KeyMayMatch("definitely-absent-key", good));  // see below
  struct Corruption {
    const char* what;
    size_t from_end;
    uint8_t value;
  };
  const Corruption kTable[] = {
      {"foreign marker", 1, 0x07},       {"marker 0", 1, 0x00},
      {"future version", 2, 0x23},       {"version 0", 2, 0x03},
      {"geometry 2 (256-bit blocks)", 2, 0x12}, {"geometry 4", 2, 0x14},
      {"k = 0", 3, 0},                   {"k = 17", 3, 17},
      {"k = 31", 3, 31},                 {"reserved bit 5 set", 3, 0x20 | 7},
      {"reserved bit 7 set", 3, 0x80 | 7}, {"all ones", 3, 0xff},
  };
  for (const Corruption& c : kTable) {
    std::string bad = good;
    bad[bad.size() - c.from_end] = static_cast<char>(c.value);
    EXPECT_TRUE(policy->KeyMayMatch("definitely-absent-key", bad)) << c.what;
  }
}

TEST(BlockedFormatTest, EveryTruncationIsSafe) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(NewBlockedBloomFilterPolicy(10));
  const std::string good = BuildPolicyFilter(*policy, 300);
  for (size_t len = 0; len < good.size(); ++len) {
    // Copy into an exact-size heap buffer so ASan flags any over-read.
    auto exact = std::make_unique<char[]>(len == 0 ? 1 : len);
    std::copy(good.data(), good.data() + len, exact.get());
    const leveldb::Slice truncated(exact.get(), len);
    // Truncation removes the trailer: the rest is filter bits, never a valid
    // trailer for this key set, so it must read as "may match".
    EXPECT_TRUE(policy->KeyMayMatch("definitely-absent-key", truncated)) << len;
    for (int i = 0; i < 20; ++i) policy->KeyMayMatch(Key(2 * i), truncated);
  }
}

TEST(BlockedFormatTest, EmptyKeySetRejectsEverything) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(NewBlockedBloomFilterPolicy(10));
  const std::string empty = BuildPolicyFilter(*policy, 0);
  EXPECT_EQ(empty.size(), blocked::kTrailerSize);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(policy->KeyMayMatch(Key(i), empty));
}

}  // namespace
}  // namespace blockbloom
