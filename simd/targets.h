// The SIMD targets compiled into blockbloom and the one dispatch picks.
//
// Every kernel in simd/ is compiled for the same set (each *_simd.cc defines
// HWY_COMPILE_ALL_ATTAINABLE, so the portable scalar target is always among
// them) and dispatched at run time to the best the CPU supports.
//
// Thread-safety: the queries are safe from any thread. ForceTargetForTesting
// is for tests and benchmarks only and must not race with running kernels.
#ifndef BLOCKBLOOM_SIMD_TARGETS_H_
#define BLOCKBLOOM_SIMD_TARGETS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace blockbloom {
namespace simd {

// The targets compiled into this library that this CPU supports, best first
// (Highway target bits; the last is the portable scalar one).
std::vector<int64_t> SupportedTargets();
std::string TargetName(int64_t target);
// The target the next dispatched call will use.
std::string ActiveTargetName();
// The kernel families dispatched apart: each runs on KernelTarget(family).
enum class KernelFamily {
  kSingleProbe,        // one key or hash at a time (MayContainHash, the policies' KeyMayMatch)
  kBatchProbeInCache,  // MayContainHashes on filters of at most kPrefetchMinBytes (no prefetch)
  kBatchProbe,         // MayContainHashes on larger filters
  kBuild,              // AddHashes, AddKeys, the policies' CreateFilter, the compact solver
};
// The name of the target KernelTarget(family) picks.
std::string KernelTargetName(KernelFamily family);

// Restrict dispatch to `target` (0 restores the CPU's best). Every kernel
// pointer resolved once per process (the single-key probes) follows; a
// BlockedBloomFilter keeps the probe it chose when it was made, so only
// filters made after the call use the forced target for MayContain and
// MayContainHash. False, and nothing changed, unless `target` is 0 or one
// of SupportedTargets() (compiled and run by this CPU): forcing a target
// the CPU cannot run would end the process at its first instruction.
bool ForceTargetForTesting(int64_t target);

namespace internal {
// The best target this CPU supports among those compiled (honours
// ForceTargetForTesting).
int64_t BestTarget();
// The target `family`'s kernels run on: BestTarget(), except that where the
// best is an AVX-512 target (AVX3, AVX3_DL) and AVX2 is supported too, the
// families measured no faster on AVX-512 than on AVX2 on that vendor's
// cores run on AVX2 (the rule and its figures: targets.cc). A target forced by
// ForceTargetForTesting is used as is. Runs CPUID: resolve once, not per call.
int64_t KernelTarget(KernelFamily family);
// KernelTarget's rule for a CPU whose supported targets are `supported`
// (hwy::SupportedTargets() bits) and whose vendor is AMD (or Hygon, whose
// cores are AMD's) if `amd`. Pure: the rule's tests call it for CPUs they do not run on.
int64_t KernelTargetFor(KernelFamily family, int64_t supported, bool amd);
// This CPU's vendor (CPUID leaf 0) and family (leaf 1, with the extended
// family added as AMD and Intel define it); kOther and 0 off x86. Cached.
enum class CpuVendor { kOther, kAmd, kHygon };
struct CpuIdentity {
  CpuVendor vendor = CpuVendor::kOther;
  unsigned family = 0;
};
CpuIdentity ThisCpu();
// The index of `target` in a dispatch table made by HWY_EXPORT in any of
// blockbloom's translation units (all compile the same target set). REQUIRES:
// `target` is a single compiled target bit.
size_t DispatchTableIndex(int64_t target);
// Whether `target` is a single target bit compiled into blockbloom.
bool IsCompiledTarget(int64_t target);
// Modules that cache a resolved kernel pointer register their resolver here
// (once, from a static initializer); ForceTargetForTesting calls every one.
// At most kMaxRetargetHooks; returns false if full.
inline constexpr int kMaxRetargetHooks = 8;
bool RegisterRetargetHook(void (*hook)());
}  // namespace internal

}  // namespace simd
}  // namespace blockbloom

#endif  // BLOCKBLOOM_SIMD_TARGETS_H_
