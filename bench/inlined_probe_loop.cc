// Our single-key probe (simd/blocked_bloom-inl.h, MayContainHashOne) inlined
// into a loop on every Highway target: the kernel's cost with no call per
// key, to set beside bench/kernel_bench.cc's FastLocalInlinedLoop (the same
// bits probed by a clean-room FastLocalBloom inlined into an AVX2 loop). The
// dispatched class and policy paths pay one indirect call per key on top.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "inlined_probe_loop.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "inlined_probe_loop.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "blocked_bloom-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {

HWY_NOINLINE uint64_t CountMayContainLoop(const uint64_t* hashes, size_t n, uint64_t total_bits,
                                          int num_probes, const uint8_t* data) {
  uint64_t c = 0;
  for (size_t i = 0; i < n; ++i) c += MayContainHashOne(hashes[i], total_bits, num_probes, data);
  return c;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "targets.h"

namespace blockbloom {
namespace bench {

HWY_EXPORT(CountMayContainLoop);

uint64_t CountMayContainInlined(const uint64_t* hashes, size_t n, uint64_t total_bits,
                                int num_probes, const uint8_t* data) {
  // Resolved once: BestTarget() runs CPUID, which traps to the hypervisor in
  // a VM (tens of microseconds).
  static const auto loop = HWY_DISPATCH_TABLE(
      CountMayContainLoop)[simd::internal::DispatchTableIndex(simd::internal::BestTarget())];
  return loop(hashes, n, total_bits, num_probes, data);
}

}  // namespace bench
}  // namespace blockbloom
#endif  // HWY_ONCE
