// The blocked Bloom filter's stateless kernel: hash -> block -> bits.
//
// Everything here is a pure function of (hash, total_bits, num_probes, data),
// so the same definitions serve the scalar path below (the reference every
// Highway target is tested against), every Highway target in
// simd/blocked_bloom-inl.h, and the readers of every format that embeds the
// structure. This is the bottom layer: it includes nothing from src/. Changing any constant or
// formula here changes the on-disk format (see docs/FORMAT.md): the format's
// golden tests exist to catch exactly that.
//
// Geometry. The filter is `total_bits` bits, numbered so that bit p is bit
// (p % 8) of byte p / 8. It is cut into blocks of 512 bits (one 64-byte cache
// line); the last block may be shorter, because a filter is exactly as long as
// bits-per-key asks (LevelDB's per-2KB filters hold as few as 10 keys) rather
// than padded to whole cache lines. Its block count is ceil(total_bits / 512).
//
// A key with 64-bit hash h:
//  - picks the bit p = floor(h * total_bits / 2^64) (multiply-shift range
//    reduction, Lemire 2019; no modulo, no bias worth measuring) and uses the
//    block containing p. Keys therefore land in a block in proportion to its
//    size, so a short last block is not overloaded. Only the high bits of h
//    choose the block.
//  - sets/tests k bits inside that block, derived from the low 32 bits of h:
//      x_0 = low32(h),  x_{i+1} = x_i * 0x9E3779B9 (mod 2^32)
//      bit_i = ((x_i >> 10) * block_bits) >> 22        (< block_bits)
//    For a full 512-bit block bit_i is simply the top 9 bits of x_i, the
//    scheme RocksDB's FastLocalBloom measured at 0.957% FPR for 10 bits/key
//    against 0.9535% for ideal independent probes. The 22-bit intermediate
//    keeps every product inside 32 bits, so SIMD lanes need no widening.
//
// Installed as <blockbloom/simd/blocked_kernel.h> for blockbloom/blocked_bloom_inline.h,
// which compiles the probe into its caller; not an API (see there).
#ifndef BLOCKBLOOM_SIMD_BLOCKED_KERNEL_H_
#define BLOCKBLOOM_SIMD_BLOCKED_KERNEL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "range_reduction.h"

// The probe tables below are read on every probe: hidden visibility lets
// position-independent code address them directly instead of through the GOT.
#if defined(__GNUC__)
#define BLOCKBLOOM_HIDDEN __attribute__((visibility("hidden")))
#else
#define BLOCKBLOOM_HIDDEN
#endif

