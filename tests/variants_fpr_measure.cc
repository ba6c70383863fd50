// Measures the mean false-positive rate of CreateForFpr filters (standard,
// both hash schemes, and partitioned) over many independent random key sets,
// beside the target and the library's prediction, and the same geometry with
// truly independent uniform probes ("ideal"), which separates the exact-fill
// effect (Bose et al. 2008) from the probe scheme's correlation.
//
//   build/default/tests/variants_fpr_measure [max_n]
//
// Not a ctest: a few minutes on one core. Deterministic (fixed seeds).
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "blockbloom/math.h"
#include "blockbloom/partitioned_bloom.h"
#include "blockbloom/standard_bloom.h"

namespace blockbloom {
namespace {

struct Mean {
  double sum = 0, sum2 = 0;
  int count = 0;
  void Add(double x) {
    sum += x;
    sum2 += x * x;
    ++count;
  }
  double mean() const { return sum / count; }
  double stderr_() const {
    const double m = mean();
    return std::sqrt(std::max(0.0, sum2 / count - m * m) / (count - 1));
  }
};

// Filters per configuration and probes per filter: ~2e7 probes in all.
void Plan(uint64_t n, int* filters, int* probes) {
  *filters = static_cast<int>(std::clamp<uint64_t>(4000000 / std::max<uint64_t>(n, 1), 200, 4000));
  *probes = 20000000 / *filters;
}

template <class MakeFilter>
Mean MeasureFilters(uint64_t n, uint64_t seed, MakeFilter make) {
  int filters, probes;
  Plan(n, &filters, &probes);
  std::mt19937_64 rng(seed);
  Mean mean;
  for (int f = 0; f < filters; ++f) {
    auto filter = make();
    for (uint64_t i = 0; i < n; ++i) filter.AddHash(rng());
    int fp = 0;
    for (int q = 0; q < probes; ++q) fp += filter.MayContainHash(rng());
    mean.Add(static_cast<double>(fp) / probes);
  }
  return mean;
}

// Independent uniform probes: `slices` = 1 (standard, range m) or k
// (partitioned, one probe per slice of `range` bits).
Mean MeasureIdeal(uint64_t n, uint64_t range, int k, bool partitioned, uint64_t seed) {
  int filters, probes;
  Plan(n, &filters, &probes);
  std::mt19937_64 rng(seed);
  const uint64_t bits = partitioned ? range * k : range;
  std::vector<uint8_t> b(bits);
  Mean mean;
  const auto pos = [&](int i) {
    const uint64_t r = static_cast<uint64_t>((static_cast<unsigned __int128>(rng()) * range) >> 64);
    return partitioned ? i * range + r : r;
  };
  for (int f = 0; f < filters; ++f) {
    std::fill(b.begin(), b.end(), 0);
    for (uint64_t j = 0; j < n; ++j)
      for (int i = 0; i < k; ++i) b[pos(i)] = 1;
    int fp = 0;
    for (int q = 0; q < probes; ++q) {
      bool all = true;
      for (int i = 0; i < k; ++i) all &= b[pos(i)] != 0;  // draws all k: same rng use
      fp += all;
    }
    mean.Add(static_cast<double>(fp) / probes);
  }
  return mean;
}

void Row(const char* what, uint64_t n, double p, uint64_t m, int k, double model, const Mean& got,
         const Mean& ideal) {
  std::printf("%-12s %6" PRIu64 " %6g %8" PRIu64
              " %3d  %9.5f%%  %9.5f%% +- %.5f%%  (%5.3f)  "
              "%9.5f%% +- %.5f%%\n",
              what, n, p, m, k, 100 * model, 100 * got.mean(), 100 * got.stderr_(), got.mean() / p,
              100 * ideal.mean(), 100 * ideal.stderr_());
  std::fflush(stdout);
}

}  // namespace
}  // namespace blockbloom

int main(int argc, char** argv) {
  using namespace blockbloom;
  const uint64_t max_n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000;
  std::printf("%-12s %6s %6s %8s %3s  %10s  %23s  %7s  %s\n", "structure", "n", "p", "m", "k",
              "model", "measured mean +- se", "(/p)", "ideal probes +- se");
  uint64_t seed = 1;
  for (double p : {0.1, 0.01, 0.001}) {
    for (uint64_t n : {1, 2, 5, 10, 20, 50, 100, 1000, 10000}) {
      if (n > max_n) continue;
      const double dn = static_cast<double>(n);
      for (HashScheme s : {HashScheme::kDoubleHashing, HashScheme::kEnhancedDoubleHashing}) {
        auto g = *StandardBloomFilter::GeometryForFpr(n, p, s);
        const Mean got = MeasureFilters(n, ++seed, [&] {
          return *StandardBloomFilter::CreateWithGeometry(g.num_bits, g.num_probes, s);
        });
        const Mean ideal = MeasureIdeal(n, g.num_bits, g.num_probes, false, ++seed);
        auto f = *StandardBloomFilter::CreateWithGeometry(g.num_bits, g.num_probes, s);
        for (uint64_t i = 0; i < n; ++i) f.AddHash(i);
        Row(s == HashScheme::kDoubleHashing ? "std-double" : "std-enhanced", n, p, g.num_bits,
            g.num_probes, f.PredictedFpr(), got, ideal);
      }
      auto g = *PartitionedBloomFilter::GeometryForFpr(n, p);
      const Mean got = MeasureFilters(n, ++seed, [&] {
        return *PartitionedBloomFilter::CreateWithGeometry(g.slice_bits, g.num_probes);
      });
      const Mean ideal = MeasureIdeal(n, g.slice_bits, g.num_probes, true, ++seed);
      Row("partitioned", n, p, g.slice_bits * g.num_probes, g.num_probes,
          *PartitionedFprFor(g.num_probes, static_cast<double>(g.slice_bits * g.num_probes), dn),
          got, ideal);
    }
  }
  return 0;
}
