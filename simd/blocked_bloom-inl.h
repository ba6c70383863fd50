// Per-target Highway kernels for the blocked Bloom filter.
//
// This file is included once per SIMD target by simd/blocked_bloom_simd.cc
// (foreach_target.h). The math is src/blocked/kernel.h's, written with vector
// ops across keys: lane j handles key j of a chunk. Integer ops only, so every
// target, EMU128 (the portable scalar one) included, computes identical bits.
//
// Inputs are "prepared" per key by target-independent code: the probe seed
// (low 32 bits of the hash) and the size of the key's block in bits. Arrays
// are padded by the caller to a multiple of the widest vector (16 lanes).

// Per-target include guard (the pattern Highway requires).
#if defined(BLOCKBLOOM_SIMD_BLOCKED_BLOOM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BLOCKBLOOM_SIMD_BLOCKED_BLOOM_INL_H_
#undef BLOCKBLOOM_SIMD_BLOCKED_BLOOM_INL_H_
#else
#define BLOCKBLOOM_SIMD_BLOCKED_BLOOM_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "blocked/kernel.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i * stride + j] = bit offset of probe i of key j inside its block.
// REQUIRES: n % Lanes == 0 (padding lanes may hold anything), stride >= n.
HWY_ATTR void ComputeProbeBits(const uint32_t* HWY_RESTRICT seeds,
                               const uint32_t* HWY_RESTRICT block_bits,
                               size_t n, int num_probes, size_t stride,
                               uint32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<uint32_t> d;
  const auto mult = hn::Set(d, blocked::kProbeMultiplier);
  for (size_t j = 0; j < n; j += hn::Lanes(d)) {
    auto x = hn::LoadU(d, seeds + j);
    const auto bits = hn::LoadU(d, block_bits + j);
    for (int i = 0; i < num_probes; ++i) {
      const auto bit = hn::ShiftRight<22>(hn::ShiftRight<10>(x) * bits);
      hn::StoreU(bit, d, out + static_cast<size_t>(i) * stride + j);
      x = x * mult;
    }
  }
}

// out[j] = 1 if every probe bit of key j is set, else 0. `words` is the filter
// as little-endian 32-bit words, 4-byte aligned and readable through the end
// of the last (possibly partial) block; block_word[j] is the index of key j's
// first word. REQUIRES: n % Lanes == 0; padding lanes must point inside.
HWY_ATTR void GatherProbe(const uint32_t* HWY_RESTRICT words,
                          const int32_t* HWY_RESTRICT block_word,
                          const uint32_t* HWY_RESTRICT seeds,
                          const uint32_t* HWY_RESTRICT block_bits, size_t n,
                          int num_probes, uint32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<uint32_t> d;
  const hn::RebindToSigned<decltype(d)> di;
  const auto mult = hn::Set(d, blocked::kProbeMultiplier);
  const auto low5 = hn::Set(d, 31u);
  for (size_t j = 0; j < n; j += hn::Lanes(d)) {
    auto x = hn::LoadU(d, seeds + j);
    const auto bits = hn::LoadU(d, block_bits + j);
    const auto base = hn::LoadU(di, block_word + j);
    auto all = hn::Set(d, 1u);
    for (int i = 0; i < num_probes; ++i) {
      const auto bit = hn::ShiftRight<22>(hn::ShiftRight<10>(x) * bits);
      const auto index = hn::Add(base, hn::BitCast(di, hn::ShiftRight<5>(bit)));
      const auto word = hn::GatherIndex(d, words, index);
      all = hn::And(all, hn::Shr(word, hn::And(bit, low5)));
      x = x * mult;
    }
    hn::StoreU(hn::And(all, hn::Set(d, 1u)), d, out + j);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#endif  // include guard