namespace blockbloom {
namespace blocked {

inline constexpr uint32_t kLogBlockBits = 9;
inline constexpr uint32_t kBlockBits = 1u << kLogBlockBits;  // 512
inline constexpr uint32_t kBlockBytes = kBlockBits / 8;      // 64
inline constexpr uint32_t kProbeMultiplier = 0x9E3779B9u;    // 2^32 / phi
inline constexpr int kMinProbes = 1;
inline constexpr int kMaxProbes = 16;

// Where a key's bits live: block start (in bits; a multiple of 512) and size.
struct Block {
  uint64_t first_bit;
  uint32_t num_bits;  // in [1, 512]
};

using internal::FastRange64;  // floor(h * n / 2^64), range_reduction.h

// A filter's bits as its single-key probes read them, kept by the filter
// object (BlockedBloomFilter) and passed to the probe by pointer: a loop of
// probes passes one pointer and the key per call, and the probe loads these
// fields itself. (Passed as four arguments, reloaded from the object by the
// caller's loop after each call, the class's probe from a hash took
// 0.98-1.02x the time of FastLocalBloom's behind one call; by pointer
// 0.90-0.99x, MayContain(key) unchanged: kernel_bench probe-path/absent/*,
// 3 alternated runs of each build, AMD EPYC Zen 3.) total_bits == 0: the
// empty set.
struct ProbeArgs {
  const uint8_t* data = nullptr;  // ceil(total_bits / 8) bytes
  uint64_t total_bits = 0;
  int num_probes = 1;  // 1..kMaxProbes; 1..30 (kMaxFlatProbes) where flat
  bool flat = false;   // the flat geometry (format version 2), else 512-bit blocks
};

// REQUIRES: total_bits > 0.
inline Block LocateBlock(uint64_t hash, uint64_t total_bits) {
  const uint64_t first = (FastRange64(hash, total_bits) >> kLogBlockBits) << kLogBlockBits;
  const uint64_t left = total_bits - first;  // > 0 since p < total_bits
  return Block{first, static_cast<uint32_t>(std::min<uint64_t>(left, kBlockBits))};
}

inline uint32_t ProbeSeed(uint64_t hash) { return static_cast<uint32_t>(hash); }

// Bit offset of one probe inside a block of `block_bits` (<= 512) bits.
inline uint32_t ProbeBit(uint32_t x, uint32_t block_bits) { return ((x >> 10) * block_bits) >> 22; }

// of[i] = kMultiplier^i (mod 2^bits of Word), i < kCount: probe i's
// multiplier, tabulated, so x_i = x_0 * of[i] gives the same values as
// multiplying i times in a row, but no probe waits for the previous one's
// multiply (a 3-cycle dependency chain per probe otherwise).
template <typename Word, Word kMultiplier, int kCount = kMaxProbes>
struct ProbePowers {
  Word of[static_cast<size_t>(kCount)];
  constexpr ProbePowers() : of() {
    Word power = 1;
    for (size_t i = 0; i < static_cast<size_t>(kCount); ++i, power *= kMultiplier) of[i] = power;
  }
};
// Version 1 (512-bit blocks): 32-bit probe seeds.
BLOCKBLOOM_HIDDEN inline constexpr ProbePowers<uint32_t, kProbeMultiplier> kProbePowers{};

// The powers again, one row of kMaxProbes lanes per k: lane i of row k holds
// kProbePowers.of[i] for i < k and kProbePowers.of[0] beyond (probe 0 again:
// testing or setting a bit twice changes nothing). A vector probe therefore
// multiplies whole vectors of lanes with no mask for k: one multiply for
// k <= lanes per vector (8 on AVX2, 16 on AVX-512).
struct PaddedProbePowers {
  alignas(64) uint32_t row[kMaxProbes + 1][kMaxProbes];
  constexpr PaddedProbePowers() : row() {
    for (int k = 0; k <= kMaxProbes; ++k) {
      for (int i = 0; i < kMaxProbes; ++i) row[k][i] = kProbePowers.of[i < k ? i : 0];
    }
  }
};
// Hidden: an inline variable is otherwise reached through the GOT in
// position-independent code, one more dependent load before every vector
// probe's multiply; hidden, it is addressed relative to the instruction
// pointer (kernel_bench's hash/best/*/16384 rows).
BLOCKBLOOM_HIDDEN inline constexpr PaddedProbePowers kPaddedProbePowers{};

// 1 in each of 16 32-bit lanes, for the vector probes' `1 << bit`: one load,
// through OneLanes(). Inline and hidden, like the tables above, so that every
// shared object or program compiling the kernels has its own copy: the
// LevelDB plugin's policies and code including the public
// blockbloom/blocked_bloom_inline.h could not link to a hidden one defined in
// libblockbloom_core when it is a shared library
// (the project's hidden-imports test checks it). alignas first: clang
// rejects it after a GNU attribute.
alignas(64) BLOCKBLOOM_HIDDEN
    inline constexpr uint32_t kOneLanes[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

// kOneLanes' address, hidden from the optimiser by an empty asm: GCC 12 turns
// a constant whose value it sees into mov + vmovd + vpbroadcastd on every
// call of an out-of-line probe; loaded through this pointer it stays one
// vector load (the asm emits nothing and, having no side effects, is hoisted
// out of loops with the address).
inline const uint32_t* OneLanes() {
  const uint32_t* p = kOneLanes;
#if defined(__GNUC__)
  asm("" : "+r"(p));
#endif
  return p;
}

// Is the block of `hash` a full 512-bit block (every block but possibly the
// last)? Only the high bits of the hash decide. REQUIRES: total_bits > 0.
inline bool IsFullBlock(uint64_t hash, uint64_t total_bits) {
  return LocateBlock(hash, total_bits).num_bits == kBlockBits;
}

// ProbeBit specialised for full blocks, where it is exactly x >> 23: every
// block but a filter's last one is full.
template <bool kFullBlock>
inline uint32_t ProbeBitIn(uint32_t x, uint32_t block_bits) {
  return kFullBlock ? x >> (32 - kLogBlockBits) : ProbeBit(x, block_bits);
}

namespace detail {
template <bool kFullBlock>
inline void SetProbes(uint32_t seed, uint32_t block_bits, int num_probes, uint8_t* block) {
  for (int i = 0; i < num_probes; ++i) {
    const uint32_t bit = ProbeBitIn<kFullBlock>(seed * kProbePowers.of[i], block_bits);
    block[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
  }
}

// Branch-free: a data-dependent early exit mispredicts for absent keys (the
// first probe fails about half the time), which cost more than the probes it
// saves (about 2x slower for absent keys in cache: filter_bench's
// probe/bbpolicy/single/absent). All k loads hit one line.
template <bool kFullBlock>
inline bool TestProbes(uint32_t seed, uint32_t block_bits, int num_probes, const uint8_t* block) {
  uint32_t all = 1;
  for (int i = 0; i < num_probes; ++i) {
    const uint32_t bit = ProbeBitIn<kFullBlock>(seed * kProbePowers.of[i], block_bits);
    all &= block[bit >> 3] >> (bit & 7);
  }
  return (all & 1) != 0;
}
}  // namespace detail

// Scalar single-key operations over raw bytes. `data` holds ceil(total_bits/8)
// bytes; no alignment is required and no byte outside that range is touched.
// REQUIRES: total_bits > 0, 1 <= num_probes <= kMaxProbes.
inline void AddHash(uint64_t hash, uint64_t total_bits, int num_probes, uint8_t* data) {
  const Block b = LocateBlock(hash, total_bits);
  uint8_t* block = data + b.first_bit / 8;
  if (b.num_bits == kBlockBits) {
    detail::SetProbes<true>(ProbeSeed(hash), b.num_bits, num_probes, block);
  } else {
    detail::SetProbes<false>(ProbeSeed(hash), b.num_bits, num_probes, block);
  }
}

inline bool MayContainHash(uint64_t hash, uint64_t total_bits, int num_probes,
                           const uint8_t* data) {
  const Block b = LocateBlock(hash, total_bits);
  const uint8_t* block = data + b.first_bit / 8;
  return b.num_bits == kBlockBits
             ? detail::TestProbes<true>(ProbeSeed(hash), b.num_bits, num_probes, block)
             : detail::TestProbes<false>(ProbeSeed(hash), b.num_bits, num_probes, block);
}

// ---- The flat geometry (format version 2, small filters) ----
//
// A filter of at most kFlatMaxBytes is one block spanning all its bits: the
// k probes of a key are spread over the whole filter, as in a standard Bloom
// filter, instead of over one 512-bit block. At LevelDB's filter sizes (1-8
// cache lines) the blocked geometry buys no cache locality (the whole filter
// is one or two lines away) and pays the variance of block loads, which is
// what gave v1 its bad tails on tiny filters (docs/FORMAT.md, "Version 2").
//
// Positions: x_i = hash * kFlatProbePowers.of[i] (mod 2^64), with
// kFlatMultiplier = 2^64 / phi (odd), and bit_i = floor(x_i * total_bits /
// 2^64) (64-bit multiply-shift range reduction). x_0 = hash, so the first
// probe is the v1 block choice's bit. The high bits of h * c for distinct odd
// constants c behave as independent multiply-shift hashes of h
// (Dietzfelbinger et al. 1997), the family a 64-bit hash needs for k probes.
//
// A flat filter may have any size and up to kMaxFlatProbes probes (LevelDB's
// own cap on k): the LevelDB policies write it at every size where the
// 512-bit blocks would cost FPR against LevelDB's built-in filter, and at
// high bits per key the best k exceeds the blocked geometry's 16
// (docs/FORMAT.md, "How the LevelDB policies size a filter").
// BlockedBloomFilter never creates one; it keeps the geometry of one it
// deserialized.
inline constexpr uint64_t kFlatMaxBytes = 512;  // 8 lines: see docs/FORMAT.md
inline constexpr int kMaxFlatProbes = 30;
inline constexpr uint64_t kFlatMultiplier = 0x9E3779B97F4A7C15ull;

BLOCKBLOOM_HIDDEN inline constexpr ProbePowers<uint64_t, kFlatMultiplier, kMaxFlatProbes>
    kFlatProbePowers{};

namespace flat {
// The bit of probe i (0 <= i < kMaxFlatProbes) in flat bits of total_bits.
inline uint64_t BitOf(uint64_t hash, int i, uint64_t total_bits) {
  return FastRange64(hash * kFlatProbePowers.of[i], total_bits);
}

// REQUIRES: total_bits > 0, 1 <= num_probes <= kMaxFlatProbes; data holds
// ceil(total_bits / 8) bytes (any alignment; nothing else is touched).
inline void AddHash(uint64_t hash, uint64_t total_bits, int num_probes, uint8_t* data) {
  for (int i = 0; i < num_probes; ++i) {
    const uint64_t bit = BitOf(hash, i, total_bits);
    data[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
  }
}

// Whether probes [begin, end) are all set. Branch-free, like the blocked
// kernel's TestProbes.
inline bool ProbesSet(uint64_t hash, uint64_t total_bits, int begin, int end, const uint8_t* data) {
  uint32_t all = 1;
  for (int i = begin; i < end; ++i) {
    const uint64_t bit = BitOf(hash, i, total_bits);
    all &= data[bit >> 3] >> (bit & 7);
  }
  return (all & 1) != 0;
}

// Whether all k probes are set: the reference (branch-free).
inline bool MayContainHash(uint64_t hash, uint64_t total_bits, int num_probes,
                           const uint8_t* data) {
  return ProbesSet(hash, total_bits, 0, num_probes, data);
}

// Probes MayContainHashEarlyOut tests before its one branch.
inline constexpr int kFlatFirstProbes = 4;

// MayContainHash's answer, the first kFlatFirstProbes probes tested before
// the others: a filter at its design load has about half its bits set, so
// an absent key misses one of the first four 15 times in 16 and skips the
// other k - 4 multiplies and loads. After two probes the branch went on for
// one absent key in 4, mispredicted each time: through the LevelDB policy,
// on LevelDB's filters of 20 and 100 keys (10 bits/key, k = 7), ours over
// LevelDB's probe time for absent keys went 0.488 -> 0.369 and 0.475 ->
// 0.366 with four, present keys unchanged (0.560 -> 0.561, 0.615 -> 0.604;
// scripts/kernel_ab.py OLD NEW --policy, 6 rounds, Intel Xeon model 207).
// Three, five and all seven without a branch were slower for absent keys.
// The LevelDB policies' probe of the flat filters LevelDB keeps per 2 KiB of
// table data takes this path.
inline bool MayContainHashEarlyOut(uint64_t hash, uint64_t total_bits, int num_probes,
                                   const uint8_t* data) {
  const int first = num_probes < kFlatFirstProbes ? num_probes : kFlatFirstProbes;
  return ProbesSet(hash, total_bits, 0, first, data) &&
         ProbesSet(hash, total_bits, first, num_probes, data);
}
}  // namespace flat

}  // namespace blocked
}  // namespace blockbloom

#endif  // BLOCKBLOOM_SIMD_BLOCKED_KERNEL_H_
