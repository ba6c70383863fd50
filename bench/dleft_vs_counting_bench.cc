// Reproduces the claim of Bonomi, Mitzenmacher, Panigrahy, Singh, Varghese
// (ESA 2006): at equal memory a d-left counting Bloom filter has a much lower
// FPR than a counting Bloom filter (their example: ~100x), and at equal FPR it
// needs about half the memory. Both filters here are this library's:
// blockbloom::DleftCountingBloomFilter (d=4, w=8, 16-bit cells) and the
// blocked CountingBloomFilter (4-bit counters, 128 per cache line); the model
// column also gives a standard (unblocked) counting Bloom filter's FPR.
//
//   build/bench/dleft_vs_counting_bench [log2_buckets=16]
//
// Prints one table; FPRs are measured on 4M keys never inserted.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "blockbloom/counting_bloom.h"
#include "blockbloom/dleft_counting_bloom.h"
#include "blockbloom/hash.h"
#include "blockbloom/math.h"

namespace {

using blockbloom::CountingBloomFilter;
using blockbloom::DleftCountingBloomFilter;

uint64_t Mix(uint64_t i) {  // distinct 64-bit hashes (SplitMix64 finaliser, a bijection)
  uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x1234567ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

constexpr uint64_t kProbes = 4000000;
// Present keys are Mix(0..n), absent ones Mix(2^40 + i): disjoint.
constexpr uint64_t kAbsentBase = uint64_t{1} << 40;

template <typename F>
double MeasureFpr(const F& filter, double* ns_per_query) {
  uint64_t fp = 0;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < kProbes; ++i) fp += filter.MayContainHash(Mix(kAbsentBase + i));
  const auto end = std::chrono::steady_clock::now();
  *ns_per_query = std::chrono::duration<double, std::nano>(end - start).count() / kProbes;
  return static_cast<double>(fp) / kProbes;
}

std::unique_ptr<CountingBloomFilter> CountingWithBytes(uint64_t bytes, uint64_t n) {
  const uint64_t blocks = std::max<uint64_t>(1, bytes / CountingBloomFilter::kBlockBytes);
  const double c = static_cast<double>(blocks) * CountingBloomFilter::kCountersPerBlock / n;
  const int k = blockbloom::OptimalBlockedProbes(c, 16, 128);
  auto f = CountingBloomFilter::CreateWithGeometry(blocks, k);
  if (!f.ok()) std::abort();
  for (uint64_t i = 0; i < n; ++i) (*f)->InsertHash(Mix(i));
  return std::move(f).value();
}

}  // namespace

int main(int argc, char** argv) {
  // Usage: dleft_vs_counting_bench [LOG2_BUCKETS]   (default 16; quick mode,
  // BLOCKBLOOM_BENCH_QUICK=1, uses 10 so CI only checks that it runs).
  int log2 = std::getenv("BLOCKBLOOM_BENCH_QUICK") != nullptr ? 10 : 16;
  if (argc > 1 && argv[1][0] != '-') log2 = std::atoi(argv[1]);
  std::printf("# d-left vs counting Bloom filter, B = 2^%d buckets per subtable\n", log2);
  std::printf("%-34s %10s %10s %11s %11s %9s\n", "filter", "keys", "bits/key", "FPR", "model FPR",
              "ns/query");
  for (double load : {0.5, 0.75}) {
    auto dl = DleftCountingBloomFilter::CreateWithGeometry(log2);
    if (!dl.ok()) return 1;
    const uint64_t n = static_cast<uint64_t>(load * (*dl)->design_capacity() / 0.75);
    for (uint64_t i = 0; i < n; ++i) {
      if (!(*dl)->InsertHash(Mix(i)).ok())
        std::printf("d-left insert refused at %llu\n", static_cast<unsigned long long>(i));
    }
    const uint64_t bytes = (*dl)->memory_bytes();
    const double bpk = 8.0 * bytes / n;
    double dl_ns = 0, cb_ns = 0, eq_ns = 0;
    const double dl_fpr = MeasureFpr(**dl, &dl_ns);
    std::printf("%-34s %10llu %10.2f %11.5f%% %10.5f%% %9.1f\n",
                load == 0.75 ? "d-left (design load 75%)" : "d-left (load 50%)",
                static_cast<unsigned long long>(n), bpk, 100 * dl_fpr,
                100 * (*dl)->stats().estimated_fpr, dl_ns);

    // Equal memory.
    auto cb = CountingWithBytes(bytes, n);
    const double c = bpk / 4;
    const double cb_fpr = MeasureFpr(*cb, &cb_ns);
    std::printf("%-34s %10llu %10.2f %11.5f%% %10.5f%% %9.1f\n", "counting, equal memory",
                static_cast<unsigned long long>(n), bpk, 100 * cb_fpr,
                100 * blockbloom::BlockedBloomFpr(c, cb->num_probes(), 128), cb_ns);
    std::printf("%-34s %10s %10s %11s %10.5f%%\n", "  (standard unblocked CBF model)", "", "", "",
                100 * blockbloom::StandardBloomFpr(c, std::max(1, int(std::lround(c * 0.693)))));

    // Equal FPR: grow the counting filter until it matches d-left's FPR.
    uint64_t eq_bytes = bytes;
    double eq_fpr = cb_fpr;
    std::unique_ptr<CountingBloomFilter> eq;
    while (eq_fpr > dl_fpr && eq_bytes < 64 * bytes) {
      eq_bytes = eq_bytes * 33 / 32;  // ~3% steps
      eq = CountingWithBytes(eq_bytes, n);
      eq_fpr = MeasureFpr(*eq, &eq_ns);
    }
    std::printf("%-34s %10llu %10.2f %11.5f%% %11s %9.1f\n", "counting, equal FPR",
                static_cast<unsigned long long>(n), 8.0 * eq_bytes / n, 100 * eq_fpr, "", eq_ns);
    std::printf(
        "=> load %.0f%%: FPR ratio counting/d-left at equal memory = %.0fx; "
        "memory ratio d-left/counting at equal FPR = %.2f\n\n",
        100 * load, cb_fpr / dl_fpr, static_cast<double>(bytes) / eq_bytes);
  }
  return 0;
}
