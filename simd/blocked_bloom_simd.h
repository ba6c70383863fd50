// Runtime-dispatched batch kernels for the blocked Bloom filter.
//
// Each call runs on the best target the CPU supports among those compiled
// (HWY_DYNAMIC_DISPATCH), from AVX3_DL down to EMU128, the portable scalar
// target. All targets produce identical bytes and answers; simd_test.cc runs
// every compiled target and checks it against src/blocked/kernel.h.
//
// Thread-safety: pure functions over caller-owned memory. Concurrent calls
// are safe when they do not write the same filter.
#ifndef BLOCKBLOOM_SIMD_BLOCKED_BLOOM_SIMD_H_
#define BLOCKBLOOM_SIMD_BLOCKED_BLOOM_SIMD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "targets.h"  // SupportedTargets, ForceTargetForTesting

namespace blockbloom {
namespace simd {

// Keys prepared per chunk. Also the default prefetch window of the probes: a
// chunk's blocks are all prefetched before the first is probed.
inline constexpr size_t kDefaultWindow = 64;
inline constexpr size_t kMaxWindow = 1024;

// Sets the bits of n hashes in a filter of total_bits bits at `data`
// (ceil(total_bits / 8) bytes, any alignment). REQUIRES: 1 <= num_probes <= 16.
// With total_bits == 0 there is nothing to set and the call does nothing.
void AddHashes(const uint64_t* hashes, size_t n, uint64_t total_bits,
               int num_probes, uint8_t* data);

// out[j] = whether hashes[j] may be in the filter. `readable_bytes` is how
// many bytes at `data` may be read; when data is 4-byte aligned and readable
// through the end of its last block (ceil(total_bits/512) * 64 bytes) and the
// filter is under 8 GiB, probes use vector gathers, otherwise byte loads.
// Both give the same answers. `window` (1..kMaxWindow) is the prefetch window.
// With total_bits == 0 every answer is false (the empty set).
void MayContainHashes(const uint64_t* hashes, size_t n, uint64_t total_bits,
                      int num_probes, const uint8_t* data,
                      size_t readable_bytes, bool* out,
                      size_t window = kDefaultWindow);

}  // namespace simd
}  // namespace blockbloom

#endif  // BLOCKBLOOM_SIMD_BLOCKED_BLOOM_SIMD_H_
