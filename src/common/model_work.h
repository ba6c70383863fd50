// How much work the blocked FPR model (BlockedBloomFpr, blockbloom/math.h)
// has done on the calling thread: the Poisson terms it summed, every call
// counted, guarded answers as 0. The models are reachable from untrusted
// input, so tests bound their work by this count rather than by timing them.
#ifndef BLOCKBLOOM_COMMON_MODEL_WORK_H_
#define BLOCKBLOOM_COMMON_MODEL_WORK_H_

#include <cstdint>

namespace blockbloom {
namespace internal {

// Terms summed by BlockedBloomFpr on this thread since it started, and the
// whole-filter model's work in the same unit (BlockedFilterFpr below).
uint64_t ModelTermsOnThisThread();

// The predicted FPR of a blocked filter of total_bits bits (512-bit blocks,
// the last one shorter when total_bits is not a multiple of 512; the
// geometry of simd/blocked_kernel.h) holding num_keys keys, k probes each:
// blockbloom::BlockedBloomPredictedFpr. See math.cc for the model and its
// work bound (at most kMaxModelTerms terms' worth).
double BlockedFilterFpr(uint64_t num_keys, uint64_t total_bits, int num_probes);

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMMON_MODEL_WORK_H_
