// Compile every attainable target, the portable scalar one included.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "bitwise_simd.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bitwise_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "bitwise-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
namespace blockbloom {
namespace simd {

HWY_EXPORT(OrBytes);
HWY_EXPORT(AndBytes);

void OrBytes(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n) {
  if (n == 0) return;
  HWY_DYNAMIC_DISPATCH(OrBytes)(a, b, out, n);
}

void AndBytes(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n) {
  if (n == 0) return;
  HWY_DYNAMIC_DISPATCH(AndBytes)(a, b, out, n);
}

}  // namespace simd
}  // namespace blockbloom
#endif  // HWY_ONCE
