// Every compiled Highway target scans d-left buckets exactly like the scalar
// reference, and whole filters built and queried under each target answer
// identically.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "blockbloom/dleft_counting_bloom.h"
#include "dleft_simd.h"
#include "targets.h"
#include "test_keys.h"

namespace blockbloom {
namespace {

using testing_keys::Key;
using testing_keys::SplitMix64;

class DleftSimdTest : public ::testing::Test {
 protected:
  void TearDown() override { simd::ForceTargetForTesting(0); }
};

// Both scan strides: 8 cells per bucket (16-bit cells) and 16 (10 unpacked
// 12-bit cells plus 6 empty ones; the kernel sees any 16).
class DleftSimdStrideTest : public ::testing::TestWithParam<size_t> {
 protected:
  void TearDown() override { simd::ForceTargetForTesting(0); }
};

TEST_P(DleftSimdStrideTest, EveryTargetMatchesReference) {
  const size_t stride = GetParam();
  const std::vector<int64_t> targets = simd::SupportedTargets();
  ASSERT_GE(targets.size(), 2u);  // at least the best one and EMU128
  SplitMix64 rng(42 + stride);
  constexpr size_t kBuckets = 5000;
  std::vector<uint16_t> cells(kBuckets * stride), tags(kBuckets);
  for (size_t j = 0; j < kBuckets; ++j) {
    // Few distinct remainders so matches, duplicates and empty-but-equal
    // cells (remainder bits set, counter 0) are all common.
    for (size_t c = 0; c < stride; ++c) {
      cells[stride * j + c] = static_cast<uint16_t>(rng.Next() % 24);
    }
    tags[j] = static_cast<uint16_t>((rng.Next() % 6) << 2 | (rng.Next() & 3));
  }
  std::vector<int8_t> ref_match(kBuckets), match(kBuckets);
  std::vector<uint8_t> ref_load(kBuckets), load(kBuckets);
  dleft_simd::ScanBucketsReference(cells.data(), stride, tags.data(), kBuckets, ref_match.data(),
                                   ref_load.data());
  size_t hits = 0, late_hits = 0;
  for (int8_t m : ref_match) {
    hits += m >= 0;
    late_hits += m >= 8;
  }
  ASSERT_GT(hits, kBuckets / 4);
  if (stride == 16) ASSERT_GT(late_hits, 0u);  // first matches in the second vector
  for (int64_t target : targets) {
    simd::ForceTargetForTesting(target);
    dleft_simd::ScanBuckets(cells.data(), stride, tags.data(), kBuckets, match.data(), load.data());
    EXPECT_EQ(match, ref_match) << simd::TargetName(target);
    EXPECT_EQ(load, ref_load) << simd::TargetName(target);
  }
}

INSTANTIATE_TEST_SUITE_P(Strides, DleftSimdStrideTest,
                         ::testing::Values(dleft_simd::kCellsPerBucket, dleft_simd::kWideStride));

TEST_F(DleftSimdTest, FiltersAgreeAcrossTargets) {
  for (int cell_bits :
       {DleftCountingBloomFilter::kCellBits, DleftCountingBloomFilter::kNarrowCellBits}) {
    std::vector<std::vector<bool>> answers;
    for (int64_t target : simd::SupportedTargets()) {
      simd::ForceTargetForTesting(target);
      auto f = DleftCountingBloomFilter::CreateWithGeometry(6, 1, cell_bits);
      ASSERT_TRUE(f.ok());
      std::vector<bool> answer;
      for (int i = 0; i < 2400; ++i) answer.push_back((*f)->Insert(Key(i)).ok());
      for (int i = 0; i < 2400; i += 3) answer.push_back((*f)->Erase(Key(i)).ok());
      for (int i = 0; i < 20000; ++i) answer.push_back((*f)->MayContain(Key(i)));
      answers.push_back(answer);
    }
    for (size_t t = 1; t < answers.size(); ++t) {
      EXPECT_EQ(answers[t], answers[0]) << "cell bits " << cell_bits << ", target " << t;
    }
  }
}

}  // namespace
}  // namespace blockbloom
