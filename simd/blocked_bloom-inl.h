// Per-target Highway kernels for the blocked Bloom filter.
//
// Included once per SIMD target through foreach_target.h, by
// simd/blocked_bloom_simd.cc (which exports and dispatches them) and by
// tests/simd_test.cc (which tests each target by name). The math is
// simd/blocked_kernel.h's; the kernels here are HWY_INLINE so both can
// instantiate them. Integer ops only, so every target, EMU128 (the portable
// scalar one) included, computes identical bits.
//
// The single-key probe keeps the key's 64-byte line in registers: one vector
// on AVX-512, two on AVX2, four on SSE4/NEON/EMU128. One vector multiply of
// the seed by the tabulated powers (kPaddedProbePowers) gives up to a vector's
// worth of probe positions; each position's 32-bit word is selected from the
// line by a lane permute (TableLookupLanes, plus a blend per extra vector),
// its bit by a variable shift, and all are tested at once. The shape of
// RocksDB's FastLocalBloomImpl::HashMayMatchPrepared (util/bloom_impl.h),
// written here with Highway ops so that every target gets it.
//
// Only full 512-bit blocks take the vector path (64 bytes are then readable);
// a filter's short last block uses the scalar kernel, which is the reference.

// Per-target include guard (the pattern Highway requires).
#if defined(BLOCKBLOOM_SIMD_BLOCKED_BLOOM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BLOCKBLOOM_SIMD_BLOCKED_BLOOM_INL_H_
#undef BLOCKBLOOM_SIMD_BLOCKED_BLOOM_INL_H_
#else
#define BLOCKBLOOM_SIMD_BLOCKED_BLOOM_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "blocked_kernel.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The vector probe needs a compile-time lane count dividing 16 and the
// filter's little-endian bit order (bit p is bit p % 32 of 32-bit word p / 32
// only on little-endian machines). Elsewhere (HWY_SCALAR, SVE/RVV,
// big-endian) the scalar kernel runs.
#if HWY_TARGET == HWY_SCALAR || HWY_HAVE_SCALABLE || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#define BLOCKBLOOM_VECTOR_PROBE 0
#else
#define BLOCKBLOOM_VECTOR_PROBE 1
#endif

#if BLOCKBLOOM_VECTOR_PROBE
inline constexpr size_t kLineLanes = HWY_LANES(uint32_t);       // 4, 8 or 16
inline constexpr size_t kLineWords = blocked::kBlockBits / 32;  // 16
inline constexpr size_t kLineVectors = kLineWords / kLineLanes;
inline constexpr int kLogLineLanes = kLineLanes == 16 ? 4 : kLineLanes == 8 ? 3 : 2;
static_assert(kLineLanes * kLineVectors == kLineWords, "lanes must divide 16");

using LineTag = hn::FixedTag<uint32_t, kLineLanes>;
using LineVec = hn::Vec<LineTag>;

// The 32-bit words `word` (each in [0, 16)) of a line held in `line`.
HWY_INLINE LineVec WordsOfLine(const LineVec* line, LineVec word) {
  const LineTag d;
  // Highway requires indices < lanes (checked in sanitizer/debug builds),
  // although vpermd would ignore the high bits: one AND.
  const auto lane = hn::IndicesFromVec(d, hn::And(word, hn::Set(d, kLineLanes - 1)));
  LineVec words = hn::TableLookupLanes(line[0], lane);
  if (kLineVectors == 2) {
    // Word 8..15 lives in the second vector: bit 3 of the index, moved to the
    // sign bit, picks it (one shift, one blend).
    const hn::RebindToSigned<LineTag> di;
    words = hn::BitCast(
        d, hn::IfNegativeThenElse(hn::BitCast(di, hn::ShiftLeft<32 - 1 - kLogLineLanes>(word)),
                                  hn::BitCast(di, hn::TableLookupLanes(line[1], lane)),
                                  hn::BitCast(di, words)));
  } else if (kLineVectors > 2) {
    const LineVec which = hn::ShiftRight<kLogLineLanes>(word);
    for (size_t j = 1; j < kLineVectors; ++j) {
      words = hn::IfThenElse(hn::Eq(which, hn::Set(d, static_cast<uint32_t>(j))),
                             hn::TableLookupLanes(line[j], lane), words);
    }
  }
  return words;
}

