// The compact policies' probe of a version-2 filter on a Highway target:
// XXH3 of the key, the trailer parse and the column reads (compact/v2_probe.h)
// in one function per target, as src/blocked/key_probe.h does for the blocked
// format. The targets differ only in the instructions the compiler may use
// (BMI2 shifts and POPCNT parities from AVX2 up): the same code, the same
// answers as ParseV2 and V2MayContainHash.
//
// Thread-safety: pure functions over caller-owned memory.
#ifndef BLOCKBLOOM_COMPACT_KEY_PROBE_H_
#define BLOCKBLOOM_COMPACT_KEY_PROBE_H_

#include <cstddef>
#include <cstdint>

#include "compact/format.h"

namespace blockbloom {
namespace compact {

// What V2KeyMayMatchFn answers -1 to: false for anything but a filter of
// more than kV2TrailerSize bytes ending in a version-2 marker.
inline bool MayBeV2Filter(const char* filter, size_t filter_len) {
  return filter_len > kV2TrailerSize && IsV2Marker(static_cast<uint8_t>(filter[filter_len - 1]));
}

// 1: the key may be in the version-2 filter; 0: it is not; -1: `filter` is
// not a version-2 filter (MayBeV2Filter is false). A version-2 marker on a
// trailer that does not parse answers 1 (may match), as
// EncodedMayContainHash does. Never reads outside [filter, filter +
// filter_len).
using V2KeyMayMatchFn = int (*)(const char* key, size_t key_len, const char* filter,
                                size_t filter_len);

// The probe compiled for `target` (a bit of simd::SupportedTargets()), or
// for the baseline target (HWY_STATIC_TARGET) if `target` is not compiled:
// never nullptr.
V2KeyMayMatchFn V2KeyMayMatchForTarget(int64_t target);

}  // namespace compact
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMPACT_KEY_PROBE_H_
