// How the blockbloom LevelDB policies lay out the filter LevelDB asks for
// (one per 2 KiB of data-block offsets, so usually the keys of one data
// block: 1 key with incompressible 4 KiB values, a few thousand with tiny
// ones): a pure function of (n keys, bits_per_key), O(1) per filter, never a
// search.
//
// Budget. LevelDB's built-in filter spends max(n * bits_per_key, 64) bits,
// in whole bytes, plus one byte for k. Every blockbloom filter spends the
// same bit bytes (BitBytes) plus its own 3-byte trailer: never fewer bits
// than the built-in for the same keys, 2 bytes more per filter.
//
// Bloom filters (the blocked policies, and the compact ones where a Bloom
// filter wins). The flat geometry (format version 2) is a standard Bloom
// filter with ideal 64-bit probes, so with the built-in's bits and the k best
// for those bits it is never worse than the built-in, which probes with a
// 32-bit hash and k = 0.69 * bits_per_key. The 512-bit-block geometry
// (version 1) costs FPR for locality: at 10 bits/key 0.96% against the
// built-in's 0.84% (blockbloom::BlockedBloomFpr, StandardBloomFpr). It is
// written only where the built-in is provably worse still: its 32-bit hash
// alone makes a key collide with one of n stored keys with probability
// n / 2^32, so at n >= (1.05 * blocked - standard) * 2^32 keys (1.05: the
// blocked model's measured margin) the built-in's FPR exceeds the blocked
// filter's; 6.9 million keys at 10 bits/key, 37,000 at 30. Below that, and
// for every filter of at most blocked::kFlatMaxBytes, the filter is flat.
//
// Enough is enough. Where the flat Bloom filter's FPR is below
// kNegligibleFpr (2^-20: fewer than one "may match" per million absent keys,
// a read no workload can see), more precision is not bought: the flat filter
// takes the fewest probes that keep its FPR below kNegligibleFpr, never fewer
// than the built-in's k (so never a higher model FPR than the built-in's),
// and the compact policies write that Bloom filter, not a fingerprint system.
// This is LevelDB's smallest filter, 64 bits for 1-2 keys (incompressible
// values of 2 KiB and more) at every bits_per_key, and every flat filter
// from about 29 bits/key. 1 key in 64 bits takes 6 probes where the best k
// would take 30 (FPR 5.1e-7 against 1.6e-13); 2 keys take 12, not 22. Time
// over the built-in's at 1 and 2 keys, 4 bits/key (compact_bench
// BM_BuildVs, medians of 3, Intel Xeon with AVX-512): the blocked policy
// 1.82 -> 1.08 and 1.70 -> 1.12, the compact one 2.04 -> 1.29 and 2.18 ->
// 1.27. A present key's probe reads 6 bits, not 30.
//
// Compact filters (the compact policies). Version 2 stores an R-bit
// fingerprint per key in m = floor(8 * body bytes / R) slots of a banded
// GF(2) system (compact/format.h): FPR 2^-R. The band (64 slots wide) is
// solvable for a random seed only with spare slots, growing with n: measured
// first-seed success of at least 98% with m >= n (1 + CompactSpare(n))
// (random 64-bit hashes, R = 8, 40-300 sets per n from 65 to 65,536 keys);
// systems of at most 64 slots need none (dense: each seed solves w.p. >=
// 0.29, 16 seeds are tried). R is the largest with that spare. The filter is
// compact where 2^-R is below the flat Bloom filter's FPR in the same bytes,
// else flat Bloom (at 2-3 bits/key of large sets: 39% and 24% against
// 2^-1 and 2^-2). One bit more is often solvable with less spare (measured:
// 70-80% of sets of up to 2,048 keys with 3%, 76-84% of up to 16,384 with
// 4%, 85-90% of up to 65,536 with 7%), so where the bytes leave R + 1 that
// much spare, R + 1 is tried first, with 2 seeds: half the FPR for most
// sets, at most two failed solves for the others. If no seed solves the
// system (rare by the margin), R - 1, then the flat Bloom filter, are
// written instead: at most 34 solves, never a search.
//
// Thread-safety: immutable after construction; any number of threads may
// call the const methods at once.
#ifndef BLOCKBLOOM_PLUGIN_POLICY_FILTER_SIZING_H_
#define BLOCKBLOOM_PLUGIN_POLICY_FILTER_SIZING_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "blocked/format.h"

