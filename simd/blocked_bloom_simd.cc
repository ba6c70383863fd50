// Compile every attainable target, the portable scalar one included, whatever
// the build passes: tests prove each writes the same bytes.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "blocked_bloom_simd.h"

#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "blocked_bloom_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "blocked_bloom-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {

// Out-of-line per-target entry points (the -inl.h kernels are HWY_INLINE).
HWY_NOINLINE bool MayContainHashKernel(uint64_t hash, uint64_t total_bits, int num_probes,
                                       const uint8_t* data) {
  return MayContainHashOne(hash, total_bits, num_probes, data);
}

HWY_NOINLINE bool MayContainHashArgsKernel(const blocked::ProbeArgs* args, uint64_t hash) {
  return MayContainHashOne(hash, args->total_bits, args->num_probes, args->data);
}

HWY_NOINLINE void MayContainHashesKernel(const uint64_t* hashes, size_t n, uint64_t total_bits,
                                         int num_probes, const uint8_t* data, size_t window,
                                         int locality, bool* out) {
  // A filter that fits in L2 is probed without prefetches: its lines are
  // already in cache, and a prefetch would only cost instructions
  // (bench/kernel_bench.cc, batch/T2/w64/*/16384).
  if (total_bits / 8 <= simd::kPrefetchMinBytes) {
    for (size_t j = 0; j < n; ++j)
      out[j] = MayContainHashOne(hashes[j], total_bits, num_probes, data);
    return;
  }
  switch (locality) {
    case 3:
      return MayContainHashesRolling<3>(hashes, n, total_bits, num_probes, data, window, out);
    case 2:
      return MayContainHashesRolling<2>(hashes, n, total_bits, num_probes, data, window, out);
    case 1:
      return MayContainHashesRolling<1>(hashes, n, total_bits, num_probes, data, window, out);
    default:
      return MayContainHashesRolling<0>(hashes, n, total_bits, num_probes, data, window, out);
  }
}

HWY_NOINLINE void AddHashesKernel(const uint64_t* hashes, size_t n, uint64_t total_bits,
                                  int num_probes, uint8_t* data) {
  // A filter that fits in L2 is written without prefetches: they would only
  // cost instructions (bench/kernel_bench.cc, build/*/10000).
  const size_t window = total_bits / 8 <= simd::kPrefetchMinBytes ? 0 : simd::kDefaultWindow;
  AddHashesRolling(hashes, n, total_bits, num_probes, data, window);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "hwy/targets.h"

namespace blockbloom {
namespace simd {

HWY_EXPORT(MayContainHashKernel);
HWY_EXPORT(MayContainHashArgsKernel);
HWY_EXPORT(MayContainHashesKernel);
HWY_EXPORT(AddHashesKernel);

namespace {

using AddHashesFn = void (*)(const uint64_t* hashes, size_t n, uint64_t total_bits, int num_probes,
                             uint8_t* data);
// The probe from a hash that reads blocked::ProbeArgs, the build and the
// batch probes (filters in cache, larger ones) on their families' targets
// (null until first use; constant-initialised).
std::atomic<MayContainHashArgsFn> g_may_contain_hash_args{nullptr};
std::atomic<AddHashesFn> g_add_hashes{nullptr};
std::atomic<MayContainHashesFn> g_may_contain_hashes_in_cache{nullptr};
std::atomic<MayContainHashesFn> g_may_contain_hashes{nullptr};

void Resolve() {
  const size_t single =
      internal::DispatchTableIndex(internal::KernelTarget(KernelFamily::kSingleProbe));
  internal::g_may_contain_hash.store(HWY_DISPATCH_TABLE(MayContainHashKernel)[single],
                                     std::memory_order_relaxed);
  g_may_contain_hash_args.store(HWY_DISPATCH_TABLE(MayContainHashArgsKernel)[single],
                                std::memory_order_relaxed);
  g_add_hashes.store(HWY_DISPATCH_TABLE(AddHashesKernel)[internal::DispatchTableIndex(
                         internal::KernelTarget(KernelFamily::kBuild))],
                     std::memory_order_relaxed);
  const auto batch = [](KernelFamily family) {
    return HWY_DISPATCH_TABLE(
        MayContainHashesKernel)[internal::DispatchTableIndex(internal::KernelTarget(family))];
  };
  g_may_contain_hashes_in_cache.store(batch(KernelFamily::kBatchProbeInCache),
                                      std::memory_order_relaxed);
  g_may_contain_hashes.store(batch(KernelFamily::kBatchProbe), std::memory_order_relaxed);
}

bool ResolveAndProbe(uint64_t hash, uint64_t total_bits, int num_probes, const uint8_t* data) {
  Resolve();
  return MayContainHash(hash, total_bits, num_probes, data);
}

// ForceTargetForTesting re-resolves the pointers above.
[[maybe_unused]] const bool kRegistered = internal::RegisterRetargetHook(&Resolve);

}  // namespace

namespace internal {
std::atomic<MayContainHashFn> g_may_contain_hash{&ResolveAndProbe};
}  // namespace internal

MayContainHashArgsFn ChosenMayContainHashArgs() {
  if (g_may_contain_hash_args.load(std::memory_order_relaxed) == nullptr) Resolve();
  return g_may_contain_hash_args.load(std::memory_order_relaxed);
}

MayContainHashFn MayContainHashForTarget(int64_t target) {
  if (!internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(MayContainHashKernel)[internal::DispatchTableIndex(target)];
}

MayContainHashesFn MayContainHashesForTarget(int64_t target) {
  if (!internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(MayContainHashesKernel)[internal::DispatchTableIndex(target)];
}

void AddHashes(const uint64_t* hashes, size_t n, uint64_t total_bits, int num_probes,
               uint8_t* data) {
  if (total_bits == 0 || n == 0) return;
  AddHashesFn fn = g_add_hashes.load(std::memory_order_relaxed);
  if (fn == nullptr) {
    Resolve();
    fn = g_add_hashes.load(std::memory_order_relaxed);
  }
  fn(hashes, n, total_bits, num_probes, data);
}

void MayContainHashes(const uint64_t* hashes, size_t n, uint64_t total_bits, int num_probes,
                      const uint8_t* data, size_t /*readable_bytes*/, bool* out, size_t window,
                      PrefetchHint hint) {
  if (total_bits == 0) {
    std::fill(out, out + n, false);
    return;
  }
  window = std::clamp<size_t>(window, 1, kMaxWindow);
  std::atomic<MayContainHashesFn>& kernel =
      total_bits / 8 <= kPrefetchMinBytes ? g_may_contain_hashes_in_cache : g_may_contain_hashes;
  MayContainHashesFn fn = kernel.load(std::memory_order_relaxed);
  if (fn == nullptr) {
    Resolve();
    fn = kernel.load(std::memory_order_relaxed);
  }
  fn(hashes, n, total_bits, num_probes, data, window, static_cast<int>(hint), out);
}

}  // namespace simd
}  // namespace blockbloom
#endif  // HWY_ONCE
