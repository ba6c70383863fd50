// Parameter math against values computed independently.
#include "blockbloom/math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace blockbloom {
namespace {

TEST(MathTest, StandardBloomClosedForm) {
  // (1 - e^{-0.7})^7 = 0.0081936...; (1 - e^{-0.5})^5 = 0.0094309...
  EXPECT_NEAR(StandardBloomFpr(10, 7), 0.0081937, 1e-6);
  EXPECT_NEAR(StandardBloomFpr(10, 5), 0.0094309, 1e-6);
}

// Outside its domain the standard model answers like BlockedBloomFpr's guards
// (math.h): a probability, never a negative number, an infinity or NaN.
TEST(MathTest, StandardBloomFprIsAProbabilityForEveryArgument) {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  // bits_per_key NaN or <= 0, or k < 1: nothing is filtered.
  for (double c : {nan, 0.0, -0.0, -1.0, -1e300, -inf}) {
    for (int k : {1, 7, 64}) EXPECT_EQ(StandardBloomFpr(c, k), 1.0) << c << " " << k;
  }
  for (int k : {0, -1, -7, std::numeric_limits<int>::min()}) {
    EXPECT_EQ(StandardBloomFpr(10, k), 1.0) << k;
  }
  EXPECT_EQ(StandardBloomFpr(inf, 7), 0.0);
  for (double c : {5e-324, 1e-300, 0.5, 1.0, 1e300, 1.7e308}) {
    for (int k : {1, 7, 64, std::numeric_limits<int>::max()}) {
      const double p = StandardBloomFpr(c, k);
      EXPECT_TRUE(p >= 0.0 && p <= 1.0) << c << " " << k << " -> " << p;
    }
  }
}

// Direct evaluation of the Poisson mixture with a plain pmf recursion,
// independent of the log-space summation in math.cc.
double NaiveBlockedFpr(double bits_per_key, int k, int block_bits) {
  const double lambda = block_bits / bits_per_key;
  double pmf = std::exp(-lambda);  // i = 0; fine for lambda < 700
  double sum = 0;
  for (int i = 0; i < 2000; ++i) {
    const double set = 1 - std::pow(1 - 1.0 / block_bits, static_cast<double>(k) * i);
    sum += pmf * std::pow(set, k);
    pmf *= lambda / (i + 1);
  }
  return sum;
}

TEST(MathTest, BlockedFprMatchesIndependentEvaluation) {
  for (double bpk : {2.0, 5.0, 8.0, 10.0, 16.0, 20.0}) {
    for (int k = 1; k <= 16; ++k) {
      const double naive = NaiveBlockedFpr(bpk, k, 512);
      EXPECT_NEAR(BlockedBloomFpr(bpk, k, 512), naive, 1e-9 + 1e-6 * naive)
          << "bpk=" << bpk << " k=" << k;
    }
  }
}

TEST(MathTest, BlockingCostsALittleAccuracy) {
  for (double bpk : {6.0, 10.0, 16.0}) {
    for (int k = 2; k <= 12; ++k) {
      EXPECT_GT(BlockedBloomFpr(bpk, k), StandardBloomFpr(bpk, k));
    }
  }
  // Huge blocks converge to the standard filter.
  EXPECT_NEAR(BlockedBloomFpr(10, 7, 1 << 20), StandardBloomFpr(10, 7), 2e-5);
}

TEST(MathTest, OptimalProbesMinimisesTheModel) {
  for (double bpk = 1; bpk <= 30; bpk += 0.5) {
    const int k = OptimalBlockedProbes(bpk);
    for (int other = 1; other <= 16; ++other) {
      EXPECT_LE(BlockedBloomFpr(bpk, k), BlockedBloomFpr(bpk, other)) << bpk;
    }
    // Blocking pulls the best k below the standard filter's ln2 * c.
    EXPECT_LE(k, std::max(1, static_cast<int>(std::ceil(std::log(2.0) * bpk))));
  }
}

}  // namespace
}  // namespace blockbloom
