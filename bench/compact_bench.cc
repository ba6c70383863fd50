// The compact filter next to the blocked Bloom policy and LevelDB's built-in
// Bloom filter, all through leveldb::FilterPolicy (CreateFilter/KeyMayMatch),
// at 10 bits/key on LevelDB's per-block filter sizes, in one run:
//
//   BM_Probe/<policy>/<n>   one KeyMayMatch of an absent key (16-byte keys,
//                           hashing included), filter of n keys in cache
//   BM_ProbePresent/<policy>/<n>   the same for the filter's own keys
//   BM_Build/<policy>/<n>   CreateFilter of n keys; ns_per_key counter
//   BM_BuildGrid/<policy>/<bpk>/<n>   the same at bits/key 4-30 and at
//                           LevelDB's filter sizes, 1 to 100,000 keys
//   BM_BuildVs/<bpk>/<n>    the three builds interleaved in one row (batches
//                           of about 20 us each, in turn, timed in thread CPU
//                           time): ns/key of each and the ratios compact /
//                           blocked and compact / built-in, so a noisy host
//                           moves all three together
//   BM_CompactFpr/<bpk>     FPR of 1,000-key compact filters at 4..20
//                           bits/key: measured, exact E/U and the model
//
//   cmake --build <build> --target compact_bench
//   <build>/bench/compact_bench --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blockbloom/compact_filter.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"
#include "targets.h"  // simd::SupportedTargets, ForceTargetForTesting

