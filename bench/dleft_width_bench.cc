// What the d-left filter's cell width buys FilteredDB's index
// (docs/FILTERED_DB.md, "Choosing the d-left cell width from the target").
//
//   build/release/bench/dleft_width_bench [log2_buckets=16] [width=all] [--quick]
//
// A bucket stays one 128-bit word (one vector compare); its cells are w bits,
// a (w - 2)-bit remainder and a 2-bit counter, so c = floor(128 / w) cells per
// bucket. For w in {16, 14, 13, 12, 11, 10} this fills a d = 4 table of
// 2^b buckets per subtable with the library's placement (f = top b + r bits
// of the hash, subtable i uses a_i * f mod 2^(b + r) with the library's odd
// multipliers, d-left: the least-loaded candidate bucket, leftmost on ties)
// at several loads, and prints, per width and load:
//   - refusals (all d buckets full; counter at 3) among the inserts,
//   - the measured FPR on 4M absent hashes, next to the model
//     d * load * c * 2^-r (the occupied cells a query meets, each matching
//     with probability 2^-r),
//   - bytes per key: 16 / (load * c) for the table, plus 0.75 for the front
//     filter (6 bits per key), and the pair's FPR with the front filter at
//     its model 5.75% (BlockedBloomFpr(6, 4); independent bits of the hash).
// Then, per target FPR, the width FilteredDB's rule picks among its two
// layouts (12 and 16 bits): the narrower if its pair FPR at the design load
// (75% of the cells) meets the target.
//
// A scalar simulation of the layouts (cells are not packed here): it measures
// placement, refusals and FPR, which do not depend on how the cells are
// stored, not speed.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_common.h"
#include "blockbloom/math.h"