// Probe bits of one vector of positions missing from the line (0 = all set).
HWY_INLINE LineVec MissingBits(const LineVec* line, LineVec seeds, const uint32_t* powers) {
  const LineTag d;
  const LineVec pos = hn::ShiftRight<32 - blocked::kLogBlockBits>(seeds * hn::Load(d, powers));
  const LineVec words = WordsOfLine(line, hn::ShiftRight<5>(pos));
  return hn::AndNot(words, hn::Set(d, 1u) << hn::And(pos, hn::Set(d, 31u)));
}
#endif  // BLOCKBLOOM_VECTOR_PROBE

// Whether all probe bits of `seed` are set in the full 512-bit block at
// `block` (64 readable bytes, any alignment). Same answer as
// blocked::detail::TestProbes<true>. REQUIRES: 1 <= num_probes <= 16.
HWY_INLINE bool TestFullBlock(const uint8_t* HWY_RESTRICT block, uint32_t seed, int num_probes) {
#if !BLOCKBLOOM_VECTOR_PROBE
  return blocked::detail::TestProbes<true>(seed, blocked::kBlockBits, num_probes, block);
#else
  const LineTag d;
  LineVec line[kLineVectors];
  for (size_t j = 0; j < kLineVectors; ++j) {
    line[j] = hn::BitCast(
        d, hn::LoadU(hn::FixedTag<uint8_t, kLineLanes * 4>(), block + j * kLineLanes * 4));
  }
  const LineVec seeds = hn::Set(d, seed);
  const uint32_t* powers = blocked::kPaddedProbePowers.row[num_probes];
  // One vector of positions covers every k up to the lane count (7 at 10
  // bits/key): straight-line code for it, a loop beyond.
  LineVec missing = MissingBits(line, seeds, powers);
  for (int i = static_cast<int>(kLineLanes); i < num_probes; i += static_cast<int>(kLineLanes)) {
    missing = hn::Or(missing, MissingBits(line, seeds, powers + i));
  }
  return hn::AllTrue(d, hn::Eq(missing, hn::Zero(d)));
#endif
}

// Sets all probe bits of `seed` in the full 512-bit block at `block` (64
// writable bytes, any alignment): blocked::detail::SetProbes<true>'s bytes.
// The key's 64-byte mask is built in registers and ORed into the line with
// one load and one store per vector, instead of k byte read-modify-writes
// whose data-dependent aliasing (two probes in one byte, ~28% of keys at
// k = 7) the CPU mispredicts. Mask word L gets bit (pos - 32 L) of probe
// position pos: a variable shift whose count is >= 32 (shifting everything
// out) for every word but the probe's own.
HWY_INLINE void SetFullBlock(uint8_t* HWY_RESTRICT block, uint32_t seed, int num_probes) {
#if !BLOCKBLOOM_VECTOR_PROBE
  blocked::detail::SetProbes<true>(seed, blocked::kBlockBits, num_probes, block);
#else
  const LineTag d;
  const hn::FixedTag<uint8_t, kLineLanes * 4> d8;
  const LineVec one = hn::Set(d, 1u);
  LineVec first_bit[kLineVectors];  // 32 * (index of each lane's word)
  LineVec mask[kLineVectors];
  for (size_t j = 0; j < kLineVectors; ++j) {
    first_bit[j] = hn::ShiftLeft<5>(hn::Iota(d, static_cast<uint32_t>(j * kLineLanes)));
    mask[j] = hn::Zero(d);
  }
  const LineVec seeds = hn::Set(d, seed);
  const uint32_t* powers = blocked::kPaddedProbePowers.row[num_probes];
  for (int i = 0; i < num_probes; i += static_cast<int>(kLineLanes)) {
    const LineVec pos =
        hn::ShiftRight<32 - blocked::kLogBlockBits>(seeds * hn::Load(d, powers + i));
    // Lanes past k repeat probe 0 (kPaddedProbePowers): setting a bit twice
    // is harmless, so every lane is used. Unrolled: the lane indices become
    // constants.
#pragma GCC unroll 16
    for (size_t p = 0; p < kLineLanes; ++p) {
      const LineVec at =
          hn::TableLookupLanes(pos, hn::IndicesFromVec(d, hn::Set(d, static_cast<uint32_t>(p))));
      for (size_t j = 0; j < kLineVectors; ++j) {
        const LineVec count = hn::Sub(at, first_bit[j]);  // wraps above 31 elsewhere
#if HWY_TARGET <= HWY_AVX2 && HWY_ARCH_X86
        // vpsllvd yields 0 for counts above 31.
        mask[j] = hn::Or(mask[j], one << count);
#else
        // Other targets leave such shifts undefined: mask them explicitly.
        mask[j] = hn::Or(mask[j], hn::IfThenElseZero(hn::Lt(count, hn::Set(d, 32u)),
                                                     one << hn::And(count, hn::Set(d, 31u))));
#endif
      }
    }
  }
  for (size_t j = 0; j < kLineVectors; ++j) {
    uint8_t* at = block + j * kLineLanes * 4;
    hn::StoreU(hn::Or(hn::LoadU(d8, at), hn::BitCast(d8, mask[j])), d8, at);
  }
#endif
}

