// The counting Bloom filter's stateless addressing: hash -> block -> counters.
// Shared by src/counting/counting_bloom.cc and its tests; the layout is
// described in src/blockbloom/counting_bloom.h.
#ifndef BLOCKBLOOM_COUNTING_KERNEL_H_
#define BLOCKBLOOM_COUNTING_KERNEL_H_

#include <cstdint>

#include "blocked/kernel.h"  // kProbeMultiplier: the blocked filter's probe sequence
#include "range_reduction.h"

namespace blockbloom {
namespace counting {

inline constexpr uint32_t kCounterShift = 25;  // top 7 bits of x: 0..127
inline constexpr uint64_t kCounterMask = 0xF;

inline uint64_t BlockIndex(uint64_t hash, uint64_t num_blocks) {
  return internal::FastRange64(hash, num_blocks);
}
inline uint32_t ProbeSeed(uint64_t hash) { return static_cast<uint32_t>(hash); }
inline uint32_t NextProbe(uint32_t x) { return x * blocked::kProbeMultiplier; }
// Counter index in [0, 128) for probe state x.
inline uint32_t CounterIndex(uint32_t x) { return x >> kCounterShift; }
inline uint32_t WordOf(uint32_t counter) { return counter >> 4; }
inline uint32_t ShiftOf(uint32_t counter) { return (counter & 15) * 4; }

}  // namespace counting
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COUNTING_KERNEL_H_
