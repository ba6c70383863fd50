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

namespace blockbloom {

// Standard Bloom filter FPR, (1 - e^(-k n / m))^k. Requires m > 0, k >= 1.
double StandardBloomFpr(double bits_per_key, int num_probes);

// Blocked Bloom filter FPR (Poisson mixture above) for blocks of
// `block_bits` bits. Requires bits_per_key > 0, k >= 1, block_bits >= 1.
double BlockedBloomFpr(double bits_per_key, int num_probes,
                       int block_bits = 512);

// The k in [1, max_probes] that minimises BlockedBloomFpr for bits_per_key
// (ties go to the smaller k: fewer probes, faster queries).
int OptimalBlockedProbes(double bits_per_key, int max_probes = 16,
                         int block_bits = 512);

}  // namespace blockbloom

#endif  // BLOCKBLOOM_MATH_H_