// Single-key probe over raw filter bits: blocked::MayContainHash's answer.
// REQUIRES: total_bits > 0, 1 <= num_probes <= 16; data holds
// ceil(total_bits / 8) bytes.
HWY_INLINE bool MayContainHashOne(uint64_t hash, uint64_t total_bits, int num_probes,
                                  const uint8_t* HWY_RESTRICT data) {
  const blocked::Block b = blocked::LocateBlock(hash, total_bits);
  const uint8_t* block = data + b.first_bit / 8;
  if (HWY_LIKELY(b.num_bits == blocked::kBlockBits)) {
    return TestFullBlock(block, blocked::ProbeSeed(hash), num_probes);
  }
  return blocked::detail::TestProbes<false>(blocked::ProbeSeed(hash), b.num_bits, num_probes,
                                            block);
}

// __builtin_prefetch needs its locality as a constant: 3 = T0 (all levels),
// 2 = T1, 1 = T2, 0 = NTA.
template <int kLocality>
HWY_INLINE void PrefetchLine(const uint8_t* p) {
  __builtin_prefetch(p, 0, kLocality);
}

// out[j] = MayContainHashOne(hashes[j], ...) for j < n, with the block of key
// j + window prefetched while key j is probed (a rolling window: `window`
// lines are always in flight). REQUIRES: window >= 1 and as MayContainHashOne.
template <int kLocality>
HWY_INLINE void MayContainHashesRolling(const uint64_t* HWY_RESTRICT hashes, size_t n,
                                        uint64_t total_bits, int num_probes,
                                        const uint8_t* HWY_RESTRICT data, size_t window,
                                        bool* HWY_RESTRICT out) {
  const auto block_of = [&](uint64_t h) {
    return data + blocked::LocateBlock(h, total_bits).first_bit / 8;
  };
  const size_t ahead = std::min(window, n);
  for (size_t j = 0; j < ahead; ++j) PrefetchLine<kLocality>(block_of(hashes[j]));
  size_t j = 0;
  for (; j + window < n; ++j) {
    PrefetchLine<kLocality>(block_of(hashes[j + window]));
    out[j] = MayContainHashOne(hashes[j], total_bits, num_probes, data);
  }
  for (; j < n; ++j) out[j] = MayContainHashOne(hashes[j], total_bits, num_probes, data);
}

// Sets the bits of hashes[0, n) (blocked::AddHash for each), prefetching
// `window` keys ahead for writing; full blocks through SetFullBlock.
HWY_INLINE void AddHashesRolling(const uint64_t* HWY_RESTRICT hashes, size_t n, uint64_t total_bits,
                                 int num_probes, uint8_t* HWY_RESTRICT data, size_t window) {
  const auto block_of = [&](uint64_t h) {
    return data + blocked::LocateBlock(h, total_bits).first_bit / 8;
  };
  const size_t ahead = std::min(window, n);
  for (size_t j = 0; j < ahead; ++j) __builtin_prefetch(block_of(hashes[j]), 1, 3);
  for (size_t j = 0; j < n; ++j) {
    if (j + window < n) __builtin_prefetch(block_of(hashes[j + window]), 1, 3);
    const blocked::Block b = blocked::LocateBlock(hashes[j], total_bits);
    uint8_t* block = data + b.first_bit / 8;
    if (HWY_LIKELY(b.num_bits == blocked::kBlockBits)) {
      SetFullBlock(block, blocked::ProbeSeed(hashes[j]), num_probes);
    } else {
      blocked::detail::SetProbes<false>(blocked::ProbeSeed(hashes[j]), b.num_bits, num_probes,
                                        block);
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#undef BLOCKBLOOM_VECTOR_PROBE
#endif  // include guard
