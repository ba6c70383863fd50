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

namespace blockbloom {
namespace compact {

// 1: the key may be in the version-2 filter; 0: it is not; -1: `filter` is
// not a version-2 filter (at most kV2TrailerSize bytes, or its last byte is
// not a version-2 marker). A version-2 marker on a trailer that does not
// parse answers 1 (may match), as EncodedMayContainHash does. Never reads
// outside [filter, filter + filter_len).
using V2KeyMayMatchFn = int (*)(const char* key, size_t key_len, const char* filter,
                                size_t filter_len);

// The probe compiled for `target` (a bit of simd::SupportedTargets()), or
// for the baseline target (HWY_STATIC_TARGET) if `target` is not compiled:
// never nullptr.
V2KeyMayMatchFn V2KeyMayMatchForTarget(int64_t target);

}  // namespace compact
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMPACT_KEY_PROBE_H_
