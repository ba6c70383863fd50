// Compile every attainable target, the portable scalar one included, whatever
// the build passes: tests prove each writes the same bytes.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "blocked_bloom_simd.h"

#include <algorithm>
#include <array>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "blocked_bloom_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "blocked_bloom-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
#include "blocked/kernel.h"
#include "hwy/cache_control.h"

namespace blockbloom {
namespace simd {

HWY_EXPORT(ComputeProbeBits);
HWY_EXPORT(GatherProbe);

namespace {

constexpr size_t kPad = 16;  // widest vector: 16 x u32 (AVX-512)
constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

// One chunk of prepared keys. Lives on the stack: ~14 KiB at kMaxWindow.
struct Chunk {
  std::array<uint64_t, kMaxWindow> first_byte;
  alignas(64) std::array<uint32_t, kMaxWindow + kPad> seeds;
  alignas(64) std::array<uint32_t, kMaxWindow + kPad> block_bits;
  alignas(64) std::array<int32_t, kMaxWindow + kPad> block_word;

  // Prepares hashes[0, n) and zero-pads to a multiple of kPad. Returns the
  // padded count. Padding lanes probe bit 0 of word 0: always readable.
  size_t Prepare(const uint64_t* hashes, size_t n, uint64_t total_bits,
                 const uint8_t* prefetch_base) {
    for (size_t j = 0; j < n; ++j) {
      const blocked::Block b = blocked::LocateBlock(hashes[j], total_bits);
      first_byte[j] = b.first_bit / 8;
      seeds[j] = blocked::ProbeSeed(hashes[j]);
      block_bits[j] = b.num_bits;
      block_word[j] = static_cast<int32_t>(b.first_bit / 32);
      if (prefetch_base != nullptr) hwy::Prefetch(prefetch_base + first_byte[j]);
    }
    const size_t padded = (n + kPad - 1) / kPad * kPad;
    for (size_t j = n; j < padded; ++j) {
      seeds[j] = 0;
      block_bits[j] = 1;
      block_word[j] = 0;
    }
    return padded;
  }
};

}  // namespace

void AddHashes(const uint64_t* hashes, size_t n, uint64_t total_bits,
               int num_probes, uint8_t* data) {
  if (total_bits == 0 || n == 0) return;
  Chunk chunk;
  alignas(64) std::array<uint32_t, blocked::kMaxProbes * (kDefaultWindow + kPad)> bits;
  constexpr size_t kStride = kDefaultWindow + kPad;
  for (size_t start = 0; start < n; start += kDefaultWindow) {
    const size_t count = std::min(kDefaultWindow, n - start);
    const size_t padded = chunk.Prepare(hashes + start, count, total_bits, data);
    HWY_DYNAMIC_DISPATCH(ComputeProbeBits)(chunk.seeds.data(), chunk.block_bits.data(),
                                           padded, num_probes, kStride, bits.data());
    for (size_t j = 0; j < count; ++j) {
      uint8_t* block = data + chunk.first_byte[j];
      for (int i = 0; i < num_probes; ++i) {
        const uint32_t bit = bits[static_cast<size_t>(i) * kStride + j];
        block[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
      }
    }
  }
}

void MayContainHashes(const uint64_t* hashes, size_t n, uint64_t total_bits,
                      int num_probes, const uint8_t* data,
                      size_t readable_bytes, bool* out, size_t window) {
  if (total_bits == 0) {
    std::fill(out, out + n, false);
    return;
  }
  window = std::clamp<size_t>(window, 1, kMaxWindow);
  const uint64_t padded_bytes =
      (total_bits + blocked::kBlockBits - 1) / blocked::kBlockBits * blocked::kBlockBytes;
  const bool gather = kLittleEndian &&
                      reinterpret_cast<uintptr_t>(data) % alignof(uint32_t) == 0 &&
                      readable_bytes >= padded_bytes &&
                      padded_bytes / 4 <= static_cast<uint64_t>(INT32_MAX);
  Chunk chunk;
  alignas(64) std::array<uint32_t, kMaxWindow + kPad> found;
  for (size_t start = 0; start < n; start += window) {
    const size_t count = std::min(window, n - start);
    const size_t padded = chunk.Prepare(hashes + start, count, total_bits, data);
    if (gather) {
      HWY_DYNAMIC_DISPATCH(GatherProbe)(reinterpret_cast<const uint32_t*>(data),
                                        chunk.block_word.data(), chunk.seeds.data(),
                                        chunk.block_bits.data(), padded, num_probes,
                                        found.data());
      for (size_t j = 0; j < count; ++j) out[start + j] = found[j] != 0;
    } else {
      for (size_t j = 0; j < count; ++j) {
        out[start + j] = blocked::MayContainHash(hashes[start + j], total_bits,
                                                 num_probes, data);
      }
    }
  }
}

}  // namespace simd
}  // namespace blockbloom
#endif  // HWY_ONCE
