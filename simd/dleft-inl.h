// Per-target Highway kernels for the d-left counting Bloom filter
// (src/blockbloom/dleft_counting_bloom.h). Included once per SIMD target by
// simd/dleft_simd.cc (foreach_target.h).
//
// A bucket is `stride` (8 or 16) cells of 16 bits, cell = (remainder << 2) |
// counter, counter 0 meaning "empty" (the filter unpacks its 12-bit cells to
// this form, 10 cells and 6 empty ones). Each 8 cells are handled with one
// 128-bit vector: one masked compare finds the cell holding a remainder, one
// compare counts the occupied cells. Integer ops only, so every target
// (EMU128, the portable scalar one, included) gives identical answers.

// Per-target include guard (the pattern Highway requires).
#if defined(BLOCKBLOOM_SIMD_DLEFT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BLOCKBLOOM_SIMD_DLEFT_INL_H_
#undef BLOCKBLOOM_SIMD_DLEFT_INL_H_
#else
#define BLOCKBLOOM_SIMD_DLEFT_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// For bucket j (cells[stride*j .. stride*(j+1)), stride a multiple of 8):
// match[j] = index of the first occupied cell whose remainder bits equal
// those of tags[j] (tags hold remainder << 2, counter bits ignored), or -1;
// load[j] = number of occupied cells.
HWY_ATTR void DleftScanBuckets(const uint16_t* HWY_RESTRICT cells, size_t stride,
                               const uint16_t* HWY_RESTRICT tags, size_t num_buckets,
                               int8_t* HWY_RESTRICT match, uint8_t* HWY_RESTRICT load) {
  // 8 lanes of u16 (one 128-bit vector) on every target but HWY_SCALAR,
  // which has one lane and loops over the cells.
  const hn::CappedTag<uint16_t, 8> d;
  const size_t lanes = hn::Lanes(d);
  const auto remainder_mask = hn::Set(d, static_cast<uint16_t>(0xFFFC));
  const auto counter_mask = hn::Set(d, static_cast<uint16_t>(0x0003));
  const auto zero = hn::Zero(d);
  for (size_t j = 0; j < num_buckets; ++j) {
    const auto tag = hn::Set(d, static_cast<uint16_t>(tags[j] & 0xFFFC));
    intptr_t first = -1;
    size_t occupied_count = 0;
    for (size_t c = 0; c < stride; c += lanes) {
      const auto bucket = hn::LoadU(d, cells + stride * j + c);
      const auto occupied = hn::Not(hn::Eq(hn::And(bucket, counter_mask), zero));
      const auto hit = hn::And(hn::Eq(hn::And(bucket, remainder_mask), tag), occupied);
      const intptr_t found = hn::FindFirstTrue(d, hit);
      if (first < 0 && found >= 0) first = static_cast<intptr_t>(c) + found;
      occupied_count += hn::CountTrue(d, occupied);
    }
    match[j] = static_cast<int8_t>(first);
    load[j] = static_cast<uint8_t>(occupied_count);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#endif  // include guard
