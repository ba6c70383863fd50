// CountingBloomFilter::CountersPerKeyForFpr as it was before its model was
// cached: every call walked c = 1, 1.25, ... and evaluated ModelFpr at each
// (verbatim). The reference tests/counting_bloom_test.cc compares the cached
// search with, and bench/counting_fpr_search_bench.cc times against.
//
// Thread-safety: safe from any thread (CountingBloomFilter::ModelFpr is).
#ifndef BLOCKBLOOM_TESTS_COUNTING_REFERENCE_H_
#define BLOCKBLOOM_TESTS_COUNTING_REFERENCE_H_

#include <algorithm>
#include <cmath>

#include "blockbloom/counting_bloom.h"

namespace blockbloom {
namespace testing_counting {

inline double ExhaustiveCountersPerKeyForFpr(double target_fpr) {
  const double p = std::isnan(target_fpr) ? 0.01 : std::clamp(target_fpr, 1e-6, 0.5);
  for (double c = CountingBloomFilter::kMinCountersPerKey;
       c < CountingBloomFilter::kMaxCountersPerKey; c += 0.25) {
    if (CountingBloomFilter::ModelFpr(c) <= p) return c;
  }
  return CountingBloomFilter::kMaxCountersPerKey;
}

}  // namespace testing_counting
}  // namespace blockbloom

#endif  // BLOCKBLOOM_TESTS_COUNTING_REFERENCE_H_
