// The blocked counting Bloom filter against an std::unordered_multiset oracle:
// no false negatives under any insert/erase sequence, sticky saturation,
// refusal to erase provably absent keys, an erase below 0 counted and not
// wrapped, FPR against the Poisson-mixture model,
// and the cached parameter search giving exactly the exhaustive search's answers.
#include "blockbloom/counting_bloom.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "blockbloom/hash.h"
#include "blockbloom/math.h"
#include "counting/kernel.h"
#include "counting_reference.h"
#include "test_keys.h"
#include "sanitizers.h"

namespace blockbloom {
namespace {

using testing_counting::ExhaustiveCountersPerKeyForFpr;
using testing_keys::Key;
using testing_keys::SplitMix64;

std::unique_ptr<CountingBloomFilter> Make(uint64_t n, double c) {
  auto f = CountingBloomFilter::Create(n, c);
  EXPECT_TRUE(f.ok()) << f.status();
  return std::move(f).value();
}

TEST(CountingBloomTest, RandomInsertEraseAgainstMultisetOracle) {
  for (double c : {2.0, 4.0, 10.0}) {
    auto filter = Make(2000, c);
    std::unordered_multiset<std::string> oracle;
    SplitMix64 rng(static_cast<uint64_t>(c * 1000));
    for (int step = 0; step < 60000; ++step) {
      const std::string key = Key(rng.Next() % 3000);
      if (rng.Next() % 3 != 0) {
        filter->Insert(key);
        oracle.insert(key);
      } else if (auto it = oracle.find(key); it != oracle.end()) {
        ASSERT_TRUE(filter->Erase(key).ok());
        oracle.erase(it);
      }
      if (step % 500 == 0) {
        for (const std::string& live : oracle) {
          ASSERT_TRUE(filter->MayContain(live)) << "c=" << c << " step=" << step;
          ASSERT_GE(filter->CountUpperBound(live),
                    std::min<size_t>(oracle.count(live), CountingBloomFilter::kMaxCount));
        }
      }
    }
    EXPECT_EQ(filter->stats().keys, oracle.size());
    EXPECT_EQ(filter->stats().underflows, 0u);
  }
}

TEST(CountingBloomTest, EraseEverythingEmptiesTheFilter) {
  auto filter = Make(10000, 8.0);
  for (int i = 0; i < 10000; ++i) filter->Insert(Key(i));
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(filter->Erase(Key(i)).ok());
  ASSERT_EQ(filter->stats().saturated_counters, 0u);
  for (int i = 0; i < 20000; ++i) ASSERT_FALSE(filter->MayContain(Key(i))) << i;
  EXPECT_EQ(filter->stats().keys, 0u);
}

TEST(CountingBloomTest, SaturatedCountersAreSticky) {
  auto filter = Make(100, 10.0);
  const std::string hot = "hot key";
  for (int i = 0; i < 40; ++i) filter->Insert(hot);
  // Every distinct counter of the key reached 15 exactly once.
  std::unordered_set<uint32_t> counters;
  uint32_t x = counting::ProbeSeed(HashKey(hot));
  for (int i = 0; i < filter->num_probes(); ++i, x = counting::NextProbe(x)) {
    counters.insert(counting::CounterIndex(x));
  }
  EXPECT_EQ(filter->stats().saturated_counters, counters.size());
  EXPECT_EQ(filter->CountUpperBound(hot), CountingBloomFilter::kMaxCount);
  // Erasing more often than 15 leaves the key present: its true count was lost.
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(filter->Erase(hot).ok());
  EXPECT_TRUE(filter->MayContain(hot));
  EXPECT_EQ(filter->CountUpperBound(hot), CountingBloomFilter::kMaxCount);
  EXPECT_EQ(filter->stats().underflows, 0u);
}

// saturated_counters counts the counters that reached 15, not those at 14:
// a key inserted 14 times saturates nothing; its 15th insert saturates each
// of its distinct counters once.
TEST(CountingBloomTest, SaturatedCountersCountsOnlyCountersAt15) {
  auto filter = Make(100, 10.0);
  const std::string hot = "hot key";
  std::unordered_set<uint32_t> counters;
  uint32_t x = counting::ProbeSeed(HashKey(hot));
  for (int i = 0; i < filter->num_probes(); ++i, x = counting::NextProbe(x)) {
    counters.insert(counting::CounterIndex(x));
  }
  // Distinct probes hit each counter once per insert only if no two collide.
  ASSERT_EQ(counters.size(), static_cast<size_t>(filter->num_probes()));
  for (uint32_t i = 0; i + 1 < CountingBloomFilter::kMaxCount; ++i) filter->Insert(hot);
  EXPECT_EQ(filter->CountUpperBound(hot), CountingBloomFilter::kMaxCount - 1);
  EXPECT_EQ(filter->stats().saturated_counters, 0u);
  filter->Insert(hot);
  EXPECT_EQ(filter->CountUpperBound(hot), CountingBloomFilter::kMaxCount);
  EXPECT_EQ(filter->stats().saturated_counters, counters.size());
}

TEST(CountingBloomTest, SaturationNeverCausesFalseNegativesForNeighbours) {
  // One block, so every key shares counters with the hot one.
  auto f = CountingBloomFilter::CreateWithGeometry(1, 4);
  ASSERT_TRUE(f.ok());
  auto& filter = *f;
  std::unordered_multiset<std::string> oracle;
  SplitMix64 rng(5);
  for (int step = 0; step < 20000; ++step) {
    const std::string key = Key(rng.Next() % 40);
    if (rng.Next() % 2) {
      filter->Insert(key);
      oracle.insert(key);
    } else if (auto it = oracle.find(key); it != oracle.end()) {
      ASSERT_TRUE(filter->Erase(key).ok());
      oracle.erase(it);
    }
    for (const std::string& live : oracle) ASSERT_TRUE(filter->MayContain(live)) << step;
  }
  EXPECT_GT(filter->stats().saturated_counters, 0u);
}

TEST(CountingBloomTest, EraseOfProvablyAbsentKeyChangesNothing) {
  auto filter = Make(1000, 10.0);
  for (int i = 0; i < 1000; i += 2) filter->Insert(Key(i));
  int refused = 0;
  for (int i = 1; i < 1000; i += 2) {
    if (!filter->MayContain(Key(i))) {
      EXPECT_TRUE(absl::IsNotFound(filter->Erase(Key(i))));
      ++refused;
    }
  }
  EXPECT_GT(refused, 400);
  EXPECT_EQ(filter->stats().keys, 500u);
  for (int i = 0; i < 1000; i += 2) ASSERT_TRUE(filter->MayContain(Key(i)));
}

// An erase that meets a counter already at 0 (possible only for a key never
// inserted: a caller bug) is counted as an underflow and changes nothing: the
// counter must not wrap to 15 or spill into its neighbours. Built by hand: a
// key B whose two probes share one counter c, and a key A that holds c (and
// one other counter) once, so erasing B takes c to 0 and then meets the 0.
TEST(CountingBloomTest, EraseBelowZeroIsCountedAndChangesNothing) {
  constexpr int kProbes = 2;
  const auto counters_of = [](uint64_t hash) {
    const uint32_t x = counting::ProbeSeed(hash);
    return std::pair<uint32_t, uint32_t>(counting::CounterIndex(x),
                                         counting::CounterIndex(counting::NextProbe(x)));
  };
  uint64_t b = 0;
  while (counters_of(b).first != counters_of(b).second) ++b;
  const uint32_t c = counters_of(b).first;
  uint64_t a = 0;
  while (a == b || counters_of(a).first != c || counters_of(a).second == c) ++a;
  // A probe hash that touches neither of A's counters: absent before and after.
  uint64_t other = 0;
  while (counters_of(other).first == c || counters_of(other).second == c ||
         counters_of(other).first == counters_of(a).second ||
         counters_of(other).second == counters_of(a).second) {
    ++other;
  }
  auto f = CountingBloomFilter::CreateWithGeometry(1, kProbes);  // one block: all share it
  ASSERT_TRUE(f.ok()) << f.status();
  CountingBloomFilter& filter = **f;
  filter.InsertHash(a);
  ASSERT_TRUE(filter.MayContainHash(b));  // c is set, so the erase is attempted
  ASSERT_FALSE(filter.MayContainHash(other));
  ASSERT_TRUE(filter.EraseHash(b).ok());
  EXPECT_EQ(filter.stats().underflows, 1u);
  EXPECT_EQ(filter.stats().saturated_counters, 0u);
  EXPECT_FALSE(filter.MayContainHash(b));      // c went 1 -> 0 and stayed there
  EXPECT_FALSE(filter.MayContainHash(other));  // no counter around c was touched
  EXPECT_FALSE(filter.MayContainHash(a));      // A lost c, as an erase of B must do
}

// The key count never wraps: FromCounters takes the caller's count as
// stored, and an insert at 2^64 - 1 used to take it back to 0.
TEST(CountingBloomTest, KeyCountSaturatesInsteadOfWrapping) {
  auto filter = CountingBloomFilter::FromCounters(
      /*num_blocks=*/1, /*num_probes=*/4,
      /*num_keys=*/UINT64_MAX, std::string(CountingBloomFilter::kBlockBytes, '\0'));
  ASSERT_TRUE(filter.ok()) << filter.status();
  (*filter)->Insert("a");
  EXPECT_EQ((*filter)->num_keys(), UINT64_MAX);
  EXPECT_EQ((*filter)->stats().keys, UINT64_MAX);
  EXPECT_TRUE((*filter)->MayContain("a"));
}

TEST(CountingBloomTest, FprMatchesBlockedModel) {
  if (testing_build::kUnderSanitizer) {
    GTEST_SKIP() << "statistics only (3 s under ASan): checked by the uninstrumented run";
  }
  for (double c : {4.0, 8.0, 12.0}) {
    const uint64_t n = 100000;
    auto filter = Make(n, c);
    for (uint64_t i = 0; i < n; ++i) filter->Insert(Key(2 * i));
    uint64_t fp = 0;
    const uint64_t probes = 400000;
    for (uint64_t i = 0; i < probes; ++i) fp += filter->MayContain(Key(2 * i + 1));
    const double measured = static_cast<double>(fp) / probes;
    const double model = CountingBloomFilter::ModelFpr(c);
    EXPECT_GT(measured, 0.8 * model) << "c=" << c;
    EXPECT_LT(measured, 1.2 * model) << "c=" << c;
    EXPECT_NEAR(filter->stats().estimated_fpr, model, 0.05 * model);
  }
}

TEST(CountingBloomTest, BatchAgreesWithSingle) {
  auto filter = Make(5000, 6.0);
  std::vector<std::string> keys;
  for (int i = 0; i < 9000; ++i) keys.push_back(Key(i));
  for (int i = 0; i < 5000; ++i) filter->Insert(keys[i]);
  std::vector<std::string_view> views(keys.begin(), keys.end());
  auto out = std::make_unique<bool[]>(views.size());
  filter->MayContainKeys(views, absl::MakeSpan(out.get(), views.size()));
  for (size_t i = 0; i < views.size(); ++i) ASSERT_EQ(out[i], filter->MayContain(views[i])) << i;
}

TEST(CountingBloomTest, BadArgumentsGetStatusOrClamp) {
  EXPECT_FALSE(CountingBloomFilter::CreateWithGeometry(0, 3).ok());
  EXPECT_FALSE(CountingBloomFilter::CreateWithGeometry(1, 0).ok());
  EXPECT_FALSE(CountingBloomFilter::CreateWithGeometry(1, 17).ok());
  EXPECT_TRUE(
      absl::IsResourceExhausted(CountingBloomFilter::Create(uint64_t{1} << 62, 64.0).status()));
  for (double c : std::initializer_list<double>{-1.0, 0.0, std::nan(""), 1e300, INFINITY}) {
    auto f = CountingBloomFilter::Create(100, c);
    ASSERT_TRUE(f.ok()) << c;
    for (int i = 0; i < 100; ++i) (*f)->Insert(Key(i));
    for (int i = 0; i < 100; ++i) ASSERT_TRUE((*f)->MayContain(Key(i))) << c;
  }
  // Zero expected keys still gives a usable one-block filter.
  auto empty = CountingBloomFilter::Create(0, 10.0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->num_blocks(), 1u);
  EXPECT_FALSE((*empty)->MayContain("x"));
  (*empty)->Insert("x");
  EXPECT_TRUE((*empty)->MayContain("x"));
  EXPECT_LE(CountingBloomFilter::ModelFpr(CountingBloomFilter::CountersPerKeyForFpr(0.01)), 0.01);
}

TEST(CountingBloomTest, CachedSearchEqualsExhaustiveSearchOnASweep) {
  std::vector<double> targets = {0.0,
                                 -1.0,
                                 1e-300,
                                 1e-9,
                                 1e-7,
                                 1e-6,
                                 0.5,
                                 0.6,
                                 1.0,
                                 7.0,
                                 std::nan(""),
                                 std::numeric_limits<double>::infinity(),
                                 -std::numeric_limits<double>::infinity()};
  for (int i = 0; i <= 36; ++i) targets.push_back(std::pow(10.0, -0.25 * i));  // 1 .. 1e-9
  for (double p : targets) {
    const double expected = ExhaustiveCountersPerKeyForFpr(p);
    // Twice: the first call may fill the cache, the second reads it.
    EXPECT_EQ(CountingBloomFilter::CountersPerKeyForFpr(p), expected) << p;
    EXPECT_EQ(CountingBloomFilter::CountersPerKeyForFpr(p), expected) << p;
  }
}

TEST(CountingBloomTest, CachedSearchEqualsExhaustiveSearchAtEveryGridBoundary) {
  // The model at every point the exhaustive search can visit, from the
  // public (uncached) ModelFpr; the answer for p is the first c whose model
  // is <= p, which is what the exhaustive search returns. Targets on each
  // model value and one ulp either side of it pin every boundary.
  std::vector<std::pair<double, double>> grid;  // (c, ModelFpr(c))
  for (double c = CountingBloomFilter::kMinCountersPerKey;
       c < CountingBloomFilter::kMaxCountersPerKey; c += 0.25) {
    grid.emplace_back(c, CountingBloomFilter::ModelFpr(c));
  }
  ASSERT_EQ(grid.size(), 252u);
  const auto reference = [&](double target) {
    const double p = std::clamp(target, 1e-6, 0.5);
    for (const auto& [c, fpr] : grid) {
      if (fpr <= p) return c;
    }
    return CountingBloomFilter::kMaxCountersPerKey;
  };
  int checked = 0;
  for (const auto& [c, fpr] : grid) {
    for (double p : {std::nextafter(fpr, 0.0), fpr, std::nextafter(fpr, 1.0)}) {
      ASSERT_EQ(CountingBloomFilter::CountersPerKeyForFpr(p), reference(p))
          << "c=" << c << " p=" << p;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3 * 252);
  // Grid points where the model is exactly the (clamped) target are found.
  EXPECT_EQ(CountingBloomFilter::CountersPerKeyForFpr(grid[20].second), grid[20].first);
}

TEST(CountingBloomTest, CreateForFprGeometryIsUnchanged) {
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{1000}, uint64_t{123457}}) {
    for (double p : {0.2, 0.01, 0.003, 1e-4, 1e-6}) {
      const double c = ExhaustiveCountersPerKeyForFpr(p);
      auto cached = CountingBloomFilter::CreateForFpr(n, p);
      ASSERT_TRUE(cached.ok()) << cached.status();
      // What the old CreateForFpr built: Create(n, c) with k = the model's best.
      const double blocks = std::max(1.0, std::ceil(std::ceil(static_cast<double>(n) * c) /
                                                    CountingBloomFilter::kCountersPerBlock));
      EXPECT_EQ((*cached)->num_blocks(), static_cast<uint64_t>(blocks)) << n << " " << p;
      EXPECT_EQ((*cached)->num_probes(),
                OptimalBlockedProbes(c, CountingBloomFilter::kMaxProbes,
                                     CountingBloomFilter::kCountersPerBlock))
          << n << " " << p;
    }
  }
  // Create at any counters per key, on or off the grid, before or after the
  // grid point was cached, uses the model's best k.
  for (double c : {1.0, 3.0, 3.1, 9.75, 10.0, 10.01, 40.25, 63.75, 64.0}) {
    auto f = CountingBloomFilter::Create(1000, c);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ((*f)->num_probes(), OptimalBlockedProbes(c, CountingBloomFilter::kMaxProbes,
                                                       CountingBloomFilter::kCountersPerBlock))
        << c;
  }
}

}  // namespace
}  // namespace blockbloom
