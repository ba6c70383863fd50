// Runtime-dispatched bucket scan of the d-left counting Bloom filter.
//
// Runs on the best target the CPU supports among those compiled
// (HWY_DYNAMIC_DISPATCH); this file compiles every attainable target,
// EMU128 (portable scalar) included. tests/dleft_simd_test.cc runs each one
// against a scalar reference.
//
// Thread-safety: pure functions over caller-owned memory. The target they run
// on can be forced for tests with simd::ForceTargetForTesting (simd/targets.h),
// a global setting: see there.
#ifndef BLOCKBLOOM_SIMD_DLEFT_SIMD_H_
#define BLOCKBLOOM_SIMD_DLEFT_SIMD_H_

#include <cstddef>
#include <cstdint>

namespace blockbloom {
namespace dleft_simd {

// Cells per bucket in the scanned arrays: 8 (16-bit cells), or 16 (10
// unpacked 12-bit cells and 6 empty ones).
inline constexpr size_t kCellsPerBucket = 8;
inline constexpr size_t kWideStride = 16;

// For bucket j (cells[stride*j, stride*(j+1)), stride 8 or 16, 16-bit cells
// (remainder << 2) | counter): match[j] = first occupied cell whose
// remainder equals tags[j] >> 2, or -1; load[j] = occupied cells
// (counter != 0).
void ScanBuckets(const uint16_t* cells, size_t stride, const uint16_t* tags, size_t num_buckets,
                 int8_t* match, uint8_t* load);

// The same, written with plain loops: the reference the tests compare with.
void ScanBucketsReference(const uint16_t* cells, size_t stride, const uint16_t* tags,
                          size_t num_buckets, int8_t* match, uint8_t* load);

// Targets: simd::SupportedTargets() and friends in targets.h.

}  // namespace dleft_simd
}  // namespace blockbloom

#endif  // BLOCKBLOOM_SIMD_DLEFT_SIMD_H_
