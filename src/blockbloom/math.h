// Parameter math for Bloom filters: n (keys), m (bits), k (probes), p (FPR).
//
// The blocked filter's false-positive rate follows the Poisson-mixture model
// of Putze, Sanders and Singler, "Cache-, Hash- and Space-Efficient Bloom
// Filters" (WEA 2007, section 3): a block of B bits receives Poisson(B/c)
// keys when the filter has c bits per key, and a query landing in a block
// that holds i keys is a false positive with probability
//   (1 - (1 - 1/B)^(k*i))^k.
// Averaged over the Poisson distribution, this is why a blocked filter needs a
// little more memory than a standard one for the same p, and why its best k is
// below ln(2) * c once c is large.
//
// Thread-safety: pure functions, safe from any thread.
#ifndef BLOCKBLOOM_MATH_H_
#define BLOCKBLOOM_MATH_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace blockbloom {

// How the standard and partitioned filters derive a key's k probe positions
// from its 64-bit hash (specified in blockbloom/standard_bloom.h). Declared
// here because the small-m FPR model below depends on it.
enum class HashScheme : uint8_t {
  kDoubleHashing = 1,
  kEnhancedDoubleHashing = 2,
};

// Standard Bloom filter FPR, (1 - e^(-k n / m))^k with m / n = bits_per_key.
// Always in [0, 1]: bits_per_key NaN or <= 0, or k < 1, answers 1.0 (nothing
// is filtered); bits_per_key = +inf answers 0.0.
double StandardBloomFpr(double bits_per_key, int num_probes);

// Bounds on the work of BlockedBloomFpr, whatever its arguments: at most
// kMaxModelTerms evaluations of the Poisson pmf per call.
inline constexpr int kMaxModelTerms = 4096;
// Above this many keys per block the model answers 1.0 (the true value is 1
// to within 1e-300 for every k <= 64 and block size <= 2^20 bits).
inline constexpr double kMaxModelKeysPerBlock = 1e15;

// Blocked Bloom filter FPR (Poisson mixture above) for blocks of
// `block_bits` bits. Answers in bounded time (at most kMaxModelTerms pmf
// evaluations) for every argument: it is reachable from untrusted files.
// bits_per_key NaN or <= 0, k < 1 or block_bits < 1: 1.0 (nothing is
// filtered); bits_per_key = +inf: 0.0. Exact sum over the Poisson pmf up to
// ~27,000 keys per block; a normalised fixed-node sum beyond.
double BlockedBloomFpr(double bits_per_key, int num_probes, int block_bits = 512);

// How many Poisson terms BlockedBloomFpr(bits_per_key, num_probes,
// block_bits) sums (each an exp, a log, an lgamma, a pow and an expm1,
// 50-100 ns on a Zen 3 core): its work, for a caller that bounds the total over many
// calls on untrusted input (blockbloom inspect). 0 when a domain guard
// answers; at most kMaxModelTerms; 31 + ~24 sqrt(block_bits / bits_per_key)
// below that.
int BlockedBloomFprTerms(double bits_per_key, int num_probes, int block_bits = 512);

// The k in [1, max_probes] that minimises BlockedBloomFpr for bits_per_key
// (ties go to the smaller k: fewer probes, faster queries). Evaluates the
// model for k up to min(max_probes, ceil(block_bits ln 2)) at most (no larger
// k can win, math.cc), and stops once the model has not fallen for four k
// in a row (it has one minimum): a few evaluations past the best k for any
// bits_per_key, max_probes and block_bits, INT_MAX included.
int OptimalBlockedProbes(double bits_per_key, int max_probes = 16, int block_bits = 512);

