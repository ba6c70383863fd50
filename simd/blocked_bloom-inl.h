// Per-target Highway kernels for the blocked Bloom filter.
//
// Included once per SIMD target through foreach_target.h, by
// simd/blocked_bloom_simd.cc (which exports and dispatches them) and by
// the per-target SIMD tests (which test each target by name). The math is
// simd/blocked_kernel.h's; the kernels here are HWY_INLINE so both can
// instantiate them. Integer ops only, so every target, EMU128 (the portable
// scalar one) included, computes identical bits.
//
// The single-key probe keeps the key's 64-byte line in registers: one vector
// on AVX-512, two on AVX2, four on SSE4/NEON/EMU128. One vector multiply of
// the seed by the tabulated powers (kPaddedProbePowers) gives up to a
// vector's worth of probe positions; each position's 32-bit word is selected
// from the line by a lane permute (TableLookupLanes, plus a blend per extra
// vector), its bit by a variable shift, and all are tested at once
// (AllBitsSet). The shape of RocksDB's
// FastLocalBloomImpl::HashMayMatchPrepared (util/bloom_impl.h), written here
// with Highway ops so that every target gets it.
//
// Only full 512-bit blocks take the vector path (64 bytes are then readable);
// a filter's short last block uses the scalar kernel, which is the reference.
//
// Installed as <blockbloom/simd/blocked_bloom-inl.h> for blockbloom/blocked_bloom_inline.h,
// which compiles the probe into its caller; not an API (see there).

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
#include <cstring>

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

// A probe's position in the line comes straight from its 32-bit value x
// (blocked_kernel.h: bit = x >> 23 for a full block): its 32-bit word is
// x >> 28 and its bit in that word is bits 23..27 of x. On two-vector targets
// the word's bit 3, which picks the vector, is x's sign bit.

// Lane indices for TableLookupLanes from word numbers in [0, 16). vpermd
// (AVX2, AVX-512) reads only the low log2(lanes) bits of each index, so x86
// release builds pass the words as they are; other targets' lookups, and
// Highway's debug-build checks, need them in range: one AND.
HWY_INLINE auto LanesOf(LineVec word) {
  const LineTag d;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !HWY_IS_DEBUG_BUILD
  return hn::IndicesFromVec(d, word);
#else
  return hn::IndicesFromVec(d, hn::And(word, hn::Set(d, kLineLanes - 1)));
#endif
}

