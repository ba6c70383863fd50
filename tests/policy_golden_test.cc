// The bytes the LevelDB policies write, pinned: every filter a table of
// theirs holds is read back by every later version of blockbloom, so a
// change to any byte the policies write for the same keys (a probe
// multiplier, a seed rule, a sizing rule, the k rule) is a change of format,
// whatever the readers' own tests say. The format tests pin filters built
// through the formats' writers at one k and seed 0; these pin what
// CreateFilter writes, across the bits per key and key counts that reach
// every layout: flat filters of 8 bytes to over 512 with k from 1 to 30
// (LevelDB's 64-bit floor gives 1-5 keys their own k), 512-bit-block
// filters (version 1: 70,000 keys at 30 and 64 bits/key), compact version 2
// with R from 1 to 21 and seeds 0 to 5, compact version 1 (over 65,536
// keys) and the compact policies' Bloom filters. The test checks that the
// sweep still reaches each of these, so a sizing change cannot quietly
// narrow what is pinned. Every target the CPU runs writes the same bytes.
//
// These bytes were checked, filter by filter, against a decoder written
// from docs/FORMAT.md alone (the byte layouts, the hash, the k and sizing
// rules, the version-2 system solved with every free slot 0 at the first
// seed that solves it).
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/filter_format.h"
#include "blockbloom/hash.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "compact/format.h"  // ParseV2: the seed of a version-2 filter
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"
#include "targets.h"

namespace blockbloom {
namespace {

constexpr double kBitsPerKey[] = {1, 2, 3, 4, 7.5, 10, 16, 20, 30, 40, 64};
constexpr int kKeyCounts[] = {1, 2, 3, 4, 5, 6, 8, 12, 16, 30, 64, 100, 300, 1000, 5000, 70000};

// Keys of their own, so that no other test's keys can move the goldens.
std::vector<std::string> GoldenKeys(int n) {
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) keys.push_back("golden-key-" + std::to_string(i));
  return keys;
}

std::string Create(const leveldb::FilterPolicy& policy, const std::vector<std::string>& keys) {
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string out;
  policy.CreateFilter(slices.data(), static_cast<int>(slices.size()), &out);
  return out;
}

// What the sweep reaches, for the coverage checks.
struct Reach {
  std::set<int> flat_probes;
  std::set<int> seeds;
  std::set<int> fingerprint_bits;
  bool flat_8_bytes = false, flat_over_512 = false, blocked_v1 = false, compact_v1 = false,
       compact_bloom = false;
};

// HashKey (XXH3-64) of every filter the policy writes for the key counts at
// this bits per key, each filter's 8-byte size and bytes in turn.
uint64_t SweepHash(bool compact, double bits_per_key, Reach* reach) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(
      compact ? NewCompactFilterPolicy(bits_per_key) : NewBlockedBloomFilterPolicy(bits_per_key));
  std::unique_ptr<const leveldb::FilterPolicy> migrating(
      compact ? NewMigratingCompactFilterPolicy(bits_per_key)
              : NewMigratingFilterPolicy(bits_per_key));
  std::string all;
  for (const int n : kKeyCounts) {
    const std::vector<std::string> keys = GoldenKeys(n);
    const std::string filter = Create(*policy, keys);
    // The migrating policies write what the others do (only their name,
    // which LevelDB keeps apart from the bytes, differs).
    EXPECT_EQ(Create(*migrating, keys), filter) << "n=" << n;
    const uint64_t size = filter.size();
    for (int b = 0; b < 8; ++b) all.push_back(static_cast<char>(size >> (8 * b)));
    all += filter;
    const FilterDescription d = DescribeFilter(filter);
    if (d.encoding == FilterEncoding::kBlocked) {
      if (compact) reach->compact_bloom = true;
      if (d.single_block) {
        reach->flat_probes.insert(d.num_probes);
        reach->flat_8_bytes |= d.bits_bytes == 8;
        reach->flat_over_512 |= d.bits_bytes > 512;
      } else {
        reach->blocked_v1 = true;
      }
    } else if (d.encoding == FilterEncoding::kCompact && d.version == 1) {
      reach->compact_v1 = true;
    } else if (d.encoding == FilterEncoding::kCompact) {
      compact::V2View view;
      EXPECT_TRUE(compact::ParseV2(filter, &view)) << "n=" << n;
      reach->seeds.insert(view.seed);
      reach->fingerprint_bits.insert(view.fingerprint_bits);
    } else {
      ADD_FAILURE() << "n=" << n << ": a filter no blockbloom reader recognises";
    }
  }
  return HashKey(all);
}

