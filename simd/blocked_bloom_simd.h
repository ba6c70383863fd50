// Runtime-dispatched kernels for the blocked Bloom filter (simd/blocked_kernel.h
// defines the bits; simd/blocked_bloom-inl.h computes them per target).
//
// Every call runs on its kernel family's target (simd/targets.h,
// KernelTarget: the best the CPU supports among those compiled, from AVX3_DL
// down to EMU128, the portable scalar target, but AVX2 where the best is
// AVX-512). The target is resolved once per process, not per call: each
// entry point is a call through one function pointer, fetched from
// Highway's dispatch table on first use (Highway 1.0.3 has no
// HWY_DYNAMIC_POINTER). All targets produce
// identical bytes and answers; tests/simd_test.cc runs every compiled target
// against the scalar kernel.
//
// Thread-safety: pure functions over caller-owned memory. Concurrent calls
// are safe when they do not write the same filter.
#ifndef BLOCKBLOOM_SIMD_BLOCKED_BLOOM_SIMD_H_
#define BLOCKBLOOM_SIMD_BLOCKED_BLOOM_SIMD_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "blocked_kernel.h"  // blocked::ProbeArgs
#include "targets.h"         // SupportedTargets, ForceTargetForTesting

namespace blockbloom {
namespace simd {

// Prefetch window of the batch probes and of builds, in keys: a rolling
// window (the block of key j + window is prefetched while key j is probed).
// Chosen with the hint below.
inline constexpr size_t kDefaultWindow = 64;
inline constexpr size_t kMaxWindow = 1024;
// Builds and batch probes prefetch only filters above this size (about L2):
// below it the lines are already in cache.
inline constexpr uint64_t kPrefetchMinBytes = uint64_t{256} << 10;

// Prefetch hint of the batch probes: __builtin_prefetch locality 3 (T0), 2
// (T1), 1 (T2) or 0 (NTA). T2 with window 64 is within 1% of the fastest of
// the 20 hint and window pairs at 128 MiB on AMD Zen 3 (AVX2) and Zen 4
// (AVX-512), and none is faster by more than the run-to-run spread
// (kernel_bench's batch/<hint>/w<window>/absent/134217728 rows;
// scripts/kernel_memory_rounds.py repeats them).
enum class PrefetchHint { kT0 = 3, kT1 = 2, kT2 = 1, kNta = 0 };
inline constexpr PrefetchHint kDefaultPrefetchHint = PrefetchHint::kT2;

// Whether the key with this hash may be in the filter of total_bits bits at
// `data` (ceil(total_bits / 8) bytes, any alignment; nothing else is read).
// REQUIRES: total_bits > 0, 1 <= num_probes <= 16.
using MayContainHashFn = bool (*)(uint64_t hash, uint64_t total_bits, int num_probes,
                                  const uint8_t* data);

namespace internal {
// The chosen target's probe. Starts as a resolver that replaces itself on
// first call (constant-initialised, so usable during static initialisation).
// ForceTargetForTesting re-resolves it (a retarget hook, targets.h).
extern std::atomic<MayContainHashFn> g_may_contain_hash;
}  // namespace internal

// The single-key probe on the chosen target: the same answer as
// blocked::MayContainHash, the line tested as vectors (blocked_bloom-inl.h).
inline bool MayContainHash(uint64_t hash, uint64_t total_bits, int num_probes,
                           const uint8_t* data) {
  return internal::g_may_contain_hash.load(std::memory_order_relaxed)(hash, total_bits, num_probes,
                                                                      data);
}

// The same probe on the same target reading the filter from `args`
// (blocked::ProbeArgs of a filter in 512-bit blocks, total_bits > 0), for
// objects that keep their own pointer and their ProbeArgs
// (BlockedBloomFilter); resolved first if it was not yet.
using MayContainHashArgsFn = bool (*)(const blocked::ProbeArgs* args, uint64_t hash);
MayContainHashArgsFn ChosenMayContainHashArgs();

// The probe compiled for `target` (a bit of SupportedTargets()), for tests
// and benchmarks that compare targets side by side; nullptr if not compiled.
MayContainHashFn MayContainHashForTarget(int64_t target);

// The batch probe's kernel compiled for `target` (MayContainHashes's
// answers for n hashes, window already clamped to 1..kMaxWindow, locality a
// PrefetchHint's value), for benchmarks that compare targets side by side
// within one run; nullptr if not compiled.
using MayContainHashesFn = void (*)(const uint64_t* hashes, size_t n, uint64_t total_bits,
                                    int num_probes, const uint8_t* data, size_t window,
                                    int locality, bool* out);
MayContainHashesFn MayContainHashesForTarget(int64_t target);

// Sets the bits of n hashes in a filter of total_bits bits at `data`
// (ceil(total_bits / 8) bytes, any alignment). REQUIRES: 1 <= num_probes <= 16.
// With total_bits == 0 there is nothing to set and the call does nothing.
void AddHashes(const uint64_t* hashes, size_t n, uint64_t total_bits, int num_probes,
               uint8_t* data);

// out[j] = whether hashes[j] may be in the filter, probed in registers after a
// rolling prefetch `window` keys ahead (clamped to 1..kMaxWindow) with `hint`.
// `readable_bytes` is kept for source compatibility; only the filter's
// ceil(total_bits / 8) bytes are ever read. With total_bits == 0 every
// answer is false (the empty set).
void MayContainHashes(const uint64_t* hashes, size_t n, uint64_t total_bits, int num_probes,
                      const uint8_t* data, size_t readable_bytes, bool* out,
                      size_t window = kDefaultWindow, PrefetchHint hint = kDefaultPrefetchHint);

}  // namespace simd
}  // namespace blockbloom

#endif  // BLOCKBLOOM_SIMD_BLOCKED_BLOOM_SIMD_H_