namespace blockbloom {
namespace internal {

// A Bloom filter's layout: `bytes` bit bytes laid out as `geometry` with
// `num_probes` probes. bytes == 0 only for the empty set.
struct BloomLayout {
  uint64_t bytes = 0;
  int num_probes = 1;
  blocked::Geometry geometry = blocked::Geometry::kBlocked512;
};

// A compact policy's layout: version 2 with `fingerprint_bits` (R) in
// `total_bytes` (trailer included) when R > 0; else `bloom`; `version1`
// for the empty set and sets of more than compact::kV2MaxKeys keys where
// its model FPR is below the Bloom filter's (but the Bloom filter where its
// FPR is below kNegligibleFpr).
struct CompactLayout {
  int fingerprint_bits = 0;
  int first_fingerprint_bits = 0;  // R + 1, tried first with kFirstSeeds seeds; 0: none
  uint64_t total_bytes = 0;
  bool version1 = false;
  BloomLayout bloom;
  double bloom_fpr = 1.0;  // the model FPR of `bloom`
};

class FilterSizing {
 public:
  // bits_per_key is clamped as everywhere (ClampBitsPerKey).
  explicit FilterSizing(double bits_per_key);
  // The same, shared from a process-wide cache of the first kCachedSizings
  // bits-per-key values asked for (then made for each caller): the kept
  // layouts' FPR models are most of a policy's construction (~20 us on an
  // AMD EPYC Zen 3 for the blocked policy) and its ~8 KiB, which a program
  // that makes a policy per database it opens paid at every open.
  // Thread-safe.
  static std::shared_ptr<const FilterSizing> For(double bits_per_key);
  static constexpr size_t kCachedSizings = 64;

  double bits_per_key() const { return bits_per_key_; }

  // max(ceil(n * bits_per_key / 8), 8) bytes; 0 for n == 0; saturates.
  uint64_t BitBytes(uint64_t num_keys) const;
  // The blocked policies' filter.
  BloomLayout Bloom(uint64_t num_keys) const {
    return num_keys <= kKeptLayouts ? bloom_[num_keys] : ComputeBloom(num_keys);
  }
  // The compact policies' filter.
  CompactLayout Compact(uint64_t num_keys) const {
    return num_keys <= kKeptLayouts ? compact_[num_keys] : ComputeCompact(num_keys);
  }

  // The k of a flat filter of `bits` bits for n keys: round(ln 2 * bits / n)
  // clamped into [1, blocked::kMaxFlatProbes].
  static int FlatProbes(uint64_t num_keys, uint64_t bits);
  // Below this FPR a filter buys no more precision (see above).
  static constexpr int kNegligibleFprBits = 20;
  static constexpr double kNegligibleFpr = 1.0 / (1 << kNegligibleFprBits);
  // The k the policies write for a flat filter: FlatProbes, or where its FPR
  // is below kNegligibleFpr, the fewest probes that keep it there and at
  // least `builtin_probes` (LevelDB's k for the same bits_per_key).
  static int PolicyFlatProbes(uint64_t num_keys, uint64_t bits, int builtin_probes);
  // The standard Bloom model (1 - e^(-k n / bits))^k.
  static double FlatFpr(uint64_t num_keys, uint64_t bits, int num_probes);
  // Spare slots a version-2 system of n keys is given (see above), and the
  // least spare with which R + 1 is tried first.
  static double CompactSpare(uint64_t num_keys);
  static double FirstTrySpare(uint64_t num_keys);
  static constexpr int kFirstSeeds = 2;

  // Layouts up to this many keys are computed once, by the constructor: the
  // rounding and the FPR models (calls into libm: the portable build has no
  // SSE4.1 rounding) cost more than a 1-key filter's hashing and bits.
  // Measured at 10 bits/key, 1 key: the blocked policy's CreateFilter spent
  // 44% of its time there, the compact one's over half
  // (bench/compact_bench BM_BuildGrid, perf record -e cpu-clock).
  static constexpr uint64_t kKeptLayouts = 64;

 private:
  BloomLayout ComputeBloom(uint64_t num_keys) const;
  CompactLayout ComputeCompact(uint64_t num_keys) const;

  double bits_per_key_;
  int blocked_probes_;    // BlockedBloomProbes(bits_per_key)
  int builtin_probes_;    // LevelDB's k for bits_per_key
  double flat_max_keys_;  // blocked (version 1) only above this many keys
  std::array<BloomLayout, kKeptLayouts + 1> bloom_;
  std::array<CompactLayout, kKeptLayouts + 1> compact_;
};

// Appends the compact policies' filter of `hashes` (XXH3-64 of the keys, any
// order) for `layout` (FilterSizing::Compact(hashes.size())) to *dst: the
// order of attempts above. Version 1 consumes *hashes.
void AppendCompactLayout(const CompactLayout& layout, std::vector<uint64_t>* hashes,
                         double bits_per_key, std::string* dst);
// The same for a layout that is not version 1 (every layout of 1 to
// compact::kV2MaxKeys keys), which only reads the hashes.
// REQUIRES: !layout.version1.
void AppendCompactLayout(const CompactLayout& layout, absl::Span<const uint64_t> hashes,
                         std::string* dst);

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_PLUGIN_POLICY_FILTER_SIZING_H_
