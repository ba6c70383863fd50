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
// Restrict dispatch to `target` (0 restores the CPU's best).
void ForceTargetForTesting(int64_t target);

}  // namespace simd
}  // namespace blockbloom

#endif  // BLOCKBLOOM_SIMD_TARGETS_H_
