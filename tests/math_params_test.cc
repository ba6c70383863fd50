// The classic n/m/k/p relations of blockbloom/math.h against values computed
// independently (by hand / Python, written here as literals), plus the
// argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "blockbloom/math.h"

namespace blockbloom {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(MathParamsTest, BitsForFprMatchesClosedForm) {
  // m = -n ln p / ln^2 2: 1e6 * 4.605170186 / 0.480453014 = 9585058.38 -> 9585059.
  EXPECT_EQ(*StandardBitsForFpr(1e6, 0.01), 9585059u);
  EXPECT_EQ(*StandardBitsForFpr(1e9, 0.01), 9585058378u);
  // p = 1/2 needs ln 2 / ln^2 2 = 1/ln 2 = 1.4427 bits per key.
  EXPECT_EQ(*StandardBitsForFpr(1000, 0.5), 1443u);
  // Rounded up even where -n ln p underflows to 0 (a denormal n, p near 1):
  // a positive answer needs at least one bit.
  EXPECT_EQ(*StandardBitsForFpr(5e-324, 1.0 - 1e-12), 1u);
  EXPECT_EQ(*StandardBitsForFpr(1e-300, 0.5), 1u);
}

TEST(MathParamsTest, OptimalProbesIsTheBetterNeighbourOfMOverNLn2) {
  // m/n = 10: ideal 6.93; p(6) = 0.008436, p(7) = 0.008194 -> 7.
  EXPECT_EQ(*StandardOptimalProbes(1e7, 1e6), 7);
  // m/n = 8: ideal 5.545; p(5) = 0.021679, p(6) = 0.021577 -> 6 (not round()).
  EXPECT_EQ(*StandardOptimalProbes(8e6, 1e6), 6);
  // m/n = 16: ideal 11.09; p(11) = 4.587e-4 < p(12) = 4.656e-4 -> 11.
  EXPECT_EQ(*StandardOptimalProbes(16e6, 1e6), 11);
  // Fewer bits than keys: still at least one probe.
  EXPECT_EQ(*StandardOptimalProbes(10, 1e6), 1);
  // The documented clamp: past m/n ~ 1.44e6 every candidate's p is 0.
  EXPECT_EQ(*StandardOptimalProbes(1e12, 1), 1000000);
  EXPECT_EQ(*StandardOptimalProbes(1.7e308, 1e-300), 1000000);
}

TEST(MathParamsTest, FprForMatchesClosedForm) {
  EXPECT_NEAR(*StandardFprFor(7, 1e7, 1e6), 0.008193722065862417, 1e-15);
  EXPECT_NEAR(*StandardFprFor(6, 1e7, 1e6), 0.008436209268438546, 1e-15);
  EXPECT_EQ(*StandardFprFor(3, 100, 0), 0.0);  // an empty filter matches nothing
  // Agrees with the older bits-per-key form.
  EXPECT_DOUBLE_EQ(*StandardFprFor(7, 1e7, 1e6), StandardBloomFpr(10.0, 7));
}

TEST(MathParamsTest, CapacityInvertsFpr) {
  // n = -(m/k) ln(1 - p^(1/k)), m = 1e7, k = 7, p = 0.01 -> 1042431.69.
  EXPECT_EQ(*StandardCapacity(1e7, 7, 0.01), 1042431u);
  for (double n : {10.0, 1e3, 1e6, 1e9}) {
    const double m = 10 * n;
    const double p = *StandardFprFor(7, m, n);
    const double back = static_cast<double>(*StandardCapacity(m, 7, p));
    EXPECT_NEAR(back, n, 1e-6 * n + 1) << n;
  }
}

TEST(MathParamsTest, PartitionedFprIsSlightlyAboveStandard) {
  // (1 - (1 - 7/1e7)^1e6)^7 = 0.0081937359 vs 0.0081937221 standard.
  EXPECT_NEAR(*PartitionedFprFor(7, 1e7, 1e6), 0.008193735925474213, 1e-10);
  EXPECT_GT(*PartitionedFprFor(7, 1e7, 1e6), *StandardFprFor(7, 1e7, 1e6));
  // Small filters show the gap clearly.
  EXPECT_GT(*PartitionedFprFor(4, 64, 10), *StandardFprFor(4, 64, 10));
  EXPECT_FALSE(PartitionedFprFor(8, 4, 1).ok());  // fewer bits than slices
}

// Near-empty filters (n / m^2 below the smallest double) have an FPR near
// 0: the coincidence term's scale underflowed to 0 and its 0/0 made the
// answer 1.
TEST(MathParamsTest, NearlyEmptyFiltersHaveNearlyZeroFpr) {
  for (double m : {1e150, 1e160, 1e300}) {
    EXPECT_LT(*StandardFprFor(7, m, 1), 1e-100) << m;
    EXPECT_LT(*PartitionedFprFor(7, m, 1), 1e-100) << m;
  }
  for (double n : {1e-310, 1e-320}) {
    EXPECT_LT(*StandardFprFor(7, 1000, n), 1e-100) << n;
    EXPECT_LT(*PartitionedFprFor(7, 1000, n), 1e-100) << n;
  }
}

// An empty partitioned filter matches nothing, also with one bit per slice
// (m = k), where ln(1 - k/m) is -inf: the formula's 0 * -inf gave NaN.
TEST(MathParamsTest, EmptyPartitionedFilterMatchesNothingAtOneBitPerSlice) {
  for (int k : {1, 7, 64}) {
    EXPECT_EQ(*PartitionedFprFor(k, k, 0), 0.0) << k;
    EXPECT_EQ(*PartitionedFprFor(k, 10.0 * k, 0), 0.0) << k;
    EXPECT_EQ(*PartitionedFprFor(k, k, 1), 1.0) << k;  // one key sets every bit
  }
}

TEST(MathParamsTest, BlockedBitsPerKeyForFprIsTheSmallestThatMeetsIt) {
  for (double p : {0.1, 0.01, 0.001, 1e-4, 1e-6}) {
    const absl::StatusOr<double> c = BlockedBitsPerKeyForFpr(p);
    ASSERT_TRUE(c.ok()) << c.status();
    const auto best = [](double bpk) { return BlockedBloomFpr(bpk, OptimalBlockedProbes(bpk)); };
    EXPECT_LE(best(*c), p) << p;
    EXPECT_GT(best(*c - 1e-3), p) << p;
    // Blocking costs memory: always above the standard filter's -ln p / ln^2 2.
    EXPECT_GT(*c, -std::log(p) / (std::log(2.0) * std::log(2.0))) << p;
  }
  EXPECT_EQ(BlockedBitsPerKeyForFpr(1e-9).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(*BlockedBitsPerKeyForFpr(0.99), 1.0);  // even 1 bit/key suffices
}

TEST(MathParamsTest, OutOfRangeInputsAreInvalidArgument) {
  const auto invalid = [](const absl::Status& s) {
    return s.code() == absl::StatusCode::kInvalidArgument && !s.message().empty();
  };
  for (double n : {0.0, -1.0, kNaN, kInf, -kInf}) {
    EXPECT_TRUE(invalid(StandardBitsForFpr(n, 0.01).status())) << n;
    EXPECT_TRUE(invalid(StandardOptimalProbes(1000, n).status())) << n;
  }
  for (double n : {-1.0, kNaN, kInf}) {
    EXPECT_TRUE(invalid(StandardFprFor(3, 100, n).status())) << n;
    EXPECT_TRUE(invalid(PartitionedFprFor(3, 100, n).status())) << n;
  }
  for (double p : {0.0, 1.0, -0.5, 1.5, kNaN, kInf}) {
    EXPECT_TRUE(invalid(StandardBitsForFpr(100, p).status())) << p;
    EXPECT_TRUE(invalid(StandardCapacity(1000, 3, p).status())) << p;
    EXPECT_TRUE(invalid(BlockedBitsPerKeyForFpr(p).status())) << p;
  }
  for (double m : {0.0, -5.0, kNaN, kInf}) {
    EXPECT_TRUE(invalid(StandardOptimalProbes(m, 10).status())) << m;
    EXPECT_TRUE(invalid(StandardFprFor(3, m, 10).status())) << m;
    EXPECT_TRUE(invalid(StandardCapacity(m, 3, 0.01).status())) << m;
  }
  for (int k : {0, -1}) {
    EXPECT_TRUE(invalid(StandardFprFor(k, 100, 10).status())) << k;
    EXPECT_TRUE(invalid(StandardCapacity(100, k, 0.01).status())) << k;
    EXPECT_TRUE(invalid(PartitionedFprFor(k, 100, 10).status())) << k;
  }
  // Answers too large for their type are OutOfRange, not garbage.
  EXPECT_EQ(StandardBitsForFpr(1e300, 0.01).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(StandardCapacity(1e300, 1, 0.5).status().code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace blockbloom
