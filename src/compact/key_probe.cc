// Compile every attainable target, as simd/ does (the dispatch table indexes
// like theirs: simd::internal::DispatchTableIndex).
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "compact/key_probe.h"

#include <string_view>

#include "common/xxh3_inline.h"
#include "compact/format.h"
#include "compact/v2_probe.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "compact/key_probe.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {

// compact::V2KeyMayMatchFn for this target: v2_probe.h's inline functions
// compiled here with the target's instructions.
HWY_NOINLINE int V2KeyMayMatchKernel(const char* key, size_t key_len, const char* filter,
                                     size_t filter_len) {
  if (!compact::MayBeV2Filter(filter, filter_len)) return -1;
  const uint64_t hash = internal::InlineHashBytes(key, key_len);
  compact::V2View view;
  if (!compact::v2::ParseTrailer(std::string_view(filter, filter_len), &view)) return 1;
  return compact::v2::MayContainHash(view, hash) ? 1 : 0;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "targets.h"

namespace blockbloom {
namespace compact {

HWY_EXPORT(V2KeyMayMatchKernel);

V2KeyMayMatchFn V2KeyMayMatchForTarget(int64_t target) {
  if (!simd::internal::IsCompiledTarget(target)) target = HWY_STATIC_TARGET;
  return HWY_DISPATCH_TABLE(V2KeyMayMatchKernel)[simd::internal::DispatchTableIndex(target)];
}

}  // namespace compact
}  // namespace blockbloom
#endif  // HWY_ONCE