struct Golden {
  double bits_per_key;
  uint64_t blocked;  // SweepHash(false, bits_per_key)
  uint64_t compact;  // SweepHash(true, bits_per_key)
};
// Changing one of these is changing the on-disk format: a new version
// (docs/FORMAT.md), never an update of the numbers.
constexpr Golden kGolden[] = {
    {1, 0xe94f14580d57a54full, 0xedfc6e7e8e18e03dull},
    {2, 0xf7d0b1c5dccf6d17ull, 0x07401a96d7ca7212ull},
    {3, 0xdb3d17f148cf2f56ull, 0xab68382ac558ee28ull},
    {4, 0x716ae8657b26b6fcull, 0x6f4c143c6a666fb6ull},
    {7.5, 0x7a4c5f4ec62ec71bull, 0x73f48d7af0516bc5ull},
    {10, 0xc756b85b729a540aull, 0xcaec38c3c23a0e90ull},
    {16, 0xcbc46b28bc36348bull, 0xc8cb3e9bf83a1644ull},
    {20, 0x78e57487daab8289ull, 0x3b3c9b8d0936de02ull},
    {30, 0xdb1dc1df9448b85bull, 0xa98951725a5e8277ull},
    // From here the compact policy's filters are all Bloom filters (their
    // FPR is below 2^-20), the blocked policy's bytes.
    {40, 0x92ec79a9e41692a6ull, 0x92ec79a9e41692a6ull},
    {64, 0x33c9877c6c24d767ull, 0x33c9877c6c24d767ull},
};

struct RestoreTarget {
  ~RestoreTarget() { simd::ForceTargetForTesting(0); }
};

TEST(PolicyGoldenTest, EveryPolicyWritesThePinnedBytesOnEveryTarget) {
  RestoreTarget restore;
  static_assert(sizeof(kGolden) / sizeof(kGolden[0]) == sizeof(kBitsPerKey) / sizeof(double),
                "a golden per bits per key");
  for (const int64_t target : simd::SupportedTargets()) {
    ASSERT_TRUE(simd::ForceTargetForTesting(target));
    SCOPED_TRACE(simd::TargetName(target));
    Reach reach;
    std::string actual;
    for (size_t i = 0; i < sizeof(kBitsPerKey) / sizeof(double); ++i) {
      const double bpk = kBitsPerKey[i];
      const uint64_t blocked = SweepHash(false, bpk, &reach);
      const uint64_t compact = SweepHash(true, bpk, &reach);
      EXPECT_EQ(kGolden[i].bits_per_key, bpk);
      EXPECT_EQ(blocked, kGolden[i].blocked) << "blocked policy, " << bpk << " bits/key";
      EXPECT_EQ(compact, kGolden[i].compact) << "compact policy, " << bpk << " bits/key";
      char line[96];
      std::snprintf(line, sizeof(line), "    {%g, 0x%016" PRIx64 "ull, 0x%016" PRIx64 "ull},\n",
                    bpk, blocked, compact);
      actual += line;
    }
    if (HasFailure()) ADD_FAILURE() << "written now:\n" << actual;
    // The sweep reaches every layout it is meant to pin.
    for (int k : {1, 2, 6, 7, 9, 11, 12, 14, 20, 27, 30}) {
      EXPECT_EQ(reach.flat_probes.count(k), 1u) << "no flat filter with k = " << k;
    }
    EXPECT_GE(reach.flat_probes.size(), 16u);
    EXPECT_GE(reach.seeds.size(), 6u);
    EXPECT_GE(reach.fingerprint_bits.size(), 15u);
    EXPECT_EQ(*reach.fingerprint_bits.begin(), 1);
    EXPECT_GE(*reach.fingerprint_bits.rbegin(), 21);
    EXPECT_TRUE(reach.flat_8_bytes);
    EXPECT_TRUE(reach.flat_over_512);
    EXPECT_TRUE(reach.blocked_v1);
    EXPECT_TRUE(reach.compact_v1);
    EXPECT_TRUE(reach.compact_bloom);
    if (HasFailure()) {
      std::string seen = "flat k:";
      for (int k : reach.flat_probes) seen += " " + std::to_string(k);
      seen += "; seeds:";
      for (int s : reach.seeds) seen += " " + std::to_string(s);
      seen += "; R:";
      for (int r : reach.fingerprint_bits) seen += " " + std::to_string(r);
      ADD_FAILURE() << seen;
      return;
    }
  }
}

}  // namespace
}  // namespace blockbloom
