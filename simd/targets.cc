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

std::string KernelTargetName(KernelFamily family) {
  return hwy::TargetName(internal::KernelTarget(family));
}

namespace internal {
namespace {
// Constant-initialised, so registration from other static initializers is safe.
std::atomic<void (*)()> g_retarget_hooks[kMaxRetargetHooks] = {};
}  // namespace

int64_t BestTarget() {
  const int64_t supported = hwy::SupportedTargets() & HWY_TARGETS;
  return supported & -supported;
}

// Whether `family` runs on AVX2 where AVX-512 is the best target: where
// AVX3 was not measured at least as fast as AVX2 (bench/kernel_bench.cc,
// */target-AVX3 against */target-AVX2 in one run; bench/RESULTS.md, "SIMD
// target per kernel family", has the figures, the machines and the
// command). On an Intel Xeon with AVX-512: AVX2 for the single probe (the
// LevelDB policy's KeyMayMatch took 1.06-1.12x the time on AVX3) and the
// batch probe in cache (1.03-1.06x at 16 KiB); AVX-512 for the batch probe
// out of cache (0.93-1.03x) and builds (0.82x at 10,000 keys, 0.98-1.03x at
// 1-20 keys).
// Every target writes the same bytes and gives the same answers.
constexpr bool PrefersAvx2OnAvx512(KernelFamily family) {
  switch (family) {
    case KernelFamily::kSingleProbe:
    case KernelFamily::kBatchProbeInCache:
      return true;
    case KernelFamily::kBatchProbe:
    case KernelFamily::kBuild:
      return false;
  }
  return false;
}

int64_t KernelTarget(KernelFamily family) {
  const int64_t supported = hwy::SupportedTargets() & HWY_TARGETS;
  const int64_t best = supported & -supported;
#if HWY_ARCH_X86
  constexpr int64_t kAvx512 = HWY_AVX3 | HWY_AVX3_DL;
  if ((best & kAvx512) != 0 && (supported & HWY_AVX2) != 0 && PrefersAvx2OnAvx512(family)) {
    return HWY_AVX2;
  }
#endif
  (void)family;
  return best;
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
