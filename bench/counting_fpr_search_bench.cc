// CountingBloomFilter::CountersPerKeyForFpr / CreateForFpr (what every
// FilteredDB counting-index rebuild calls) against the exhaustive search they
// replaced, in one run:
//
//   BM_SearchExhaustive/<-log10 p>  the old algorithm: c = 1, 1.25, ... until
//                                   ModelFpr(c) <= p (each ModelFpr runs
//                                   OptimalBlockedProbes: 16 Poisson-mixture
//                                   sums, plus one more)
//   BM_SearchCached/<-log10 p>      CountersPerKeyForFpr(p): the model on that
//                                   grid computed once per process, then a scan
//   BM_CreateExhaustive/<n>         Create(n, exhaustive search(1%)): the old
//                                   CreateForFpr, allocation included
//   BM_CreateForFpr/<n>             CreateForFpr(n, 1%)
//
// Steady state: the cache is warm after the first iteration. The first call
// in a process computes exactly the grid points the old search evaluated.
//
//   cmake --build <build> --target counting_fpr_search_bench
//   <build>/bench/counting_fpr_search_bench --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "blockbloom/counting_bloom.h"
#include "counting_reference.h"  // tests/: the search before the cache

namespace {

using blockbloom::CountingBloomFilter;
using blockbloom::testing_counting::ExhaustiveCountersPerKeyForFpr;

void BM_SearchExhaustive(benchmark::State& state) {
  const double p = std::pow(10.0, -static_cast<double>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(ExhaustiveCountersPerKeyForFpr(p));
}
BENCHMARK(BM_SearchExhaustive)->DenseRange(1, 6)->Unit(benchmark::kMicrosecond);

void BM_SearchCached(benchmark::State& state) {
  const double p = std::pow(10.0, -static_cast<double>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(CountingBloomFilter::CountersPerKeyForFpr(p));
}
BENCHMARK(BM_SearchCached)->DenseRange(1, 6)->Unit(benchmark::kMicrosecond);

void BM_CreateExhaustive(benchmark::State& state) {
  for (auto _ : state) {
    auto f = CountingBloomFilter::Create(static_cast<uint64_t>(state.range(0)),
                                         ExhaustiveCountersPerKeyForFpr(0.01));
    benchmark::DoNotOptimize(f);
  }
}
BENCHMARK(BM_CreateExhaustive)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);

void BM_CreateForFpr(benchmark::State& state) {
  for (auto _ : state) {
    auto f = CountingBloomFilter::CreateForFpr(static_cast<uint64_t>(state.range(0)), 0.01);
    benchmark::DoNotOptimize(f);
  }
}
BENCHMARK(BM_CreateForFpr)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