namespace {

uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// "k<i>" padded to 16 bytes, as LevelDB user keys often are.
std::string Key(uint64_t i) {
  std::string s = "k" + std::to_string(i);
  s.resize(16, '.');
  return s;
}

enum PolicyKind { kCompact = 0, kBlocked = 1, kBuiltin = 2 };

std::unique_ptr<const leveldb::FilterPolicy> MakePolicy(int kind, int bits_per_key = 10) {
  switch (kind) {
    case kCompact:
      return std::unique_ptr<const leveldb::FilterPolicy>(
          blockbloom::NewCompactFilterPolicy(bits_per_key));
    case kBlocked:
      return std::unique_ptr<const leveldb::FilterPolicy>(
          blockbloom::NewBlockedBloomFilterPolicy(bits_per_key));
    default:
      return std::unique_ptr<const leveldb::FilterPolicy>(
          leveldb::NewBloomFilterPolicy(bits_per_key));
  }
}

const char* PolicyLabel(int kind) {
  return kind == kCompact ? "compact" : kind == kBlocked ? "blocked" : "builtin";
}

// Args: {policy kind, n}.
void ProbeRun(benchmark::State& state, bool present) {
  const int kind = static_cast<int>(state.range(0));
  const size_t n = static_cast<size_t>(state.range(1));
  const auto policy = MakePolicy(kind);
  std::vector<std::string> keys;
  for (size_t i = 0; i < n; ++i) keys.push_back(Key(2 * i));
  const std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string filter;
  policy->CreateFilter(slices.data(), static_cast<int>(n), &filter);
  // Absent keys, or the filter's own keys in turn.
  std::vector<std::string> queries;
  for (size_t i = 0; i < 4096; ++i) queries.push_back(present ? keys[i % n] : Key(2 * i + 1));
  size_t next = 0;
  uint64_t matches = 0;
  for (auto _ : state) {
    matches += policy->KeyMayMatch(queries[next], filter);
    next = (next + 1) & 4095;
  }
  benchmark::DoNotOptimize(matches);
  state.SetLabel(PolicyLabel(kind));
  state.counters["filter_bytes"] = static_cast<double>(filter.size());
  state.counters["bits_per_key"] = 8.0 * filter.size() / n;
}
void BM_Probe(benchmark::State& state) { ProbeRun(state, false); }
void BM_ProbePresent(benchmark::State& state) { ProbeRun(state, true); }

// The key sets builds take in turn: set s is keys s * n + [0, n) (Key(2i)).
// One set built over and over lets the branch predictor learn its
// elimination (how many seeds, which rows reduce), which no table build
// sees, and a few dozen sets still let it learn part: at 16 keys and 4
// bits/key the row elimination took 4.4x the built-in's time over 64 sets
// and 7.0x over 1,024. So up to kMaxKeySets sets, at most kMaxSetKeys keys
// in all.
constexpr size_t kMaxKeySets = 1024;
constexpr size_t kMaxSetKeys = size_t{1} << 18;
struct KeySets {
  explicit KeySets(size_t n)
      : n(n), sets(std::clamp<size_t>(kMaxSetKeys / std::max<size_t>(n, 1), 1, kMaxKeySets)) {
    for (size_t i = 0; i < n * sets; ++i) keys.push_back(Key(2 * i));
    slices.assign(keys.begin(), keys.end());
  }
  // The keys of the b-th build.
  const leveldb::Slice* Set(size_t b) const { return slices.data() + (b % sets) * n; }
  size_t n, sets;
  std::vector<std::string> keys;
  std::vector<leveldb::Slice> slices;
};

void BuildRun(benchmark::State& state, int kind, int bits_per_key, size_t n) {
  const auto policy = MakePolicy(kind, bits_per_key);
  const KeySets keys(n);
  std::string filter;
  size_t b = 0;
  for (auto _ : state) {
    filter.clear();
    policy->CreateFilter(keys.Set(b++), static_cast<int>(n), &filter);
    benchmark::DoNotOptimize(filter.data());
  }
  state.SetLabel(PolicyLabel(kind));
  // (n keys per iteration / CPU seconds), inverted: seconds per key; the
  // 1e-9 makes the unit ns.
  state.counters["ns_per_key"] = benchmark::Counter(
      static_cast<double>(n) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_Build(benchmark::State& state) {
  BuildRun(state, static_cast<int>(state.range(0)), 10, static_cast<size_t>(state.range(1)));
}

// Args: {policy kind, bits per key, n}.
void BM_BuildGrid(benchmark::State& state) {
  BuildRun(state, static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
           static_cast<size_t>(state.range(2)));
}

void PolicyArgs(benchmark::internal::Benchmark* b) {
  for (int kind : {kCompact, kBlocked, kBuiltin}) {
    for (int n : {10, 35, 100, 300, 1000}) b->Args({kind, n});
  }
}
BENCHMARK(BM_Probe)->Apply(PolicyArgs)->ArgNames({"policy", "n"});
BENCHMARK(BM_ProbePresent)->Apply(PolicyArgs)->ArgNames({"policy", "n"});
BENCHMARK(BM_Build)->Apply(PolicyArgs)->ArgNames({"policy", "n"});
// Bits/key and keys per filter of the build grids: LevelDB writes a filter
// per 2 KiB of data blocks, so 1-8 keys with values of KiBs, ~20-200 with
// 4 KiB blocks of small values, up to ~100,000 with tiny keys and big blocks.
constexpr int kGridBitsPerKey[] = {4, 6, 8, 10, 16, 20, 30};
constexpr int kGridKeys[] = {1, 2, 4, 8, 16, 64, 160, 1000, 10000, 100000};

void GridArgs(benchmark::internal::Benchmark* b) {
  for (int bpk : kGridBitsPerKey) {
    for (int n : kGridKeys) {
      for (int kind : {kCompact, kBlocked, kBuiltin}) b->Args({kind, bpk, n});
    }
  }
}
BENCHMARK(BM_BuildGrid)->Apply(GridArgs)->ArgNames({"policy", "bpk", "n"})->MinTime(0.05);

// This thread's CPU time in ns (time while descheduled by a busy host does
// not count).
double ThreadNanos() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e9 * static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec);
}

// Thread CPU ns of `batch` CreateFilter calls of `policy`, the b-th on
// keys.Set(b), each into the cleared *filter.
double TimeBatch(const leveldb::FilterPolicy& policy, const KeySets& keys, size_t batch,
                 std::string* filter) {
  const double begin = ThreadNanos();
  for (size_t b = 0; b < batch; ++b) {
    filter->clear();
    policy.CreateFilter(keys.Set(b), static_cast<int>(keys.n), filter);
    benchmark::DoNotOptimize(filter->data());
  }
  return ThreadNanos() - begin;
}

// Args: {bits per key, n}. Each iteration builds a batch with each policy in
// turn (batch: about 20,000 keys' worth of CreateFilter calls, at least
// one), timed in thread CPU time; counters are ns per key of each policy
// over the whole run and the ratios.
void BM_BuildVs(benchmark::State& state) {
  const int bits_per_key = static_cast<int>(state.range(0));
  const size_t n = static_cast<size_t>(state.range(1));
  std::unique_ptr<const leveldb::FilterPolicy> policies[3];
  for (int kind : {kCompact, kBlocked, kBuiltin}) policies[kind] = MakePolicy(kind, bits_per_key);
  const KeySets keys(n);
  const size_t batch = std::max<size_t>(1, 20000 / n);
  std::string filter;
  double ns[3] = {0, 0, 0};
  for (auto _ : state) {
    for (int kind : {kCompact, kBlocked, kBuiltin}) {
      ns[kind] += TimeBatch(*policies[kind], keys, batch, &filter);
    }
  }
  const double keys_built = static_cast<double>(state.iterations()) * batch * n;
  state.counters["compact_ns"] = ns[kCompact] / keys_built;
  state.counters["blocked_ns"] = ns[kBlocked] / keys_built;
  state.counters["builtin_ns"] = ns[kBuiltin] / keys_built;
  state.counters["c_over_blocked"] = ns[kCompact] / ns[kBlocked];
  state.counters["c_over_builtin"] = ns[kCompact] / ns[kBuiltin];
  state.counters["blocked_over_builtin"] = ns[kBlocked] / ns[kBuiltin];
}
// The grid's key counts and more between 64 and 1,000, where the compact
// builder switches from one elimination to another (at 600 keys).
constexpr int kVsKeys[] = {1, 2, 4, 8, 16, 64, 100, 160, 300, 500, 600, 1000, 10000, 100000};
void VsArgs(benchmark::internal::Benchmark* b) {
  for (int bpk : kGridBitsPerKey) {
    for (int n : kVsKeys) b->Args({bpk, n});
  }
}
BENCHMARK(BM_BuildVs)->Apply(VsArgs)->ArgNames({"bpk", "n"})->MinTime(0.1);

// Args: {bits per key, n}. The compact build (through the LevelDB policy)
// with every kernel on the CPU's best target and with every kernel on
// AVX2, interleaved in batches as BM_BuildVs (simd::ForceTargetForTesting
// between batches): ns/key on each and best over AVX2, so the build
// family's target (simd/targets.cc) rests on a measurement. Skipped where
// the best target is AVX2 or below.
void BM_CompactTargets(benchmark::State& state) {
  const int bits_per_key = static_cast<int>(state.range(0));
  const size_t n = static_cast<size_t>(state.range(1));
  const std::vector<int64_t> targets = blockbloom::simd::SupportedTargets();
  int64_t avx2 = 0;
  for (int64_t t : targets) {
    if (blockbloom::simd::TargetName(t) == "AVX2") avx2 = t;
  }
  if (avx2 == 0 || targets.front() == avx2) {
    state.SkipWithError("no target above AVX2 on this CPU");
    return;
  }
  const int64_t kinds[2] = {targets.front(), avx2};
  const auto policy = MakePolicy(kCompact, bits_per_key);
  const KeySets keys(n);
  const size_t batch = std::max<size_t>(1, 20000 / n);
  std::string filter;
  double ns[2] = {0, 0};
  for (auto _ : state) {
    for (int kind : {0, 1}) {
      blockbloom::simd::ForceTargetForTesting(kinds[kind]);
      ns[kind] += TimeBatch(*policy, keys, batch, &filter);
    }
  }
  blockbloom::simd::ForceTargetForTesting(0);
  const double keys_built = static_cast<double>(state.iterations()) * batch * n;
  state.SetLabel(blockbloom::simd::TargetName(kinds[0]) + " vs AVX2");
  state.counters["best_ns"] = ns[0] / keys_built;
  state.counters["avx2_ns"] = ns[1] / keys_built;
  state.counters["best_over_avx2"] = ns[0] / ns[1];
}
void TargetsArgs(benchmark::internal::Benchmark* b) {
  for (int bpk : {4, 10, 20}) {
    for (int n : {2, 6, 8, 16, 64, 100, 160, 300, 600, 1000, 10000}) b->Args({bpk, n});
  }
}
BENCHMARK(BM_CompactTargets)->Apply(TargetsArgs)->ArgNames({"bpk", "n"})->MinTime(0.1);

// FPR vs bits/key for the compact filter next to its model (not a timing).
void BM_CompactFpr(benchmark::State& state) {
  const double bpk = static_cast<double>(state.range(0));
  constexpr int kFilters = 50;
  constexpr int kQueries = 200000;
  uint64_t rng = static_cast<uint64_t>(state.range(0));
  double measured = 0, exact = 0, bytes = 0;
  for (auto _ : state) {
    uint64_t false_positives = 0;
    exact = bytes = 0;
    for (int f = 0; f < kFilters; ++f) {
      std::vector<uint64_t> hashes(1000);
      for (uint64_t& h : hashes) h = SplitMix(&rng);
      auto filter = blockbloom::CompactFilter::BuildFromHashes(hashes, bpk);
      exact += filter->expected_fpr();
      bytes += static_cast<double>(filter->size_bytes());
      for (int q = 0; q < kQueries; ++q) false_positives += filter->MayContainHash(SplitMix(&rng));
    }
    measured = static_cast<double>(false_positives) / (static_cast<double>(kFilters) * kQueries);
    exact /= kFilters;
  }
  state.counters["fpr_measured_pct"] = 100 * measured;
  state.counters["fpr_exact_pct"] = 100 * exact;
  state.counters["fpr_model_pct"] = 100 * blockbloom::CompactFilterPredictedFpr(1000, bpk);
  state.counters["bits_per_key"] = 8 * bytes / kFilters / 1000;
}
BENCHMARK(BM_CompactFpr)->DenseRange(4, 20, 2)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