// The 32-bit words that the probes with values `x` address in the line.
HWY_INLINE LineVec WordsOfLine(const LineVec* line, LineVec x) {
  const LineTag d;
  const LineVec word = hn::ShiftRight<32 - 4>(x);
  const auto lane = LanesOf(word);
  LineVec words = hn::TableLookupLanes(line[0], lane);
  if (kLineVectors == 2) {
    // Words 8..15 live in the second vector: x's sign bit picks it (a blend).
    const hn::RebindToSigned<LineTag> di;
    words =
        hn::BitCast(d, hn::IfNegativeThenElse(hn::BitCast(di, x),
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

// One vector of probes with values `x`: each probe's 32-bit word of the
// line, and its bit in that word (bits 23..27 of x).
struct ProbeWords {
  LineVec words;
  LineVec bits;
};
HWY_INLINE ProbeWords ProbesOf(const LineVec* line, LineVec seeds, const uint32_t* powers) {
  const LineTag d;
  const LineVec x = seeds * hn::Load(d, powers);
  const LineVec bit = hn::ShiftRight<32 - 5>(hn::ShiftLeft<4>(x));  // bits 23..27 of x
  return ProbeWords{WordsOfLine(line, x), hn::Load(d, blocked::OneLanes()) << bit};
}

// Whether every bit of v is clear. x86 targets with PTEST answer in one
// instruction (vptest + setz) where the portable form compares, moves the
// mask out and compares again: three instructions more on every probe.
HWY_INLINE bool NoBitSet(LineVec v) {
#if HWY_TARGET == HWY_AVX2
  return _mm256_testz_si256(v.raw, v.raw) != 0;
#elif HWY_TARGET == HWY_SSE4
  return _mm_testz_si128(v.raw, v.raw) != 0;
#else
  const LineTag d;
  return hn::AllTrue(d, hn::Eq(v, hn::Zero(d)));
#endif
}

// Whether every probe's bit is set in its word: NoBitSet(AndNot(words,
// bits)), which PTEST's carry flag answers in one instruction
// (vptest + setc: CF = (~words & bits) == 0), the test of RocksDB's AVX2
// FastLocalBloom probe.
HWY_INLINE bool AllBitsSet(const ProbeWords& p) {
#if HWY_TARGET == HWY_AVX2
  return _mm256_testc_si256(p.words.raw, p.bits.raw) != 0;
#elif HWY_TARGET == HWY_SSE4
  return _mm_testc_si128(p.words.raw, p.bits.raw) != 0;
#else
  return NoBitSet(hn::AndNot(p.words, p.bits));
#endif
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
  // The line is loaded into registers first. (Loading each vector where its
  // permute reads it lets GCC fold the loads into vpermd, three instructions
  // fewer per probe, but it is slower in cache on Zen 3: compare
  // hash/best-inlined against hash/fastlocal-avx2-inlined at 16384 bytes with
  // kernel_ab.py OLD NEW --sizes 16384.)
  LineVec line[kLineVectors];
  for (size_t j = 0; j < kLineVectors; ++j) {
    line[j] = hn::BitCast(
        d, hn::LoadU(hn::FixedTag<uint8_t, kLineLanes * 4>(), block + j * kLineLanes * 4));
  }
  const LineVec seeds = hn::Set(d, seed);
  const uint32_t* powers = blocked::kPaddedProbePowers.row[num_probes];
  // One vector of positions covers every k up to the lane count (7 at 10
  // bits/key): straight-line code for it, a loop beyond.
  const ProbeWords first = ProbesOf(line, seeds, powers);
  if (HWY_LIKELY(num_probes <= static_cast<int>(kLineLanes))) return AllBitsSet(first);
  LineVec missing = hn::AndNot(first.words, first.bits);
  for (int i = static_cast<int>(kLineLanes); i < num_probes; i += static_cast<int>(kLineLanes)) {
    const ProbeWords more = ProbesOf(line, seeds, powers + i);
    missing = hn::Or(missing, hn::AndNot(more.words, more.bits));
  }
  return NoBitSet(missing);
#endif
}

// The build side sets a key's k bits with one OR of the whole line where a
// variable shift is one instruction that gives 0 for counts of 32 and more
// (vpsllvd: AVX2 and AVX-512, Intel SDM "VPSLLVD"); elsewhere (SSE4, NEON,
// EMU128, scalar) each probe sets its word with a 32-bit read-modify-write.
#if BLOCKBLOOM_VECTOR_PROBE && HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define BLOCKBLOOM_VECTOR_BUILD 1
#else
#define BLOCKBLOOM_VECTOR_BUILD 0
#endif

#if BLOCKBLOOM_VECTOR_BUILD
// The first bit of each 32-bit word of the line: lane j of vector v holds
// 32 * (v * kLineLanes + j).
struct LineWordBits {
  alignas(64) uint32_t of[kLineWords];
  constexpr LineWordBits() : of() {
    for (size_t j = 0; j < kLineWords; ++j) of[j] = static_cast<uint32_t>(32 * j);
  }
};
BLOCKBLOOM_HIDDEN inline constexpr LineWordBits kLineWordBits{};

// v << count per lane, 0 where count >= 32 as unsigned: one vpsllvd.
HWY_INLINE LineVec ShiftLeftOrZero(LineVec v, LineVec count) {
#if HWY_TARGET == HWY_AVX2
  return LineVec{_mm256_sllv_epi32(v.raw, count.raw)};
#else  // AVX-512 targets
  return LineVec{_mm512_sllv_epi32(v.raw, count.raw)};
#endif
}
#endif  // BLOCKBLOOM_VECTOR_BUILD

// Sets all probe bits of `seed` in the full 512-bit block at `block` (64
// writable bytes, any alignment): blocked::detail::SetProbes<true>'s bytes.
//
// AVX2 / AVX-512: the key's 64-byte mask is built in registers and ORed into
// the line with one load and one store per vector. One vector multiply of
// the seed by the tabulated powers gives every probe's bit position
// p = x >> 23 in [0, 512); for each probe, lane j of the mask gets
// 1 << (p - 32 j), which the variable shift makes 0 in every lane but the
// probe's word (p - 32 j wraps to >= 32 below it, and is >= 32 above it).
// With the keys hashed in the same loop (key_probe-inl.h, AddKeys), the
// hash's integer work overlaps the mask's vector work, which makes it faster
// than one 32-bit read-modify-write per probe on Zen 3 (AVX2) from 10,000 to
// 1,000,000 keys (build/bbpolicy-best/* rows; kernel_ab.py OLD NEW
// --build).
//
// Elsewhere: each probe ORs its bit into its 32-bit word (little-endian, as
// the vector probe reads the words).
HWY_INLINE void SetFullBlock(uint8_t* HWY_RESTRICT block, uint32_t seed, int num_probes) {
#if BLOCKBLOOM_VECTOR_BUILD
  const LineTag d;
  const hn::FixedTag<uint8_t, kLineLanes * 4> d8;
  const uint32_t* powers = blocked::kPaddedProbePowers.row[num_probes];
  const LineVec seeds = hn::Set(d, seed);
  // Bit positions of probes [0, 16): one vector covers k up to the lanes.
  alignas(64) uint32_t position[blocked::kMaxProbes];
  hn::Store(hn::ShiftRight<32 - blocked::kLogBlockBits>(seeds * hn::Load(d, powers)), d, position);
  if (HWY_UNLIKELY(num_probes > static_cast<int>(kLineLanes))) {
    for (size_t i = kLineLanes; i < blocked::kMaxProbes; i += kLineLanes) {
      hn::Store(hn::ShiftRight<32 - blocked::kLogBlockBits>(seeds * hn::Load(d, powers + i)), d,
                position + i);
    }
  }
  const LineVec one = hn::Set(d, 1u);
  LineVec mask[kLineVectors];
  for (size_t j = 0; j < kLineVectors; ++j) mask[j] = hn::Zero(d);
  for (int i = 0; i < num_probes; ++i) {
    const LineVec p = hn::Set(d, position[i]);  // a broadcast load
    for (size_t j = 0; j < kLineVectors; ++j) {
      const LineVec count = hn::Sub(p, hn::Load(d, kLineWordBits.of + j * kLineLanes));
      mask[j] = hn::Or(mask[j], ShiftLeftOrZero(one, count));
    }
  }
  for (size_t j = 0; j < kLineVectors; ++j) {
    uint8_t* at = block + j * kLineLanes * 4;
    hn::StoreU(hn::BitCast(d8, hn::Or(hn::BitCast(d, hn::LoadU(d8, at)), mask[j])), d8, at);
  }
#elif !BLOCKBLOOM_VECTOR_PROBE
  blocked::detail::SetProbes<true>(seed, blocked::kBlockBits, num_probes, block);
#else
  for (int i = 0; i < num_probes; ++i) {
    const uint32_t x = seed * blocked::kProbePowers.of[i];
    uint8_t* at = block + 4 * (x >> 28);
    uint32_t word;
    std::memcpy(&word, at, sizeof(word));
    word |= 1u << ((x >> 23) & 31);
    std::memcpy(at, &word, sizeof(word));
  }
#endif
}

// Sets the bits of one hash: blocked::AddHash's bytes, full blocks through
// SetFullBlock. REQUIRES: total_bits > 0, 1 <= num_probes <= 16; data holds
// ceil(total_bits / 8) writable bytes.
HWY_INLINE void AddHashOne(uint64_t hash, uint64_t total_bits, int num_probes,
                           uint8_t* HWY_RESTRICT data) {
  const blocked::Block b = blocked::LocateBlock(hash, total_bits);
  uint8_t* block = data + b.first_bit / 8;
  if (HWY_LIKELY(b.num_bits == blocked::kBlockBits)) {
    SetFullBlock(block, blocked::ProbeSeed(hash), num_probes);
  } else {
    blocked::detail::SetProbes<false>(blocked::ProbeSeed(hash), b.num_bits, num_probes, block);
  }
}

// Sets the bits of hash_at(0..n) in a filter that is one block of
// block_bits <= 512 bits, so that every key lands in it: blocked::AddHash's
// bytes. data holds ceil(block_bits / 8) writable bytes.
//
// AVX2 / AVX-512: every key's mask (SetFullBlock's shifts, with the block's
// ProbeBit positions) is ORed into registers and the filter's bytes are
// written once at the end. The per-probe read-modify-writes of the other
// path all land in the same few bytes, each waiting for the last store to
// them (build/class-best/20 in kernel_bench measures this path). This is the
// class's build of filters of up to ~50 keys (it writes version 1, one short
// block); the policies write such filters flat. Elsewhere: per key, as
// AddHashOne.
// HashAt: size_t -> uint64_t. REQUIRES: 1 <= block_bits <= 512,
// 1 <= num_probes <= 16.
template <typename HashAt>
HWY_INLINE void AddHashesToOneBlock(size_t n, HashAt&& hash_at, uint32_t block_bits, int num_probes,
                                    uint8_t* HWY_RESTRICT data) {
#if BLOCKBLOOM_VECTOR_BUILD
  const LineTag d;
  const uint32_t* powers = blocked::kPaddedProbePowers.row[num_probes];
  const LineVec one = hn::Set(d, 1u);
  const LineVec bits = hn::Set(d, block_bits);
  LineVec mask[kLineVectors];
  for (size_t j = 0; j < kLineVectors; ++j) mask[j] = hn::Zero(d);
  alignas(64) uint32_t position[blocked::kMaxProbes];
  for (size_t key = 0; key < n; ++key) {
    const LineVec seeds = hn::Set(d, blocked::ProbeSeed(hash_at(key)));
    for (int i = 0; i < num_probes; i += static_cast<int>(kLineLanes)) {
      // blocked::ProbeBit: ((x >> 10) * block_bits) >> 22, inside 32 bits.
      const LineVec x = seeds * hn::Load(d, powers + i);
      hn::Store(hn::ShiftRight<22>(hn::ShiftRight<10>(x) * bits), d, position + i);
    }
    // SetFullBlock's mask loop, written out in both: as one function taking
    // the mask array, GCC 12 builds slower in both (kernel_ab.py OLD
    // NEW --build, build/*-best/10000).
    for (int i = 0; i < num_probes; ++i) {
      const LineVec p = hn::Set(d, position[i]);
      for (size_t j = 0; j < kLineVectors; ++j) {
        const LineVec count = hn::Sub(p, hn::Load(d, kLineWordBits.of + j * kLineLanes));
        mask[j] = hn::Or(mask[j], ShiftLeftOrZero(one, count));
      }
    }
  }
  const hn::FixedTag<uint8_t, kLineLanes * 4> d8;
  alignas(64) uint8_t bytes[blocked::kBlockBytes];
  for (size_t j = 0; j < kLineVectors; ++j) {
    hn::Store(hn::BitCast(d8, mask[j]), d8, bytes + j * kLineLanes * 4);
  }
  const size_t num_bytes = (block_bits + 7) / 8;
  for (size_t b = 0; b < num_bytes; ++b) data[b] |= bytes[b];
#else
  for (size_t key = 0; key < n; ++key) AddHashOne(hash_at(key), block_bits, num_probes, data);
#endif
}

// The largest filter AddHashesByteMap builds: a flat filter's bits
// (kFlatMaxBytes, 8 lines), one byte of map per bit.
inline constexpr uint64_t kByteMapMaxBits = blocked::kFlatMaxBytes * 8;

// Marks the probe bits of `hash` in a byte map of the filter's bits
// (map[p] = 1 for each probe bit p): blocked::flat::AddHash's bits if kFlat,
// else blocked::AddHash's.
template <bool kFlat>
HWY_INLINE void MarkProbes(uint64_t hash, uint64_t total_bits, int num_probes,
                           uint8_t* HWY_RESTRICT map) {
  if (kFlat) {
    for (int i = 0; i < num_probes; ++i) map[blocked::flat::BitOf(hash, i, total_bits)] = 1;
    return;
  }
  const blocked::Block b = blocked::LocateBlock(hash, total_bits);
  uint8_t* HWY_RESTRICT block = map + b.first_bit;
  const uint32_t seed = blocked::ProbeSeed(hash);
  if (HWY_LIKELY(b.num_bits == blocked::kBlockBits)) {
    for (int i = 0; i < num_probes; ++i) {
      block[blocked::ProbeBitIn<true>(seed * blocked::kProbePowers.of[i], b.num_bits)] = 1;
    }
  } else {
    for (int i = 0; i < num_probes; ++i) {
      block[blocked::ProbeBitIn<false>(seed * blocked::kProbePowers.of[i], b.num_bits)] = 1;
    }
  }
}

// Sets the bits of hash_at(0..n) in a filter of at most kByteMapMaxBits
// bits, flat or blocked (blocked::flat::AddHash or blocked::AddHash for
// each: the same bytes).
//
// Every probe's bit is first marked in a byte map, one byte per filter bit,
// by a plain store; the map is then packed into bits (a compare and a mask
// store per vector) and ORed into `data` once. In a filter of a few hundred
// bytes (LevelDB's per-2 KiB filters) the k read-modify-writes per key of
// the other paths keep landing on bytes or lines that a store still in
// flight is writing (in a 125-byte filter, about one load in six), each a
// memory-order replay or a forwarding stall. The byte map's stores have no
// loads to collide with: on Zen 3 (AVX2) it builds the policy's 20- and
// 100-key flat filters about 1.25x faster than the read-modify-write path
// (kernel_ab.py OLD NEW --build --build-sizes 20,100).
// HashAt: size_t -> uint64_t. REQUIRES: 1 <= total_bits <=
// kByteMapMaxBits, 1 <= num_probes <= 16; data holds ceil(total_bits / 8)
// writable bytes.
template <bool kFlat, typename HashAt>
HWY_INLINE void AddHashesByteMap(size_t n, HashAt&& hash_at, uint64_t total_bits, int num_probes,
                                 uint8_t* HWY_RESTRICT data) {
  const hn::ScalableTag<uint8_t> d8;
  const size_t lanes = hn::Lanes(d8);
  // The map's length: total_bits rounded up to whole vectors of 8 lanes or
  // more, so that each vector packs into whole bytes.
  const size_t step = lanes < 8 ? 8 : lanes;
  const size_t map_bytes = (static_cast<size_t>(total_bits) + step - 1) / step * step;
  alignas(64) uint8_t map[kByteMapMaxBits + 64];  // 4 KiB of stack
  std::memset(map, 0, map_bytes);
  for (size_t key = 0; key < n; ++key) MarkProbes<kFlat>(hash_at(key), total_bits, num_probes, map);
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // The pack's 512-bit loads wait here until every mark's store address is
  // known. Without the fence, on AMD Zen 4 they ran ahead of the stores and
  // a policy build of 8 keys took 2.0x its AVX2 time (22.0 against 10.6 ns
  // per key; 20 keys 1.8x), with it 13.0 and 11.3 ns (1.0-1.1x AVX2), and
  // 100 keys or more unchanged (scripts/kernel_ab.py OLD NEW --rows
  // 'build/(bbpolicy-target-AVX.|leveldb)/(4|8|20|100|10000)$'). AVX2's
  // 256-bit loads did not need it.
  _mm_lfence();
#endif
  alignas(64) uint8_t packed[kByteMapMaxBits / 8 + 64];
  if (lanes >= 8) {
    for (size_t b = 0; b < map_bytes; b += lanes) {
      // StoreMaskBits writes lane i as bit i % 8 of byte i / 8: the filter's
      // bit order (bit p is bit p % 8 of byte p / 8).
      hn::StoreMaskBits(d8, hn::Ne(hn::Load(d8, map + b), hn::Zero(d8)), packed + b / 8);
    }
  } else {  // HWY_SCALAR: eight map bytes at a time, one byte per bit
    for (size_t b = 0; b < map_bytes; b += 8) {
      uint8_t byte = 0;
      for (size_t i = 0; i < 8; ++i) byte = static_cast<uint8_t>(byte | (map[b + i] << i));
      packed[b / 8] = byte;
    }
  }
  const size_t num_bytes = static_cast<size_t>((total_bits + 7) / 8);
  for (size_t b = 0; b < num_bytes; ++b) data[b] |= packed[b];
}

// A filter's short last block (the only one under 512 bits), through the
// scalar kernel: out of line and cold, so that in every loop the full-block
// vector path is the fall-through and the 16 unrolled scalar probes stay out
// of it. (Inline, GCC 12 made the full-block path the taken branch: two more
// taken jumps per probe.)
[[gnu::cold]] inline HWY_NOINLINE bool TestShortBlock(uint32_t seed, uint32_t block_bits,
                                                      int num_probes, const uint8_t* block) {
  return blocked::detail::TestProbes<false>(seed, block_bits, num_probes, block);
}

// Single-key probe over raw filter bits: blocked::MayContainHash's answer.
// REQUIRES: total_bits > 0, 1 <= num_probes <= 16; data holds
// ceil(total_bits / 8) bytes.
HWY_INLINE bool MayContainHashOne(uint64_t hash, uint64_t total_bits, int num_probes,
                                  const uint8_t* HWY_RESTRICT data) {
  const blocked::Block b = blocked::LocateBlock(hash, total_bits);
  const uint8_t* block = data + b.first_bit / 8;
  if (HWY_UNLIKELY(b.num_bits != blocked::kBlockBits)) {
    return TestShortBlock(blocked::ProbeSeed(hash), b.num_bits, num_probes, block);
  }
  return TestFullBlock(block, blocked::ProbeSeed(hash), num_probes);
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
// `window` keys ahead for writing (0: no prefetch); full blocks through
// SetFullBlock.
HWY_INLINE void AddHashesRolling(const uint64_t* HWY_RESTRICT hashes, size_t n, uint64_t total_bits,
                                 int num_probes, uint8_t* HWY_RESTRICT data, size_t window) {
  const auto block_of = [&](uint64_t h) {
    return data + blocked::LocateBlock(h, total_bits).first_bit / 8;
  };
  if (window > 0) {
    const size_t ahead = std::min(window, n);
    for (size_t j = 0; j < ahead; ++j) __builtin_prefetch(block_of(hashes[j]), 1, 3);
  }
  for (size_t j = 0; j < n; ++j) {
    if (window > 0 && j + window < n) __builtin_prefetch(block_of(hashes[j + window]), 1, 3);
    AddHashOne(hashes[j], total_bits, num_probes, data);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#undef BLOCKBLOOM_VECTOR_PROBE
#undef BLOCKBLOOM_VECTOR_BUILD
#endif  // include guard
