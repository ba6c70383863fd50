// How much work the blocked FPR model (BlockedBloomFpr, blockbloom/math.h)
// has done on the calling thread: the Poisson terms it summed, every call
// counted, guarded answers as 0. The models are reachable from untrusted
// input, so tests bound their work by this count rather than by timing them.
#ifndef BLOCKBLOOM_COMMON_MODEL_WORK_H_
#define BLOCKBLOOM_COMMON_MODEL_WORK_H_

#include <cstdint>

namespace blockbloom {
namespace internal {

// Terms summed by BlockedBloomFpr on this thread since it started.
uint64_t ModelTermsOnThisThread();

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMMON_MODEL_WORK_H_
