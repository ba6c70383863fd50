// Compile every attainable target (EMU128 included) into this file, whatever
// the build system passes: tests must be able to run the scalar target.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "dleft_simd.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dleft_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "dleft-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE

namespace blockbloom {
namespace dleft_simd {

HWY_EXPORT(DleftScanBuckets);

void ScanBuckets(const uint16_t* cells, size_t stride, const uint16_t* tags, size_t num_buckets,
                 int8_t* match, uint8_t* load) {
  HWY_DYNAMIC_DISPATCH(DleftScanBuckets)(cells, stride, tags, num_buckets, match, load);
}

void ScanBucketsReference(const uint16_t* cells, size_t stride, const uint16_t* tags,
                          size_t num_buckets, int8_t* match, uint8_t* load) {
  for (size_t j = 0; j < num_buckets; ++j) {
    match[j] = -1;
    load[j] = 0;
    for (size_t c = 0; c < stride; ++c) {
      const uint16_t cell = cells[stride * j + c];
      if ((cell & 3) == 0) continue;
      ++load[j];
      if (match[j] < 0 && (cell >> 2) == (tags[j] >> 2)) match[j] = static_cast<int8_t>(c);
    }
  }
}

}  // namespace dleft_simd
}  // namespace blockbloom
#endif  // HWY_ONCE
