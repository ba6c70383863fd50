// Per-target Highway kernels: byte-wise OR and AND of two arrays, the whole
// of filter union and intersection (blockbloom/set_ops.h).
//
// Included once per SIMD target by simd/bitwise_simd.cc (foreach_target.h).
// Full vectors are processed with LoadU/StoreU (no alignment needed); the
// tail of fewer than Lanes(d) bytes goes through a one-lane vector of the
// same target (CappedTag<uint8_t, 1>), so every byte is computed by the same
// target code, EMU128 (the portable scalar target) included.

#if defined(BLOCKBLOOM_SIMD_BITWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BLOCKBLOOM_SIMD_BITWISE_INL_H_
#undef BLOCKBLOOM_SIMD_BITWISE_INL_H_
#else
#define BLOCKBLOOM_SIMD_BITWISE_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = Op(a[i], b[i]) for i < n. `out` may alias `a` or `b` exactly
// (in-place merge) but must not otherwise overlap them.
template <class Op>
HWY_INLINE void BytewiseBinary(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n, Op op) {
  const hn::ScalableTag<uint8_t> d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(op(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
  }
  const hn::CappedTag<uint8_t, 1> d1;
  for (; i < n; ++i) {
    hn::StoreU(op(hn::LoadU(d1, a + i), hn::LoadU(d1, b + i)), d1, out + i);
  }
}

struct OrOp {
  template <class V>
  HWY_INLINE V operator()(V x, V y) const {
    return hn::Or(x, y);
  }
};
struct AndOp {
  template <class V>
  HWY_INLINE V operator()(V x, V y) const {
    return hn::And(x, y);
  }
};

HWY_ATTR void OrBytes(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n) {
  BytewiseBinary(a, b, out, n, OrOp());
}

HWY_ATTR void AndBytes(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n) {
  BytewiseBinary(a, b, out, n, AndOp());
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#endif  // include guard