// ---- Classic relations between n, m, k and p (standard Bloom filter) ----
//
// With n keys in m bits and k independent probes, a bit stays clear with
// probability (1 - 1/m)^(kn) ~ e^(-kn/m), so the false-positive rate is
//   p = (1 - e^(-kn/m))^k                                        (1)
// Minimising (1) over k gives k = (m/n) ln 2 and, substituted back,
//   m = -n ln p / (ln 2)^2                                       (2)
// Solving (1) for n gives
//   n = -(m/k) ln(1 - p^(1/k))                                   (3)
// (Broder and Mitzenmacher, "Network Applications of Bloom Filters: A
// Survey", Internet Mathematics 1(4), 2004, section 2.1.)
//
// Every function validates its arguments and answers InvalidArgument for a
// NaN, an infinite value, n < 0 (or n <= 0 where noted), m <= 0, k < 1 or
// p outside (0, 1); OutOfRange when the answer does not fit its type.

// (2): bits for `num_keys` (> 0) keys at FPR `fpr`, rounded up.
absl::StatusOr<uint64_t> StandardBitsForFpr(double num_keys, double fpr);

// The integer k minimising (1) for m bits and n (> 0) keys: floor or ceil of
// (m/n) ln 2, whichever gives the lower p, and at least 1. Clamped to
// 1,000,000 (for m/n above ~1.44 million, where p underflows to 0 for every
// candidate k).
absl::StatusOr<int> StandardOptimalProbes(double num_bits, double num_keys);

// ---- The small-m model (what the filters size with and predict) ----
//
// (1) and the partitioned formula below are limits for large m. A filter of
// a few hundred bits exceeds them, measurably (docs/FORMAT.md, "Sizing for
// a target FPR": CreateForFpr(10, 0.01) sized by (1) measured 1.13% with
// enhanced double hashing, 1.49% with plain double hashing, 1.22%
// partitioned). Three effects, each O(1/m):
//  (a) Jensen's gap. (1) is E[fill]^k, but the FPR is E[fill^k]; the fill
//      of a standard filter is random (Bose, Guo, Kranakis, Maheshwari,
//      Morin, Morrison, Smid and Tang, "On the false-positive rate of Bloom
//      filters", Information Processing Letters 108(4), 2008). Computed
//      exactly, for independent probes, by a dynamic program over the number
//      of set bits after each of the k n bit insertions when m * k n <=
//      kExactFillWork; beyond, to second order: E[F^k] ~ f^k (1 + C(k,2)
//      Var F / f^2) with the exact mean f and variance of the fill fraction.
//      The partitioned filter has no gap: each slice takes exactly one bit
//      per key and the slices are independent, so its formula is exact in
//      expectation for independent probes (measured: within 1 standard error).
//  (b) Probe collapse (standard filter). Probe i of a key is
//      floor((u + i v + T_i) mod m), u and v the hash's two halves scaled to
//      [0, m) and T_i the enhanced scheme's integer offsets (0 for plain
//      double hashing). When v is within about 1/b of a multiple of m / b
//      (b < k; probability ~2 phi(b) / (b m)), the k probes fall on about b
//      tracks and test fewer distinct bits. Integrating the fill^(distinct
//      bits) over that window gives, for plain double hashing,
//        sum_{b=1}^{k-1} 2 phi(b) f^b [(1 - f^(k-b)) / ((k-b) b ln(1/f)) - f^(k-b) / b] / m;
//      the enhanced scheme's offsets 0, 0, 0, 1, 4, 10, ... leave only the
//      first three probes to collapse (b = 1):
//        2 f^(k-2) [(1 - f^2) / (2 ln(1/f)) - f^2] / m.
//  (c) Key-query coincidence. Positions of one key are pairwise
//      independent (the map (u, v) -> (u + i v, u + j v) preserves the uniform
//      measure), so the excess comes from three or more probes of a key
//      agreeing with the query's: a key whose (u, v) is close to the query's,
//      up to a stride of a multiple of 1/b of the range, covers the query's
//      probes i = r (mod b). Partitioned filter (slices of s bits, f the fill
//      the other n - 1 keys leave in a slice): to first order in the keys,
//        n / s^2 * sum_{b < k/2} phi(b) / b * sum_{r < b} f^(k - M_r) G_f(M_r),
//      M_r the probes i < k with i = r (mod b), and G_f(M) the integral over
//      the offset and stride differences (alpha, beta) of the terms of degree
//      >= 3 in a_j of prod_{j < M} (f + (1 - f) a_j), a_j = max(0, 1 - |alpha
//      + j beta|) (the chance that probe j agrees); midpoint rules on ~4,200
//      nodes (math.cc). Measured (n = 1 to 100, k = 3, 7, 10): the real
//      excess is 0.5 to 1.2 times this. Standard filter: the same sum with
//      s = m and f its fill after n - 1 keys (probe i of the key against
//      probe i of the query). Plain double hashing also aligns shifted
//      probes, i against i + t: for it the term is at least n / ((k - 1)
//      m^2), the exact chance that a key agrees with the query on the first
//      and the last probe.
//      For plain double hashing (b) and (c) are multiplied by 4/3: they leave
//      out effects measured at 15-26% of them for k = 9, 10 (and overcount
//      at k = 6, 7); the project's tests check the result.
// Each model returns the closed form itself when its corrections change it
// by less than kModelCorrectionFloor (relative): so sizes and predictions at
// large m (n = 1e6 at 1%: every scheme) are the closed forms', and the model
// costs O(k) there. The work is bounded for every argument: the dynamic
// program runs only when m * k n <= kExactFillWork, the sums over k stop at
// kMaxModelProbes (no filter has more probes).
inline constexpr double kModelCorrectionFloor = 1e-3;
inline constexpr double kExactFillWork = 1 << 16;
inline constexpr int kMaxModelProbes = 64;

