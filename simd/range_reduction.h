// Range reduction shared by every filter: the blocked kernel here in simd/
// (the bottom layer) and every structure in src/.
//
// Thread-safety: pure functions, safe from any thread.
//
// Installed as <blockbloom/simd/range_reduction.h> for blockbloom/blocked_bloom_inline.h,
// which compiles the probe into its caller; not an API (see there).
#ifndef BLOCKBLOOM_SIMD_RANGE_REDUCTION_H_
#define BLOCKBLOOM_SIMD_RANGE_REDUCTION_H_

#include <cstdint>

namespace blockbloom {
namespace internal {

// floor(h * n / 2^64): maps a uniform 64-bit h onto [0, n) by multiply-shift
// (Lemire, "Fast Random Integer Generation in an Interval", ACM TOMACS 2019),
// with no modulo bias and no division. Uses the high bits of h. Part of every
// serialized format that uses it: changing it changes the formats.
// (__extension__: an installed header, compiled by users with -Wpedantic.)
inline uint64_t FastRange64(uint64_t h, uint64_t n) {
  __extension__ typedef unsigned __int128 Uint128;
  return static_cast<uint64_t>((static_cast<Uint128>(h) * n) >> 64);
}

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_SIMD_RANGE_REDUCTION_H_
