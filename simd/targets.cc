// Same target set as the kernels: see targets.h.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "targets.h"

#include <atomic>

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

std::string ActiveTargetName() { return hwy::TargetName(internal::BestTarget()); }

namespace internal {
namespace {
// Constant-initialised, so registration from other static initializers is safe.
std::atomic<void (*)()> g_retarget_hooks[kMaxRetargetHooks] = {};
}  // namespace

int64_t BestTarget() {
  const int64_t supported = hwy::SupportedTargets() & HWY_TARGETS;
  return supported & -supported;
}

bool IsCompiledTarget(int64_t target) {
  return (target & HWY_TARGETS) != 0 && (target & (target - 1)) == 0;
}

size_t DispatchTableIndex(int64_t target) {
  // What hwy::ChosenTarget::GetIndex returns once Update(target) has run.
  const int64_t mask = (HWY_CHOSEN_TARGET_SHIFT(target) | HWY_CHOSEN_TARGET_MASK_SCALAR) &
                       HWY_CHOSEN_TARGET_MASK_TARGETS;
  return hwy::Num0BitsBelowLS1Bit_Nonzero64(static_cast<uint64_t>(mask));
}

bool RegisterRetargetHook(void (*hook)()) {
  for (auto& slot : g_retarget_hooks) {
    void (*expected)() = nullptr;
    if (slot.compare_exchange_strong(expected, hook)) return true;
  }
  return false;
}
}  // namespace internal

void ForceTargetForTesting(int64_t target) {
  hwy::SetSupportedTargetsForTest(target);
  // Kernels resolved once per process (the single-key probes) follow too;
  // existing BlockedBloomFilters keep the probes they chose (targets.h).
  for (auto& slot : internal::g_retarget_hooks) {
    if (void (*hook)() = slot.load()) hook();
  }
}

}  // namespace simd
}  // namespace blockbloom
