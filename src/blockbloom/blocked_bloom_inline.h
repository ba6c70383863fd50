// Single-key probes of a BlockedBloomFilter compiled into the caller, for
// code built for a known CPU (-march=native, or -march=<cpu> of the machines
// it will run on).
//
//   #include "blockbloom/blocked_bloom_inline.h"
//   for (uint64_t h : hashes) hits += blockbloom::InlineMayContainHash(filter, h);
//
// BlockedBloomFilter::MayContainHash is one call per probe into code for the
// CPU's best target, chosen at run time: the only way a library built for
// generic x86-64 can run AVX2 or AVX-512 code. Here the same in-register probe
// (simd/blocked_bloom-inl.h, installed as <blockbloom/simd/...>) is compiled
// for the target the caller's own compiler flags select (Highway's static
// target, HWY_STATIC_TARGET) and inlined into the caller's loop: no call, the
// filter's geometry loaded once per loop, so consecutive probes overlap
// (kernel_bench's hash/inline-api row against hash/best measures the gain).
// When those flags give only the portable target (a generic x86-64 build:
// SCALAR), the functions fall back to the dispatched call, which is faster
// there.
//
// Same answers as filter.MayContainHash / MayContain for every filter (flat
// and empty ones included), in a generic build and with -march=native (the
// library's blocked_bloom_inline_test checks both).
//
// Include this header in a translation unit compiled for its static target
// only, not from inside a Highway foreach_target.h pass.
//
// The API is what this header declares. The headers it includes from
// <blockbloom/simd/...> are installed only so that the probe can be compiled
// here (and blockbloom/blocked_bloom.h includes blocked_kernel.h for the
// arguments its probes take): their names (namespaces blockbloom::blocked and
// blockbloom::HWY_NAMESPACE) are the implementation and may change in any
// release; their formulas are the blocked format itself (docs/FORMAT.md),
// which does not change.
//
// Thread-safety: as the filter's const methods (concurrent probes are safe;
// no probe may run concurrently with an Add* on the same filter).
#ifndef BLOCKBLOOM_BLOCKED_BLOOM_INLINE_H_
#define BLOCKBLOOM_BLOCKED_BLOOM_INLINE_H_

// Highway 1.0.3's detect_targets.h stops with "best baseline should be
// included in dynamic targets" when the compiler's flags enable AVX3_DL
// (-march=native on an AVX-512 VNNI/VBMI2 CPU: Ice Lake, Sapphire Rapids,
// Zen 4) unless HWY_WANT_AVX3_DL is defined. Defined here in case this header
// is the first to include Highway; a translation unit that includes Highway
// earlier defines it itself (-DHWY_WANT_AVX3_DL) when built that way.
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL
#endif

#include <cstdint>
#include <string_view>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/hash.h"
#include "blockbloom/simd/blocked_bloom-inl.h"
#include "hwy/highway.h"

namespace blockbloom {

// The target the inline probes are compiled for (a HWY_* target bit).
inline constexpr int64_t kInlineProbeTarget = HWY_STATIC_TARGET;
// Whether they run in this caller's code (false: they call the dispatched
// probe, as the generic build's portable target would be slower).
inline constexpr bool kInlineProbeIsInlined =
    HWY_STATIC_TARGET != HWY_SCALAR && HWY_STATIC_TARGET != HWY_EMU128;

// filter.MayContainHash(hash), inlined. See above.
inline bool InlineMayContainHash(const BlockedBloomFilter& filter, uint64_t hash) {
  if constexpr (kInlineProbeIsInlined) {
    // Empty and flat (format version 2) filters take the library's path.
    if (HWY_LIKELY(filter.num_bits() != 0 && !filter.flat())) {
      return HWY_STATIC_DISPATCH(MayContainHashOne)(hash, filter.num_bits(), filter.num_probes(),
                                                    filter.data());
    }
  }
  return filter.MayContainHash(hash);
}

// filter.MayContain(key): the key hashed by blockbloom::HashKey (one call),
// then the inlined probe.
inline bool InlineMayContain(const BlockedBloomFilter& filter, std::string_view key) {
  return InlineMayContainHash(filter, HashKey(key));
}

}  // namespace blockbloom

#endif  // BLOCKBLOOM_BLOCKED_BLOOM_INLINE_H_
