// Internals of the C API (blockbloom/c.h) that its tests check.
#ifndef BLOCKBLOOM_PLUGIN_C_C_API_INTERNAL_H_
#define BLOCKBLOOM_PLUGIN_C_C_API_INTERNAL_H_

#include <cstddef>

namespace blockbloom {
namespace capi_internal {

// The filter the C API stores when building a filter fails (out of memory):
// two bytes ending in 0xFF. No policy recognises 0xFF as a marker (blocked
// filters end in 0xBB, compact ones in 0xCF) and LevelDB's built-in reader
// answers "may match" for a last byte above 30, so every policy, C or C++,
// reads it as "may match": the failure costs reads, never a missed key.
inline constexpr char kMayMatchFilter[2] = {'\0', '\xFF'};
inline constexpr size_t kMayMatchFilterBytes = sizeof(kMayMatchFilter);

}  // namespace capi_internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_PLUGIN_C_C_API_INTERNAL_H_
