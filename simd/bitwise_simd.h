// Runtime-dispatched byte-wise OR / AND (HWY_DYNAMIC_DISPATCH over every
// compiled target, EMU128 included). All targets give identical bytes;
// tests/set_ops_test.cc checks each one (simd::ForceTargetForTesting in
// simd/targets.h selects it).
//
// Thread-safety: pure functions over caller-owned memory; concurrent calls
// are safe when they do not write the same bytes.
#ifndef BLOCKBLOOM_SIMD_BITWISE_SIMD_H_
#define BLOCKBLOOM_SIMD_BITWISE_SIMD_H_

#include <cstddef>
#include <cstdint>

namespace blockbloom {
namespace simd {

// out[i] = a[i] | b[i] (resp. &) for i < n. `out` may be `a` or `b` (in
// place) but must not partially overlap either. n may be 0 (pointers then
// unused and may be null).
void OrBytes(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n);
void AndBytes(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n);

}  // namespace simd
}  // namespace blockbloom

#endif  // BLOCKBLOOM_SIMD_BITWISE_SIMD_H_
