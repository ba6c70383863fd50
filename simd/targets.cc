// Same target set as the kernels: see targets.h.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "targets.h"

#include <atomic>
#include <cstring>

#include "hwy/highway.h"
#include "hwy/targets.h"

#if HWY_ARCH_X86
#include <cpuid.h>
#endif

namespace blockbloom {
namespace simd {

namespace {

// hwy::SupportedTargets(), kept: Highway 1.0.3 runs CPUID (and XGETBV) on
// every call, and in a virtual machine each is an exit to the hypervisor.
// Uncached, a LevelDB policy's constructor (which picks its kernels' target)
// spent 56% of its ~60-100 us there (perf record, 2,000 constructions,
// AMD EPYC Zen 3 KVM guest); a program that creates a policy per database
// it opens paid it every time. Refreshed by ForceTargetForTesting, the only
// thing that changes the answer. 0: not read yet.
std::atomic<int64_t> g_supported{0};

int64_t CachedSupportedTargets() {
  int64_t supported = g_supported.load(std::memory_order_relaxed);
  if (supported == 0) {
    supported = hwy::SupportedTargets();  // the same answer on every thread
    g_supported.store(supported, std::memory_order_relaxed);
  }
  return supported;
}

}  // namespace

std::vector<int64_t> SupportedTargets() {
  std::vector<int64_t> targets;
  const int64_t supported = CachedSupportedTargets();
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
  const int64_t supported = CachedSupportedTargets() & HWY_TARGETS;
  return supported & -supported;
}

// Whether `family` runs on AVX2 where AVX-512 is the best target: where
// AVX3 was not measured at least as fast as AVX2 on that vendor's AVX-512
// cores (bench/kernel_bench.cc, */target-AVX3 against */target-AVX2 in one
// run; bench/RESULTS.md, "SIMD target per kernel family", has the figures,
// the machines and the command). Time on AVX3 over time on AVX2:
//   single probe and the policy's KeyMayMatch: 1.06-1.12 (Intel Xeon, load
//     6-8), 1.03-1.18 (AMD Zen 4): AVX2 on both; a second Intel Xeon (model
//     207, load under 1) measured 0.89-0.96, so AVX3 would gain up to 11%
//     there: AVX2 stays until AVX3 is at least as fast on every Intel
//     machine measured;
//   batch probe in cache (16 KiB): 1.03-1.06 and 1.01 (the two Intel
//     Xeons), 1.19-1.21 (Zen 4): AVX2 on both;
//   batch probe out of cache (1 MiB, 128 MiB): 0.93-1.03 and 0.88-1.00
//     (Intel): AVX3;
//     1.02-1.07 (Zen 4, whose 512-bit operations are two 256-bit halves):
//     AVX2 on AMD;
//   builds: 0.82-1.03 and 0.83-1.11 (Intel), 0.50-0.63 at 1-4 keys and 0.91-0.97 at
//     10^4-10^6 keys (Zen 4): AVX3 on both. The compact policy's build
//     (compact_bench BM_CompactTargets): 0.90-1.04 (Zen 4), 0.53-1.00
//     (Intel Xeon model 207, where SolveDense's AVX-512 kernel runs; not
//     yet measured on Zen 4).
// A CPU of another vendor with AVX-512 follows Intel's rule.
// Every target writes the same bytes and gives the same answers.
constexpr bool PrefersAvx2OnAvx512(KernelFamily family, bool amd) {
  switch (family) {
    case KernelFamily::kSingleProbe:
    case KernelFamily::kBatchProbeInCache:
      return true;
    case KernelFamily::kBatchProbe:
      return amd;
    case KernelFamily::kBuild:
      return false;
  }
  return false;
}

CpuIdentity ThisCpu() {
  static const CpuIdentity cpu = [] {
    CpuIdentity id;
#if HWY_ARCH_X86
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return id;
    char vendor[13] = {};
    std::memcpy(vendor, &ebx, 4);
    std::memcpy(vendor + 4, &edx, 4);
    std::memcpy(vendor + 8, &ecx, 4);
    if (std::strcmp(vendor, "AuthenticAMD") == 0) id.vendor = CpuVendor::kAmd;
    if (std::strcmp(vendor, "HygonGenuine") == 0) id.vendor = CpuVendor::kHygon;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0) {
      const unsigned base_family = (eax >> 8) & 0xF;
      id.family = base_family == 0xF ? base_family + ((eax >> 20) & 0xFF) : base_family;
    }
#endif
    return id;
  }();
  return cpu;
}

int64_t KernelTargetFor(KernelFamily family, int64_t supported, bool amd) {
  supported &= HWY_TARGETS;
  const int64_t best = supported & -supported;
#if HWY_ARCH_X86
  constexpr int64_t kAvx512 = HWY_AVX3 | HWY_AVX3_DL;
  if ((best & kAvx512) != 0 && (supported & HWY_AVX2) != 0 && PrefersAvx2OnAvx512(family, amd)) {
    return HWY_AVX2;
  }
#endif
  (void)family;
  (void)amd;
  return best;
}

int64_t KernelTarget(KernelFamily family) {
  const CpuVendor vendor = ThisCpu().vendor;
  return KernelTargetFor(family, CachedSupportedTargets(),
                         vendor == CpuVendor::kAmd || vendor == CpuVendor::kHygon);
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

namespace {
std::atomic<int64_t> g_forced_target{0};  // 0: none
}  // namespace

bool ForceTargetForTesting(int64_t target) {
  if (target != 0) {
    // Checked against the CPU's own targets, not against an earlier force.
    hwy::SetSupportedTargetsForTest(0);
    const int64_t runnable = hwy::SupportedTargets() & HWY_TARGETS;
    if ((target & (target - 1)) != 0 || (runnable & target) == 0) {
      hwy::SetSupportedTargetsForTest(g_forced_target.load());
      return false;
    }
  }
  g_forced_target.store(target);
  hwy::SetSupportedTargetsForTest(target);
  g_supported.store(hwy::SupportedTargets(), std::memory_order_relaxed);
  // Kernels resolved once per process (the single-key probes) follow too;
  // existing BlockedBloomFilters keep the probes they chose (targets.h).
  for (auto& slot : internal::g_retarget_hooks) {
    if (void (*hook)() = slot.load()) hook();
  }
  return true;
}

}  // namespace simd
}  // namespace blockbloom