// The FPR of a standard filter of m bits with k probes under `scheme` after
// n (>= 0) keys: (1) at large m, the small-m model above otherwise; in
// [0, 1]. This is what StandardBloomFilter::GeometryForFpr sizes with and
// PredictedFpr answers.
absl::StatusOr<double> StandardFprFor(int num_probes, double num_bits, double num_keys,
                                      HashScheme scheme = HashScheme::kEnhancedDoubleHashing);

// (3): how many keys m bits with k probes hold at FPR p, rounded down.
absl::StatusOr<uint64_t> StandardCapacity(double num_bits, int num_probes, double fpr);

// A partitioned filter (k slices of m/k bits, one probe per slice) sets a
// slice bit with probability 1 - (1 - k/m)^n, so p = (1 - (1 - k/m)^n)^k,
// slightly above (1) for the same m (Almeida et al. 2007, section 3), exact in
// expectation for independent probes; plus the key-query coincidence term (c)
// of the small-m model above (its probes are enhanced double hashing within
// slices of m/k bits). In [0, 1]. REQUIRES as StandardFprFor, and m >= k.
absl::StatusOr<double> PartitionedFprFor(int num_probes, double num_bits, double num_keys);

// The smallest bits-per-key (within 1e-6, in [kMinBitsPerKey, kMaxBitsPerKey]
// of blockbloom/blocked_bloom.h) at which a blocked filter with its best k
// (OptimalBlockedProbes) meets `fpr` in the mixture model (full blocks).
// OutOfRange when even 64 bits per key cannot (p below 1.11e-8, the model
// at 64 bits/key and k = 16). A filter's short last block reads higher
// (BlockedBloomPredictedFpr gives the whole filter's FPR): 1.0002x the target
// at 100,000 keys and 0.1%, 5x for a filter of 20 keys at 1e-5, 16x for
// 1,077 keys at 1e-6 (a last block of 8 bits).
// BlockedBloomFilter::CreateForFpr sizes the whole filter for the target.
absl::StatusOr<double> BlockedBitsPerKeyForFpr(double fpr);

}  // namespace blockbloom

#endif  // BLOCKBLOOM_MATH_H_
