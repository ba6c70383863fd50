// Same target set as the kernels: see targets.h.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "targets.h"

#include "blocked_bloom_simd.h"

#include "hwy/highway.h"
#include "hwy/targets.h"

namespace blockbloom {
namespace simd {

std::vector<int64_t> SupportedTargets() {
  std::vector<int64_t> targets;
  const int64_t supported = hwy::SupportedTargets();
  for (int64_t bits = HWY_TARGETS & supported; bits != 0; bits &= bits - 1) {
    targets.push_back(bits & -bits);  // lowest bit first = best target first
  }
  return targets;
}

std::string TargetName(int64_t target) { return hwy::TargetName(target); }

std::string ActiveTargetName() {
  const int64_t supported = hwy::SupportedTargets() & HWY_TARGETS;
  return hwy::TargetName(supported & -supported);
}

void ForceTargetForTesting(int64_t target) {
  hwy::SetSupportedTargetsForTest(target);
  // Kernels resolved once per process (the single-key probe) follow too.
  internal::ResolveBlockedKernels();
}

}  // namespace simd
}  // namespace blockbloom
