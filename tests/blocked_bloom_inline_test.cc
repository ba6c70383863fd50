// blockbloom/blocked_bloom_inline.h against the dispatched probes. CMake
// builds this file twice: generic (the portable static target: the inline
// functions fall back to the dispatched call) and with -march=native (the
// probe compiled for this CPU's static target, AVX2 here, and inlined). Both
// must answer exactly as BlockedBloomFilter::MayContainHash / MayContain for
// every geometry: full blocks, a short last block, flat (format version 2),
// empty, k beyond one vector of probes.
#include "blockbloom/blocked_bloom_inline.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/hash.h"
#include "blocked/format.h"
#include "hwy/targets.h"

namespace blockbloom {
namespace {

// Every answer of the inline probe equals the dispatched one, for the added
// hashes (all "may contain") and for `probes` random others.
void ExpectSameAnswers(const BlockedBloomFilter& f, const std::vector<uint64_t>& added,
                       int probes) {
  for (uint64_t h : added) {
    ASSERT_TRUE(InlineMayContainHash(f, h)) << "false negative, hash " << h;
  }
  std::mt19937_64 rng(f.num_bytes() * 31 + f.num_probes());
  int positives = 0;
  for (int i = 0; i < probes; ++i) {
    const uint64_t h = rng();
    const bool inline_answer = InlineMayContainHash(f, h);
    ASSERT_EQ(inline_answer, f.MayContainHash(h)) << "hash " << h;
    positives += inline_answer;
  }
  // A filter holding keys is not "always yes" (else the test proves nothing).
  if (!added.empty() && f.num_bytes() >= 64) EXPECT_LT(positives, probes / 2);
}

std::vector<uint64_t> Hashes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> out(n);
  for (uint64_t& h : out) h = rng();
  return out;
}

TEST(BlockedBloomInlineTest, ReportsItsTarget) {
  RecordProperty("inline_target", hwy::TargetName(kInlineProbeTarget));
  RecordProperty("inlined", kInlineProbeIsInlined ? "yes" : "no (dispatched fallback)");
  EXPECT_NE(kInlineProbeTarget, 0);
}

TEST(BlockedBloomInlineTest, SameAnswersForEveryBlockedGeometry) {
  // (keys, bits per key): k from 3 to 14 (beyond 8 lanes: AVX2 runs a second
  // vector of probes), sizes with and without a short last block.
  const struct {
    size_t keys;
    double bits_per_key;
  } cases[] = {{1, 10},    {7, 10},     {100, 10},     {1000, 4.5}, {1000, 10},
               {3333, 20}, {10000, 10}, {100000, 7.3}, {100000, 10}};
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << c.keys << " keys, " << c.bits_per_key << " bits/key");
    auto f = BlockedBloomFilter::Create(c.keys, c.bits_per_key);
    ASSERT_TRUE(f.ok());
    const std::vector<uint64_t> added = Hashes(c.keys, c.keys);
    f->AddHashes(added);
    ASSERT_FALSE(f->flat());
    ASSERT_NO_FATAL_FAILURE(ExpectSameAnswers(*f, added, 20000));
  }
}

TEST(BlockedBloomInlineTest, SameAnswersForFlatAndEmptyFilters) {
  // Flat (format version 2): what the LevelDB policies write for small filters.
  for (size_t keys : {1, 10, 60, 300}) {
    SCOPED_TRACE(testing::Message() << keys << " keys, flat");
    std::vector<std::string> storage;
    for (size_t i = 0; i < keys; ++i) storage.push_back("key" + std::to_string(i));
    std::string encoded;
    blocked::AppendFilter(
        keys, BlockedBloomBytes(keys, 10.0), BlockedBloomProbes(10.0),
        [&](size_t i) { return std::string_view(storage[i]); }, &encoded);
    auto f = BlockedBloomFilter::Deserialize(encoded);
    ASSERT_TRUE(f.ok()) << f.status();
    ASSERT_TRUE(f->flat());
    std::vector<uint64_t> added;
    for (const std::string& k : storage) {
      added.push_back(HashKey(k));
      ASSERT_TRUE(InlineMayContain(*f, k));
    }
    ASSERT_NO_FATAL_FAILURE(ExpectSameAnswers(*f, added, 5000));
  }
  auto empty = BlockedBloomFilter::Create(0, 10.0);
  ASSERT_TRUE(empty.ok());
  ASSERT_EQ(empty->num_bytes(), 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectSameAnswers(*empty, {}, 1000));
  EXPECT_FALSE(InlineMayContain(*empty, "anything"));
}

TEST(BlockedBloomInlineTest, KeysAgreeWithMayContain) {
  auto f = BlockedBloomFilter::Create(5000, 10.0);
  ASSERT_TRUE(f.ok());
  for (int i = 0; i < 5000; i += 2) f->AddKey("k" + std::to_string(i));
  for (int i = 0; i < 5000; ++i) {
    const std::string k = "k" + std::to_string(i);
    ASSERT_EQ(InlineMayContain(*f, k), f->MayContain(k)) << k;
    if (i % 2 == 0) ASSERT_TRUE(InlineMayContain(*f, k)) << k;
  }
}

}  // namespace
}  // namespace blockbloom