namespace {

constexpr int kD = 4;
constexpr int kBucketBits = 128;
// The library's permutation multipliers (src/dleft/dleft_counting_bloom.cc).
constexpr uint64_t kMultipliers[kD] = {0xE220A8397B1DCDAFull | 1, 0x6E789E6AA1B965F4ull | 1,
                                       0x06C45D188009454Full | 1, 0xF88BB8A8724C81ECull | 1};
// The front filter's model FPR at capacity (5.75%).
const double kFrontFpr = blockbloom::BlockedBloomFpr(6.0, 4);
constexpr double kFrontBytesPerKey = 6.0 / 8;
constexpr double kDesignLoad = 0.75;

uint64_t Mix(uint64_t i) {  // distinct 64-bit hashes (SplitMix64 finaliser, a bijection)
  uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x1234567ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
constexpr uint64_t kAbsentBase = uint64_t{1} << 40;  // absent keys: Mix(2^40 + i)
constexpr uint64_t kProbes = 4000000;

class Table {
 public:
  Table(int width, int log2_buckets)
      : r_(width - 2),
        cells_(kBucketBits / width),
        b_(log2_buckets),
        buckets_(uint64_t{1} << log2_buckets),
        rem_(kD * buckets_ * cells_, 0),
        count_(kD * buckets_ * cells_, 0) {}

  int cells_per_bucket() const { return cells_; }
  int remainder_bits() const { return r_; }
  uint64_t total_cells() const { return kD * buckets_ * cells_; }

  // 0 inserted, 1 all buckets full, 2 counter at 3.
  int Insert(uint64_t h) {
    uint64_t base[kD];
    uint32_t rem[kD];
    Locate(h, base, rem);
    if (const int64_t k = Find(base, rem); k >= 0) {
      if (count_[k] == 3) return 2;
      ++count_[k];
      return 0;
    }
    int best = -1, best_load = cells_;
    for (int i = 0; i < kD; ++i) {
      int load = 0;
      for (int c = 0; c < cells_; ++c) load += count_[base[i] + c] != 0;
      if (load < best_load) best = i, best_load = load;
    }
    if (best < 0) return 1;
    for (int c = 0; c < cells_; ++c) {
      const uint64_t k = base[best] + c;
      if (count_[k] == 0) {
        rem_[k] = rem[best];
        count_[k] = 1;
        return 0;
      }
    }
    return 1;
  }
  bool MayContain(uint64_t h) const {
    uint64_t base[kD];
    uint32_t rem[kD];
    Locate(h, base, rem);
    return Find(base, rem) >= 0;
  }

 private:
  // The first occupied cell of the candidate buckets holding the remainder
  // for its subtable, or -1.
  int64_t Find(const uint64_t* base, const uint32_t* rem) const {
    for (int i = 0; i < kD; ++i) {
      for (int c = 0; c < cells_; ++c) {
        const uint64_t k = base[i] + c;
        if (count_[k] != 0 && rem_[k] == rem[i]) return static_cast<int64_t>(k);
      }
    }
    return -1;
  }

  void Locate(uint64_t h, uint64_t* base, uint32_t* rem) const {
    const int f_bits = b_ + r_;
    const uint64_t f = h >> (64 - f_bits);
    const uint64_t mask = (uint64_t{1} << f_bits) - 1;
    for (int i = 0; i < kD; ++i) {
      const uint64_t p = (kMultipliers[i] * f) & mask;
      base[i] = (static_cast<uint64_t>(i) * buckets_ + (p >> r_)) * cells_;
      rem[i] = static_cast<uint32_t>(p & ((uint64_t{1} << r_) - 1));
    }
  }

  int r_, cells_, b_;
  uint64_t buckets_;
  std::vector<uint32_t> rem_;
  std::vector<uint8_t> count_;
};

double ModelFpr(int width, double load) {
  const int c = kBucketBits / width;
  return kD * load * c * std::ldexp(1.0, -(width - 2));
}
double TableBytesPerKey(int width, double load) {
  return (kBucketBits / 8) / (load * (kBucketBits / width));
}

}  // namespace

int main(int argc, char** argv) {
  // Quick mode (BLOCKBLOOM_BENCH_QUICK=1, or --quick): 2^10 buckets, so CI
  // only checks that it runs. Flags other than --quick (--benchmark_*) are
  // ignored.
  const bool quick = blockbloom::bench::ConsumeQuickFlag(&argc, argv);
  std::vector<int> numbers;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] != '-') numbers.push_back(std::atoi(argv[i]));
  }
  const int log2_buckets = !numbers.empty() ? numbers[0] : quick ? 10 : 16;
  const int only_width = numbers.size() > 1 ? numbers[1] : 0;
  const uint64_t probes = quick ? 100000 : kProbes;
  if (log2_buckets < 4 || log2_buckets > 24) {
    std::fprintf(stderr, "log2_buckets in [4, 24]\n");
    return 2;
  }
  std::printf("d = 4, B = 2^%d buckets per subtable, %llu absent probes, front filter %.2f%%\n\n",
              log2_buckets, static_cast<unsigned long long>(probes), 100 * kFrontFpr);
  std::printf(
      "| cell bits w | cells/bucket c | remainder r | load | keys | refused (full, counter) | "
      "d-left FPR measured | model | table B/key | + front B/key | pair FPR (x front) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int width : {16, 14, 13, 12, 11, 10}) {
    if (only_width != 0 && width != only_width) continue;
    for (double load : {0.75, 0.80, 0.85, 0.90}) {
      Table t(width, log2_buckets);
      const uint64_t n = static_cast<uint64_t>(load * static_cast<double>(t.total_cells()));
      uint64_t full = 0, overflow = 0;
      for (uint64_t i = 0; i < n; ++i) {
        const int s = t.Insert(Mix(i));
        full += s == 1;
        overflow += s == 2;
      }
      uint64_t fp = 0;
      for (uint64_t i = 0; i < probes; ++i) fp += t.MayContain(Mix(kAbsentBase + i));
      const double fpr = static_cast<double>(fp) / probes;
      std::printf(
          "| %d | %d | %d | %.0f%% | %llu | %llu (%llu, %llu) | %.4f%% | %.4f%% | %.3f | %.3f | "
          "%.4f%% |\n",
          width, t.cells_per_bucket(), t.remainder_bits(), 100 * load,
          static_cast<unsigned long long>(n), static_cast<unsigned long long>(full + overflow),
          static_cast<unsigned long long>(full), static_cast<unsigned long long>(overflow),
          100 * fpr, 100 * ModelFpr(width, load), TableBytesPerKey(width, load),
          TableBytesPerKey(width, load) + kFrontBytesPerKey, 100 * fpr * kFrontFpr);
      std::fflush(stdout);
    }
  }
  // The rule: the narrower layout when its pair FPR at the design load
  // meets the target; else 16-bit cells, at a lower load below what they
  // give at the design load.
  std::printf("\n| target FPR | width picked | pair model FPR | index B/key of capacity |\n");
  std::printf("|---|---|---|---|\n");
  for (double target : {0.01, 0.005, 0.002, 0.001, 0.0005, 0.0001, 0.00001}) {
    int picked = 16;
    double load = kDesignLoad;
    for (int width : {12, 16}) {  // FilteredDB's layouts (key_index.cc, DleftLayoutFor)
      if (ModelFpr(width, kDesignLoad) * kFrontFpr <= target) {
        picked = width;
        break;
      }
    }
    if (ModelFpr(16, kDesignLoad) * kFrontFpr > target) {
      load = kDesignLoad * target / (ModelFpr(16, kDesignLoad) * kFrontFpr);
    }
    std::printf("| %.5f%% | %d | %.5f%% | %.3f |\n", 100 * target, picked,
                100 * ModelFpr(picked, load) * kFrontFpr,
                TableBytesPerKey(picked, load) + kFrontBytesPerKey);
  }
  return 0;
}
