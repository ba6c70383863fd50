// Per-target Highway kernels of the compact filter's version-2 build
// (simd/compact_solver.h). Included once per target by
// simd/compact_solver_simd.cc (foreach_target.h) and by
// tests/compact_solver_test.cc.
//
// Every system has one solution with every free slot 0 (the pivot slots,
// each the lowest slot of some combination of rows, depend only on the space
// the rows span, not on the order of elimination), so the pivot an
// elimination picks at a slot, which differs with the number of lanes, never
// changes the bytes: every target writes the same filter.

// Per-target include guard (the pattern Highway requires).
#if defined(BLOCKBLOOM_SIMD_COMPACT_SOLVER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BLOCKBLOOM_SIMD_COMPACT_SOLVER_INL_H_
#undef BLOCKBLOOM_SIMD_COMPACT_SOLVER_INL_H_
#else
#define BLOCKBLOOM_SIMD_COMPACT_SOLVER_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "compact_solver.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace compact_solver {

// acc ^ delta in the lanes of `mask`, acc elsewhere. On AVX-512 one
// merge-masked xor: Highway 1.0.3 has no masked xor, and the portable forms
// take a mask-to-vector move or a masked move besides the xor. On an Intel
// Xeon (AVX3): AppendFilterV2 of 100 and 160 keys at 10 bits/key (hashes
// given, 256 random sets in turn, 3 alternated runs; UpdateRows) 34.9-35.3
// -> 31.3-32.8 and 34.1-34.3 -> 32.1-32.6 ns per key; SolveDenseCompress
// alone at 16 keys in 16 slots 184 -> 165 ns, 12 in 12 160 -> 146. (In
// SolveSmallRows' update it took 0.91x the time at 64 slots but 1.16-1.22x
// at 20-32, so that loop keeps IfThenElse.)
template <class D, class M, class V>
HWY_INLINE V MaskedXor(D d, M mask, V acc, V delta) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (sizeof(hn::TFromD<D>) == 8 && hn::MaxLanes(d) == 8) {
    return V{_mm512_mask_xor_epi64(acc.raw, mask.raw, acc.raw, delta.raw)};
  } else if constexpr (sizeof(hn::TFromD<D>) == 4 && hn::MaxLanes(d) == 16) {
    return V{_mm512_mask_xor_epi32(acc.raw, mask.raw, acc.raw, delta.raw)};
  }
#endif
  (void)d;
  return hn::Xor(acc, hn::IfThenElseZero(mask, delta));
}

// At most kSolverMaxLanes rows per vector.
using RowTag = hn::CappedTag<uint64_t, simd::kSolverMaxLanes>;

// ORs the low `bits` (<= 64) bits of `word` into out at bit offset `pos`.
HWY_INLINE void OrBits(uint64_t word, int bits, uint64_t pos, uint8_t* HWY_RESTRICT out) {
  __extension__ typedef unsigned __int128 U128;  // -Wpedantic: a GNU extension
  const U128 shifted = static_cast<U128>(word) << (pos & 7);
  const int bytes = static_cast<int>(((pos & 7) + static_cast<uint64_t>(bits) + 7) / 8);
  for (int k = 0; k < bytes; ++k) out[(pos >> 3) + k] |= static_cast<uint8_t>(shifted >> (8 * k));
}

// Sweeps the 0 rows out of [0, *active). False if one has result 1 (0 = 1).
HWY_INLINE bool SweepZeroRows(size_t* active, uint64_t* coef, uint64_t* result) {
  for (size_t k = 0; k < *active;) {
    if (coef[k] != 0) {
      ++k;
      continue;
    }
    if (result[k] != 0) return false;
    --*active;
    coef[k] = coef[*active];
    result[k] = result[*active];
  }
  return true;
}

// One slot's update of rows [0, total) (rounded up to whole vectors: lanes
// past `total` hold stale rows, updated too, never taken) with pivot row p
// (result pf): every row with bit 0 set is xored with the pivot (the pivot
// row itself, if it is one of them, becomes 0), then every row shifts down
// one slot. kFind: also *cand_c / *cand_f / true: some row with bit 0 set
// after the update (the next slot's pivot, taken from registers), or false
// if there is none.
template <bool kFind>
HWY_INLINE bool UpdateRows(uint64_t p, uint64_t pf, size_t total, uint64_t* HWY_RESTRICT act_coef,
                           uint64_t* HWY_RESTRICT act_result, uint64_t* cand_c, uint64_t* cand_f) {
  const RowTag d;
  const size_t lanes = hn::Lanes(d);
  const auto one = hn::Set(d, 1);
  const auto pv = hn::Set(d, p);
  const auto pfv = hn::Set(d, pf);
  auto found_c = hn::Zero(d);
  auto found_f = hn::Zero(d);
  auto found = hn::Lt(one, one);  // none
  for (size_t k = 0; k < total; k += lanes) {
    auto c = hn::LoadU(d, act_coef + k);
    auto f = hn::LoadU(d, act_result + k);
    const auto take = hn::TestBit(c, one);  // bit 0: the slot's
    c = hn::ShiftRight<1>(MaskedXor(d, take, c, pv));
    f = MaskedXor(d, take, f, pfv);
    hn::StoreU(c, d, act_coef + k);
    hn::StoreU(f, d, act_result + k);
    if (kFind) {
      const auto next =
          hn::And(hn::TestBit(c, one), hn::FirstN(d, total - k));  // lanes past total: stale
      found_c = hn::IfThenElse(next, c, found_c);
      found_f = hn::IfThenElse(next, f, found_f);
      found = hn::Or(found, next);
    }
  }
  if (!kFind) return false;
  const intptr_t lane = hn::FindFirstTrue(d, found);
  if (lane < 0) return false;
  const hn::RebindToSigned<RowTag> di;
  const auto at = hn::IndicesFromVec(d, hn::Set(di, static_cast<int64_t>(lane)));
  *cand_c = hn::GetLane(hn::TableLookupLanes(found_c, at));
  *cand_f = hn::GetLane(hn::TableLookupLanes(found_f, at));
  return true;
}

// simd::EliminateByColumns. Elimination by columns (the echelon form,
// computed slot by slot): at slot j every row that starts at or before j and
// has no pivot yet is "active", stored shifted so that bit 0 is slot j (its
// bits all lie in [j, start + 64), so one word holds it). At slot j: the rows
// starting at j join; one row with bit 0 set (if any) becomes the pivot row
// of slot j; it is xored into every other row with bit 0 set; every row
// shifts down one slot.
//
// The update is the same branch-free operation on every active row, so it
// runs as a vector loop (UpdateRows). The pivot is the last row to join
// (bit 0 is set in every new row), else a row the previous slot's update
// found with its next bit set. Rows stay where they joined: an active pivot
// is xored with itself by the update and stays as a 0 row; the other rows
// joining at j are updated as scalars and written into the vector that holds
// them (loaded, blended, stored whole). So each vector the update loads was
// last written whole at the same place, and the load takes it from that
// store. (Writing the joining rows at any row and moving each pivot out by
// a scalar swap made the update's loads span several stores, which waits
// for them to reach the cache: those loads were the hottest instructions,
// and this layout took 0.79-0.94x the build time at 100-300 keys, 1.0x at
// 450-590; LevelDB policy, 64 sets of random keys, medians of alternated
// runs.)
//
// A row that reaches 0 is dependent on the pivot rows: consistent iff its
// result is 0 too. 0 rows are swept out every kSweep slots (every 16 slots
// took 0.98-1.09x the time, every 8 1.0-1.07x that) and at the end, where
// every row left is 0.
HWY_INLINE bool EliminateRows(uint64_t m, uint64_t* HWY_RESTRICT coef,
                              uint32_t* HWY_RESTRICT result, const simd::SolverRows& rows) {
  const RowTag d;
  const size_t lanes = hn::Lanes(d);
  uint64_t* HWY_RESTRICT act_coef = rows.coef;
  uint64_t* HWY_RESTRICT act_result = rows.result;
  const uint64_t* HWY_RESTRICT join_coef = rows.join_coef;
  const uint64_t* HWY_RESTRICT join_result = rows.join_result;
  constexpr uint64_t kSweep = 32;
  size_t active = 0;
  bool has_cand = false;
  uint64_t cand_c = 0, cand_f = 0;  // a row with bit 0 set, if has_cand
  const hn::RebindToSigned<RowTag> di;
  for (uint64_t j = 0; j < m; ++j) {
    const size_t begin = rows.first[j], joining = rows.first[j + 1] - begin;
    uint64_t p = 0, pf = 0;  // 0: a free slot, the update only shifts
    if (joining != 0) {      // the last row to join (bit 0 is set in every new row)
      p = join_coef[begin + joining - 1];
      pf = join_result[begin + joining - 1];
    } else if (has_cand) {
      p = cand_c;
      pf = cand_f;
    }
    coef[j] = p;
    result[j] = static_cast<uint32_t>(pf);
    // The next slot's pivot is needed only if no row joins there.
    const bool find = j + 1 < m && rows.first[j + 2] == rows.first[j + 1];
    has_cand = find ? UpdateRows<true>(p, pf, active, act_coef, act_result, &cand_c, &cand_f)
                    : UpdateRows<false>(p, pf, active, act_coef, act_result, &cand_c, &cand_f);
    for (size_t t = 0; t + 1 < joining; ++t) {
      const uint64_t c = (join_coef[begin + t] ^ p) >> 1;
      const uint64_t f = join_result[begin + t] ^ pf;
      if (find && !has_cand && (c & 1) != 0) {
        has_cand = true;
        cand_c = c;
        cand_f = f;
      }
      const size_t at = active - active % lanes;
      const auto here = hn::RebindMask(
          d, hn::Eq(hn::Iota(di, 0), hn::Set(di, static_cast<int64_t>(active - at))));
      hn::StoreU(hn::IfThenElse(here, hn::Set(d, c), hn::LoadU(d, act_coef + at)), d,
                 act_coef + at);
      hn::StoreU(hn::IfThenElse(here, hn::Set(d, f), hn::LoadU(d, act_result + at)), d,
                 act_result + at);
      ++active;
    }
    if (j % kSweep == kSweep - 1) {
      if (!SweepZeroRows(&active, act_coef, act_result)) return false;
    }
  }
  return SweepZeroRows(&active, act_coef, act_result);  // every row left is 0
}

// In place, bit k of a[i] becomes bit i of a[k] (a 64 x 64 bit transpose),
// as vector work: each round swaps the off-diagonal s x s
// blocks of every 2s x 2s block, words s apart. Words in different vectors
// (s >= lanes) pair lane by lane; within a vector each lane meets its
// partner through a lane permutation.
//
// size 32: the same for words and bits below 32 (bits 32-63 of a[0, 32)
// transposed among themselves), when they are all that is not 0.
HWY_INLINE void TransposeBits64Vectors(uint64_t* HWY_RESTRICT a, size_t size) {
  const RowTag d;
  const hn::RebindToSigned<RowTag> di;
  const size_t lanes = hn::Lanes(d);
  uint64_t mask = size == 64 ? 0x00000000FFFFFFFFull : 0x0000FFFF0000FFFFull;
  for (size_t s = size / 2; s != 0; s >>= 1, mask ^= mask << s) {
    const auto mv = hn::Set(d, mask);
    const int shift = static_cast<int>(s);
    if (s >= lanes) {
      for (size_t base = 0; base < size; base += 2 * s) {
        for (size_t k = base; k < base + s; k += lanes) {
          const auto lo = hn::Load(d, a + k);
          const auto hi = hn::Load(d, a + k + s);
          const auto t = hn::And(hn::Xor(hn::ShiftRightSame(lo, shift), hi), mv);
          hn::Store(hn::Xor(lo, hn::ShiftLeftSame(t, shift)), d, a + k);
          hn::Store(hn::Xor(hi, t), d, a + k + s);
        }
      }
      continue;
    }
    // Lane l's partner is lane l ^ s; the lower of the two ("lo") takes
    // the partner's low blocks into its high ones.
    alignas(64) int64_t partner[simd::kSolverMaxLanes];
    for (size_t l = 0; l < lanes; ++l) partner[l] = static_cast<int64_t>(l ^ s);
    const auto indices = hn::SetTableIndices(d, partner);
    const auto is_lo = hn::RebindMask(
        d, hn::Eq(hn::And(hn::Iota(di, 0), hn::Set(di, static_cast<int64_t>(s))), hn::Zero(di)));
    for (size_t k = 0; k < size; k += lanes) {
      const auto v = hn::Load(d, a + k);
      const auto p = hn::TableLookupLanes(v, indices);
      const auto t = hn::And(hn::Xor(hn::ShiftRightSame(hn::IfThenElse(is_lo, v, p), shift),
                                     hn::IfThenElse(is_lo, p, v)),
                             mv);
      hn::Store(hn::Xor(v, hn::IfThenElse(is_lo, hn::ShiftLeftSame(t, shift), t)), d, a + k);
    }
  }
}

// simd::ResultPlanes.
HWY_INLINE void ResultPlanesRows(const uint32_t* HWY_RESTRICT result, size_t rows,
                                 uint64_t* HWY_RESTRICT planes) {
  alignas(64) uint64_t a[64];
  const size_t size = rows <= 32 ? 32 : 64;
  for (size_t i = 0; i < rows; ++i) a[i] = result[i];
  std::memset(a + rows, 0, (size - rows) * sizeof(uint64_t));
  TransposeBits64Vectors(a, size);
  std::memcpy(planes, a, 32 * sizeof(uint64_t));
}

// Slots per block of the transposed eliminations (SolveSmallRows,
// SolveBandRows).
inline constexpr size_t kSolverBlock = 8;

// simd::SolveSmall: Gauss-Jordan elimination on the transposed system. Word
// k < m of `w` is slot k's column (bit i: row i's coefficient at slot k),
// word m + b the rows' result bit b, so one slot's row operation (every row
// with the slot's bit set, but the pivot, xors the pivot row into itself)
// is one branch-free update per later word: w ^= S where the word has the
// pivot row's bit. Columns before the slot never change (the pivot row is 0
// there), so a slot updates words (j, m + r) only.
//
// Slots go in blocks of kSolverBlock. The block's pivots come from a chain
// of scalar steps on its column words. The block's operations then reach
// every later word at once: in turn they change a word by a linear function
// of its bits at the block's pivot rows, as they were before the block, so
// the word is xored with operation t's delta for each t whose pivot row it
// has, tests that do not wait on each other (SolveBandRows does the same).
// Operation t's delta is its others_t changed by the block's later
// operations, kept in vectors of the block's slots (in scalars below 4
// lanes, where the vectors took 1.4-2x the time of the whole solve).
// Against applying the operations one after another to each later word, on
// an Intel Xeon (AVX-512), random systems of 20-64 slots: 0.52-0.58x the
// time on AVX3, 0.66-0.76x on AVX2; the compact policy's CreateFilter at
// 20-64 keys, 4-20 bits/key: 0.59-0.66x.
//
// Fully reduced, each pivot row holds its slot's solution (free slots 0) in
// its result bits; every other row is 0 and must have result 0: the
// solution's bit planes are gathered from the result words, with no back
// substitution.
HWY_INLINE bool SolveSmallRows(const uint64_t* HWY_RESTRICT row_coef,
                               const uint64_t* HWY_RESTRICT result_planes, size_t rows, uint64_t m,
                               int r, uint8_t* HWY_RESTRICT out) {
  const RowTag d;
  const hn::RebindToSigned<RowTag> di;
  const size_t lanes = hn::Lanes(d);
  alignas(64) uint64_t a[64];
  // rows <= m; row_coef may be null when rows is 0.
  const size_t size = m <= 32 ? 32 : 64;
  if (rows != 0) std::memcpy(a, row_coef, rows * sizeof(uint64_t));
  std::memset(a + rows, 0, (size - rows) * sizeof(uint64_t));
  TransposeBits64Vectors(a, size);
  // Columns, result bits, then 0 words (updated, stay 0) up to the end of
  // the block after the last, and a vector more.
  constexpr size_t kBlock = kSolverBlock;
  constexpr size_t kWords = 64 + 32 + 2 * kBlock;
  alignas(64) uint64_t w[kWords];
  const size_t end = static_cast<size_t>(m) + static_cast<size_t>(r);
  std::memcpy(w, a, m * sizeof(uint64_t));
  std::memcpy(w + m, result_planes, static_cast<size_t>(r) * sizeof(uint64_t));
  std::memset(w + end, 0, (kWords - end) * sizeof(uint64_t));
  uint8_t pivot[64];  // slot j's pivot row, 64 for a free slot
  uint64_t used = 0;  // the pivot rows
  bool any_free = false;
  const bool vector_deltas = lanes >= 4;
  const size_t nv = kBlock / lanes;  // vectors per block (lanes <= kBlock)
  for (size_t jb = 0; jb < m; jb += kBlock) {
    const size_t slots = m - jb < kBlock ? static_cast<size_t>(m - jb) : kBlock;
    uint64_t c[kBlock];
    std::memcpy(c, w + jb, sizeof(c));
    // Operation i (slot jb + i): a word with bit[i] is xored with delta[i];
    // bit[i] is 0 (no operation) for a free slot and past the last slot.
    alignas(64) uint64_t bit[kBlock], delta[kBlock];
    hn::Vec<RowTag> delta_v[kBlock];
    for (size_t v = 0; v < nv; ++v) delta_v[v] = hn::Zero(d);
    HWY_UNROLL(8)
    for (size_t i = 0; i < kBlock; ++i) {
      bit[i] = 0;
      delta[i] = 0;
      if (i >= slots) continue;
      // Slot i's pivot: the lowest row of c[i] (bit k: row k holds slot i)
      // not yet a pivot row, or none (a free slot). Its row operation
      // reaches the block's later columns c[i + 1, kBlock) at once, as
      // scalars in registers (a vector copy went through memory, and the
      // next slot's scalar load waited on its store). Written out here: the
      // same steps in a helper function took 1.4-1.5x the solve's time.
      const uint64_t avail = c[i] & ~used;
      if (avail == 0) {  // a free slot: no row operation
        pivot[jb + i] = 64;
        any_free = true;
        continue;
      }
      const uint64_t b = avail & (uint64_t{0} - avail);
      const uint64_t others = c[i] ^ b;
      used |= b;
      pivot[jb + i] = static_cast<uint8_t>(__builtin_ctzll(b));
      HWY_UNROLL(8)
      for (size_t k = i + 1; k < kBlock; ++k) {
        uint64_t ck = c[k] ^ ((c[k] & b) != 0 ? others : 0);
        asm("" : "+r"(ck));  // keeps the compiler from vectorising the loop
        c[k] = ck;
      }
      bit[i] = b;
      if (vector_deltas) {
        // The earlier deltas change as words do; lane i (0 until now)
        // starts as others.
        const auto bv = hn::Set(d, b);
        const auto ov = hn::Set(d, others);
        for (size_t v = 0; v < nv; ++v) {
          const auto here = hn::RebindMask(d, hn::Eq(hn::Iota(di, static_cast<int64_t>(v * lanes)),
                                                     hn::Set(di, static_cast<int64_t>(i))));
          delta_v[v] = hn::Xor(delta_v[v],
                               hn::IfThenElseZero(hn::Or(hn::TestBit(delta_v[v], bv), here), ov));
        }
      } else {
        HWY_UNROLL(8)
        for (size_t t = 0; t < i; ++t) {
          uint64_t dt = delta[t] ^ ((delta[t] & b) != 0 ? others : 0);
          asm("" : "+r"(dt));  // as for ck
          delta[t] = dt;
        }
        delta[i] = others;
      }
    }
    if (vector_deltas) {
      for (size_t v = 0; v < nv; ++v) hn::Store(delta_v[v], d, delta + v * lanes);
    }
    // Words of this block past the slots (the last block's result bits).
    if (slots < kBlock) std::memcpy(w + jb + slots, c + slots, (kBlock - slots) * sizeof(uint64_t));
    hn::Vec<RowTag> bit_v[kBlock], delta_of[kBlock];
    for (size_t t = 0; t < kBlock; ++t) {
      bit_v[t] = hn::Set(d, bit[t]);
      delta_of[t] = hn::Set(d, delta[t]);
    }
    for (size_t k = jb + kBlock; k < end; k += lanes) {
      const auto x = hn::Load(d, w + k);
      auto acc = x;
      HWY_UNROLL(8)
      for (size_t t = 0; t < kBlock; ++t) {
        acc = hn::IfThenElse(hn::TestBit(x, bit_v[t]), hn::Xor(acc, delta_of[t]), acc);
      }
      hn::Store(acc, d, w + k);
    }
  }
  // Rows that are not pivots are 0: consistent iff their results are 0.
  uint64_t bad = 0;
  for (size_t k = m; k < end; ++k) bad |= w[k] & ~used;
  if (bad != 0) return false;
  // A free slot reads a row that is not a pivot (there is one: the rank is
  // below 64), whose result bits are 0.
  if (any_free) {
    const uint8_t zero_row = static_cast<uint8_t>(__builtin_ctzll(~used));
    for (uint64_t j = 0; j < m; ++j) {
      if (pivot[j] == 64) pivot[j] = zero_row;
    }
  }
  // Bit plane b, bit j: result bit b of slot j's pivot row; lanes are planes.
  alignas(64) uint64_t planes[32 + simd::kSolverMaxLanes];
  const auto one = hn::Set(d, 1);
  for (size_t k = 0; k < static_cast<size_t>(r); k += lanes) {
    const auto v = hn::LoadU(d, w + m + k);
    auto acc = hn::Zero(d);
    for (uint64_t j = 0; j < m; ++j) {
      acc = hn::Or(acc, hn::ShiftLeftSame(hn::And(hn::ShiftRightSame(v, pivot[j]), one),
                                          static_cast<int>(j)));
    }
    hn::Store(acc, d, planes + k);
  }
  // The planes side by side, m bits each, through a register.
  uint64_t words[32 * 64 / 64 + 1] = {};
  size_t at = 0;
  uint64_t fill = 0, pending = 0;
  for (int c = 0; c < r; ++c) {
    const uint64_t x = planes[c];
    pending |= x << fill;
    fill += m;
    if (fill >= 64) {
      words[at++] = pending;
      fill -= 64;
      pending = fill != 0 ? x >> (m - fill) : 0;
    }
  }
  if (fill != 0) words[at] = pending;
  std::memcpy(out, words, (static_cast<uint64_t>(r) * m + 7) / 8);
  return true;
}

// ApplyBandOps: the row operations of one block of slots (SolveBandRows) on
// the lanes' words at w. The block's operations in turn change a word by a
// linear function of its bits at the block's pivot rows, as they were
// before the block: the word is xored with operation t's delta (delta[t])
// for each t < ops where it has t's pivot row (bit[t]), tests that do not
// wait on each other.
HWY_INLINE void ApplyBandOps(size_t ops, const uint64_t* HWY_RESTRICT bit,
                             const uint64_t* HWY_RESTRICT delta, uint64_t* HWY_RESTRICT w) {
  const RowTag d;
  const auto x = hn::Load(d, w);
  auto acc = x;
  for (size_t t = 0; t < ops; ++t) {
    const auto take = hn::TestBit(x, hn::Set(d, bit[t]));
    acc = hn::IfThenElse(take, hn::Xor(acc, hn::Set(d, delta[t])), acc);
  }
  hn::Store(acc, d, w);
}

// simd::SolveBand: SolveSmallRows's Gauss-Jordan elimination on the
// transposed system, for more than 64 slots. Word k < cols of `w` is slot
// k's column (bit i: row i's coefficient at slot k; 0 past m, up to `cols`,
// a multiple of 64), word cols + b the rows' result bit b.
//
// Slot j's row operation (xor the pivot row into every other row with bit j)
// changes the words where the pivot row has a bit: slots after j, below
// j + 64 (every row with a bit at slot j starts at or before j, and the rows
// combined so far too, so none has a bit at or past j + 64), and the result
// words. So a block of kBlock slots updates the columns up to 64 + kBlock
// past the block, and the result words: the work per slot does not grow
// with m.
HWY_INLINE bool SolveBandRows(const uint64_t* HWY_RESTRICT row_coef,
                              const uint32_t* HWY_RESTRICT row_start,
                              const uint64_t* HWY_RESTRICT result_planes, size_t rows, uint64_t m,
                              int r, uint8_t* HWY_RESTRICT out) {
  const RowTag d;
  const size_t lanes = hn::Lanes(d);
  constexpr size_t kBlock = kSolverBlock;
  // Columns, with at least 2 * kBlock 0 words after the last (read as the
  // next blocks' columns), rounded up to whole 64-slot blocks of the
  // transposition; then 32 result words and a block of 0 words.
  alignas(64) uint64_t w[simd::kSolverBandSlots + 64 + 32 + kBlock];
  const size_t cols = static_cast<size_t>((m + 2 * kBlock + 63) / 64 * 64);
  std::memset(w, 0, (cols + 32 + kBlock) * sizeof(uint64_t));
  // The columns: the rows (sorted by start) cover a few 64-slot blocks; each
  // block is a 64 x 64 bit transpose of the rows shifted to it.
  alignas(64) uint64_t a[64];
  if (rows != 0) {
    const uint64_t last = (row_start[rows - 1] + 63) / 64;
    for (uint64_t b = row_start[0] / 64; b <= last; ++b) {
      const uint64_t base = 64 * b;
      for (size_t i = 0; i < rows; ++i) {
        const uint64_t s = row_start[i], c = row_coef[i];
        a[i] = s >= base ? (s - base < 64 ? c << (s - base) : 0)
                         : (base - s < 64 ? c >> (base - s) : 0);
      }
      std::memset(a + rows, 0, (64 - rows) * sizeof(uint64_t));
      TransposeBits64Vectors(a, 64);
      std::memcpy(w + base, a, sizeof(a));
    }
  }
  std::memcpy(w + cols, result_planes, static_cast<size_t>(r) * sizeof(uint64_t));
  // As in SolveSmallRows: the block's columns are scalars (c), the next
  // block's a register copy (next) updated by each slot's operation as soon
  // as it is known; the later words get the block's operations in one pass.
  constexpr uint8_t kFree = 64;  // the pivot of a free slot
  uint8_t pivot[simd::kSolverBandSlots];
  uint64_t used = 0;  // the pivot rows
  const size_t nv = kBlock / lanes;
  hn::Vec<RowTag> next[kBlock];
  uint64_t c[kBlock];
  for (size_t v = 0; v < nv; ++v) next[v] = hn::Load(d, w + kBlock + v * lanes);
  std::memcpy(c, w, sizeof(c));
  // Operation t's delta: its change to a word whose only pivot row of the
  // block is t's, i.e. the other rows of t's column (others_t) changed by
  // the block's later operations, kept as lane t of `delta` (updated as
  // `next` is).
  hn::Vec<RowTag> delta[kBlock];
  const hn::RebindToSigned<RowTag> di;
  for (size_t jb = 0; jb < m; jb += kBlock) {
    const size_t slots = m - jb < kBlock ? static_cast<size_t>(m - jb) : kBlock;
    uint64_t op_bit[kBlock];
    for (size_t v = 0; v < nv; ++v) delta[v] = hn::Zero(d);
    size_t ops = 0;
    HWY_UNROLL(8)
    for (size_t i = 0; i < kBlock; ++i) {
      if (i >= slots) break;
      const uint64_t avail = c[i] & ~used;  // the pivot, as in SolveSmallRows
      if (avail == 0) {                     // a free slot: no row operation
        pivot[jb + i] = kFree;
        continue;
      }
      const uint64_t bit = avail & (uint64_t{0} - avail);
      const uint64_t others = c[i] ^ bit;
      used |= bit;
      HWY_UNROLL(8)
      for (size_t k = i + 1; k < kBlock; ++k) {
        uint64_t ck = c[k] ^ ((c[k] & bit) != 0 ? others : 0);
        asm("" : "+r"(ck));  // as in SolveSmallRows
        c[k] = ck;
      }
      op_bit[ops] = bit;
      pivot[jb + i] = static_cast<uint8_t>(__builtin_ctzll(bit));
      const auto bv = hn::Set(d, bit);
      const auto sv = hn::Set(d, others);
      for (size_t v = 0; v < nv; ++v) {
        next[v] = hn::Xor(next[v], hn::IfThenElseZero(hn::TestBit(next[v], bv), sv));
        // Lane `ops` (0 until now) starts as others.
        const auto here = hn::RebindMask(d, hn::Eq(hn::Iota(di, static_cast<int64_t>(v * lanes)),
                                                   hn::Set(di, static_cast<int64_t>(ops))));
        delta[v] =
            hn::Xor(delta[v], hn::IfThenElseZero(hn::Or(hn::TestBit(delta[v], bv), here), sv));
      }
      ++ops;
    }
    for (size_t v = 0; v < nv; ++v) hn::Store(next[v], d, w + jb + kBlock + v * lanes);
    if (ops != 0) {
      alignas(64) uint64_t deltas[kBlock];
      for (size_t v = 0; v < nv; ++v) hn::Store(delta[v], d, deltas + v * lanes);
      const size_t band_end = jb + 64 + kBlock < cols ? jb + 64 + kBlock : cols;
      for (size_t k = jb + 2 * kBlock; k < band_end; k += lanes) {
        ApplyBandOps(ops, op_bit, deltas, w + k);
      }
      for (size_t k = cols; k < cols + static_cast<size_t>(r); k += lanes) {
        ApplyBandOps(ops, op_bit, deltas, w + k);
      }
    }
    if (jb + kBlock >= m) break;
    std::memcpy(c, w + jb + kBlock, sizeof(c));
    for (size_t v = 0; v < nv; ++v) next[v] = hn::Load(d, w + jb + 2 * kBlock + v * lanes);
  }
  // Rows that are not pivots are 0: consistent iff their results are 0.
  uint64_t bad = 0;
  for (size_t b = 0; b < static_cast<size_t>(r); ++b) bad |= w[cols + b] & ~used;
  if (bad != 0) return false;
  // Each row's result (fully reduced: a pivot row's is its slot's
  // solution), by transposing the result words back; a free slot reads the
  // 0 after them.
  uint32_t row_result[65];
  std::memcpy(a, w + cols, 32 * sizeof(uint64_t));
  std::memset(a + 32, 0, 32 * sizeof(uint64_t));
  TransposeBits64Vectors(a, 64);
  for (size_t i = 0; i < 64; ++i) row_result[i] = static_cast<uint32_t>(a[i]);
  row_result[kFree] = 0;
  // The solution's columns, 64 slots at a time: a transpose of the slots'
  // values gives each column's 64 bits.
  for (uint64_t lo = 0; lo < m; lo += 64) {
    const size_t count = m - lo < 64 ? static_cast<size_t>(m - lo) : 64;
    for (size_t t = 0; t < count; ++t) a[t] = row_result[pivot[lo + t]];
    std::memset(a + count, 0, (64 - count) * sizeof(uint64_t));
    TransposeBits64Vectors(a, 64);
    for (int b = 0; b < r; ++b) {
      OrBits(a[b], static_cast<int>(count), static_cast<uint64_t>(b) * m + lo, out);
    }
  }
  return true;
}

// Bit 0 of each lane: the parity of its bits.
template <class D, class V>
HWY_INLINE V Parity(D d, V x) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_AVX3_DL
  (void)d;
  return hn::PopulationCount(x);
#else
  // Each byte's two nibbles xored (the byte's parity is the result's), its
  // parity by table lookup, their sum per 64-bit lane: four or five
  // operations. Looking up both nibbles and xoring their parities took
  // seven, and SolveColumns 1.09-1.17x the time per slot (m = 167-1,100
  // slots, r = 3-19; 20,000 calls on a fixed echelon form, medians of 7,
  // AVX3).
  const hn::Repartition<uint8_t, D> d8;
  alignas(16) static constexpr uint8_t kNibbleParity[16] = {0, 1, 1, 0, 1, 0, 0, 1,
                                                            1, 0, 0, 1, 0, 1, 1, 0};
  const auto table = hn::LoadDup128(d8, kNibbleParity);
  const auto folded = hn::And(hn::Xor(x, hn::ShiftRight<4>(x)), hn::Set(d, 0x0F0F0F0F0F0F0F0Full));
  return hn::BitCast(d, hn::SumsOf8(hn::TableLookupBytes(table, hn::BitCast(d8, folded))));
#endif
}

// Columns [first, first + kVectors * lanes) of the solution (those below r),
// slot m-1 down to 0: with the solution's bits of slots above i in a window
// per column (bit j: slot i + 1 + j), slot i's bit is parity(coef[i] >> 1
// AND window) xor bit b of result[i] (0 for a free slot: coef and result are
// 0). Each lane is one column; each 64 solved slots are ORed into `out` as
// one word per column, or, for m <= 64 (one word per column), into the
// words of `local` (bit p: bit p of out).
template <size_t kVectors>
HWY_INLINE void SolveColumnGroup(const uint64_t* HWY_RESTRICT coef,
                                 const uint32_t* HWY_RESTRICT result, uint64_t m, int r, int first,
                                 uint8_t* HWY_RESTRICT out, uint64_t* HWY_RESTRICT local) {
  const RowTag d;
  const size_t lanes = hn::Lanes(d);
  const auto one = hn::Set(d, 1);
  hn::Vec<RowTag> window[kVectors];
  hn::Vec<RowTag> shift[kVectors];
  for (size_t v = 0; v < kVectors; ++v) {
    window[v] = hn::Zero(d);
    shift[v] = hn::Iota(d, static_cast<uint64_t>(first) + v * lanes);
  }
  alignas(64) uint64_t words[kVectors * simd::kSolverMaxLanes];
  uint64_t hi = m;
  while (hi > 0) {
    const uint64_t lo = hi > 64 ? hi - 64 : 0;
    for (uint64_t i = hi; i-- > lo;) {
      const auto c = hn::Set(d, coef[i] >> 1);
      const auto f = hn::Set(d, static_cast<uint64_t>(result[i]));
      for (size_t v = 0; v < kVectors; ++v) {
        const auto bit = hn::And(hn::Xor(Parity(d, hn::And(c, window[v])), (f >> shift[v])), one);
        window[v] = hn::Or(hn::ShiftLeft<1>(window[v]), bit);
      }
    }
    const int bits = static_cast<int>(hi - lo);
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    for (size_t v = 0; v < kVectors; ++v) hn::Store(window[v], d, words + v * lanes);
    const int columns = static_cast<int>(kVectors * lanes) < r - first
                            ? static_cast<int>(kVectors * lanes)
                            : r - first;
    if (local != nullptr) {
      // The columns' words side by side (m <= 64: one word each, lo = 0),
      // through a register: ORing each into memory read the word the
      // previous column had just written (a chain of store-to-load
      // forwards, 65% of a 2-key build, perf record -e cpu-clock).
      const uint64_t pos = static_cast<uint64_t>(first) * m;
      size_t at = static_cast<size_t>(pos >> 6);
      uint64_t fill = pos & 63, pending = 0;
      for (int b = 0; b < columns; ++b) {
        const uint64_t x = words[b] & mask;
        pending |= x << fill;
        fill += m;
        if (fill >= 64) {
          local[at++] |= pending;
          fill -= 64;
          pending = fill != 0 ? x >> (m - fill) : 0;
        }
      }
      if (fill != 0) local[at] |= pending;
    } else {
      for (int b = 0; b < columns; ++b) {
        OrBits(words[b] & mask, bits, static_cast<uint64_t>(first + b) * m + lo, out);
      }
    }
    hi = lo;
  }
}

// simd::SolveColumns: the columns in groups of at most four vectors (four
// independent chains per slot), group sizes balanced. Up to 64 slots the
// body (at most 32 * 64 bits) is assembled in words, then copied out.
HWY_INLINE void SolveAllColumns(const uint64_t* HWY_RESTRICT coef,
                                const uint32_t* HWY_RESTRICT result, uint64_t m, int r,
                                uint8_t* HWY_RESTRICT out) {
  constexpr size_t kLocalWords = 32 * 64 / 64 + 1;  // r * m bits, and one past
  alignas(64) uint64_t words[kLocalWords];
  uint64_t* local = nullptr;
  if (m <= 64) {
    std::memset(words, 0, sizeof(words));
    local = words;
  }
  const RowTag d;
  const int lanes = static_cast<int>(hn::Lanes(d));
  const int vectors = (r + lanes - 1) / lanes;
  const int groups = (vectors + 3) / 4;
  for (int g = 0, v = 0; g < groups; ++g) {
    const int size = (vectors - v + (groups - g) - 1) / (groups - g);
    const int first = v * lanes;
    switch (size) {
      case 1:
        SolveColumnGroup<1>(coef, result, m, r, first, out, local);
        break;
      case 2:
        SolveColumnGroup<2>(coef, result, m, r, first, out, local);
        break;
      case 3:
        SolveColumnGroup<3>(coef, result, m, r, first, out, local);
        break;
      default:
        SolveColumnGroup<4>(coef, result, m, r, first, out, local);
        break;
    }
    v += size;
  }
  if (local != nullptr) std::memcpy(out, words, (static_cast<uint64_t>(r) * m + 7) / 8);
}

// ---- simd::SolveTiny: at most 8 keys in at most 8 slots, one seed per lane ----
// Each lane holds one seed's system in bytes: byte i of `coef` is key i's
// coefficients (bit j: slot j), byte i of `combo` the keys whose equations
// row i now sums (1 << i at first), so the fingerprints stay out of the
// elimination (a row's right-hand side is the xor of its combo's). Column j
// is one step on every lane: the lowest row with bit j set that is not yet a
// pivot becomes the pivot, and its bytes (picked by a byte shuffle, whose
// index is the pivot's byte within its 128-bit block, summed out of a mask
// of the byte indexes) are xored into every other row with bit j set. The
// shuffle took 0.87-0.98x the time of the pivot byte summed into the lane's
// low byte and broadcast by a multiply (SolveTiny alone at 5-8 keys over
// 1,024 random systems, medians of 8 alternated runs; the compact policy's
// build at 8 keys 0.93-0.96x at 4-20 bits/key, compact_bench BM_BuildVs, 8
// alternated runs; AMD EPYC Zen 3, AVX2): one multiply fewer on the path
// from one column to the next. Columns in order 0..m-1 make each pivot
// row's lowest bit its column, as in the row eliminations, hence the same
// solution. The lanes are then screened by the low bytes of all rows'
// right-hand sides at once and the solution read from tables of subset xors
// (TinySubsetXors), not by a loop over each row's keys: the compact build on
// AVX2 (forced, Intel Xeon; compact_bench BM_CompactTargets, 2 alternated
// runs) 0.89x the time at 8 keys, 0.93x at 6 at 10 bits/key.

// The low 64 bits of a * b per lane: from 32 x 32 -> 64 multiplies (u64
// lanes have no multiply of their own before AVX-512).
template <class D, class V>
HWY_INLINE V MulLow64(D d, V a, V b) {
#if HWY_TARGET == HWY_SCALAR
  return hn::Set(d, hn::GetLane(a) * hn::GetLane(b));
#else
  const hn::Repartition<uint32_t, D> d32;
  const auto lo = hn::MulEven(hn::BitCast(d32, a), hn::BitCast(d32, b));
  const auto cross =
      hn::Add(hn::MulEven(hn::BitCast(d32, hn::ShiftRight<32>(a)), hn::BitCast(d32, b)),
              hn::MulEven(hn::BitCast(d32, a), hn::BitCast(d32, hn::ShiftRight<32>(b))));
  (void)d;
  return hn::Add(lo, hn::ShiftLeft<32>(cross));
#endif
}

#if HWY_TARGET == HWY_SCALAR
// The one byte of `word` under `byte_mask` (0xFF at one byte, or 0) in all
// eight bytes (the scalar target has no byte shuffle).
template <class D, class V>
HWY_INLINE V BroadcastMaskedByte(D d, V word, V byte_mask) {
  const uint64_t one_byte = hn::GetLane(word) & hn::GetLane(byte_mask);
  return hn::Set(d, ((one_byte * 0x0101010101010101ull) >> 56) * 0x0101010101010101ull);
}
#endif

// (s + 1) * kSolverSeedStep for seed s, padded with whole vectors.
struct TinySeedKeys {
  uint64_t of[simd::kSolverTinySeeds + simd::kSolverMaxLanes];
  constexpr TinySeedKeys() : of() {
    for (uint64_t s = 0; s < simd::kSolverTinySeeds + simd::kSolverMaxLanes; ++s) {
      of[s] = (s + 1) * simd::kSolverSeedStep;
    }
  }
};

// The xor of the fingerprints of any set of at most 8 keys (bit k: key k) in
// two table lookups: the xors of every subset of keys 0-3 and of keys 4-7,
// built once per system.
class TinySubsetXors {
 public:
  TinySubsetXors(const uint32_t* HWY_RESTRICT fingerprint, size_t rows) {
    low_[0] = high_[0] = 0;
    for (size_t k = 0; k < 4; ++k) {
      const uint32_t f_low = k < rows ? fingerprint[k] : 0;
      const uint32_t f_high = k + 4 < rows ? fingerprint[k + 4] : 0;
      for (size_t i = 0; i < (size_t{1} << k); ++i) {
        low_[(size_t{1} << k) + i] = low_[i] ^ f_low;
        high_[(size_t{1} << k) + i] = high_[i] ^ f_high;
      }
    }
  }
  uint32_t Of(uint32_t keys) const { return low_[keys & 15] ^ high_[(keys >> 4) & 15]; }

 private:
  uint32_t low_[16], high_[16];
};

// simd::SolveTiny.
HWY_INLINE int SolveTinySeeds(const uint64_t* HWY_RESTRICT x,
                              const uint32_t* HWY_RESTRICT fingerprint, size_t rows, uint64_t m,
                              int num_seeds, uint32_t* HWY_RESTRICT value) {
  const RowTag d;
  const size_t lanes = hn::Lanes(d);
  alignas(64) static constexpr TinySeedKeys kSeedKeys{};
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  const auto ones = hn::Set(d, kOnes);
  const auto one = hn::Set(d, 1);
  const auto multiplier = hn::Set(d, simd::kSolverCoefMultiplier);
  const auto slots = hn::Set(d, (uint64_t{1} << m) - 1);
#if HWY_TARGET != HWY_SCALAR
  // Byte k of each lane: its index within its 128-bit block (odd lanes are
  // its upper half); and in every byte of a lane, its low byte's index.
  const hn::Repartition<uint8_t, RowTag> d8;
  const auto odd_lane = hn::Eq(hn::And(hn::Iota(d, 0), one), one);
  const auto lane_offset = hn::IfThenElseZero(odd_lane, hn::Set(d, 0x0808080808080808ull));
  const auto block_byte_index = hn::Add(hn::Set(d, 0x0706050403020100ull), lane_offset);
  const auto low_byte_of_lane = hn::BitCast(d8, lane_offset);
#endif
  uint64_t identity = 0;  // combo: row i sums key i
  for (size_t i = 0; i < rows; ++i) identity |= uint64_t{1} << (9 * i);
  const uint64_t key_rows = rows >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * rows)) - 1;
  // Each key's fingerprint's low byte in every byte; `wide`: some
  // fingerprint has a bit from 8 up.
  hn::Vec<RowTag> low_byte[8];
  uint32_t any = 0;
  for (size_t k = 0; k < rows; ++k) {
    any |= fingerprint[k];
    low_byte[k] = hn::Set(d, (fingerprint[k] & 0xFFu) * kOnes);
  }
  const bool wide = any > 0xFF;
  const TinySubsetXors xors(fingerprint, rows);
  for (int first = 0; first < num_seeds; first += static_cast<int>(lanes)) {
    const auto seed_key = hn::Load(d, kSeedKeys.of + first);
    auto coef = hn::Zero(d);
    for (size_t i = 0; i < rows; ++i) {
      auto c = MulLow64(d, hn::Xor(hn::Set(d, x[i]), seed_key), multiplier);
      c = hn::Or(hn::And(hn::Xor(c, hn::ShiftRight<32>(c)), slots), one);
      coef = hn::Or(coef, hn::ShiftLeftSame(c, static_cast<int>(8 * i)));
    }
    auto combo = hn::Set(d, identity);
    auto pivots = hn::Zero(d);
    for (uint64_t j = 0; j < m; ++j) {
      const auto column = hn::And(hn::ShiftRightSame(coef, static_cast<int>(j)), ones);
      const auto candidates = hn::AndNot(pivots, column);
      const auto pivot = hn::And(candidates, hn::Sub(hn::Zero(d), candidates));  // lowest, or 0
      const auto pivot_bytes = hn::Sub(hn::ShiftLeft<8>(pivot), pivot);          // its row: 0xFF
      const auto others = hn::Xor(column, pivot);
      // Rows to update: the others with bit j, none when there is no pivot.
      const auto update =
          hn::IfThenElseZero(hn::Ne(pivot, hn::Zero(d)), hn::Sub(hn::ShiftLeft<8>(others), others));
#if HWY_TARGET == HWY_SCALAR
      const auto pivot_coef = BroadcastMaskedByte(d, coef, pivot_bytes);
      const auto pivot_combo = BroadcastMaskedByte(d, combo, pivot_bytes);
#else
      // The pivot row's byte index within its 128-bit block (one nonzero
      // byte: the sum is it), in every byte of its lane, picks its bytes.
      const auto index = hn::SumsOf8(hn::BitCast(d8, hn::And(pivot_bytes, block_byte_index)));
      const auto pick = hn::TableLookupBytes(hn::BitCast(d8, index), low_byte_of_lane);
      const auto pivot_coef = hn::BitCast(d, hn::TableLookupBytes(hn::BitCast(d8, coef), pick));
      const auto pivot_combo = hn::BitCast(d, hn::TableLookupBytes(hn::BitCast(d8, combo), pick));
#endif
      coef = hn::Xor(coef, hn::And(pivot_coef, update));
      combo = hn::Xor(combo, hn::And(pivot_combo, update));
      pivots = hn::Or(pivots, pivot);
    }
    // A row that is no column's pivot has coefficients 0 (its bits were
    // cleared by pivots, or it would have been one): solvable iff its
    // right-hand side, the xor of its combo's fingerprints, is 0 too. The
    // low bytes of every row's right-hand side at once (byte i of rhs:
    // row i's) screen the lanes; wider fingerprints are then checked in full
    // for the lanes that pass (branches per row only there).
    auto rhs = hn::Zero(d);
    for (size_t k = 0; k < rows; ++k) {
      const auto with_k = hn::And(hn::ShiftRightSame(combo, static_cast<int>(k)), ones);
      rhs = hn::Xor(rhs, hn::And(hn::Sub(hn::ShiftLeft<8>(with_k), with_k), low_byte[k]));
    }
    const auto free_rows = hn::AndNot(pivots, hn::Set(d, key_rows & kOnes));
    const auto free_bytes = hn::Sub(hn::ShiftLeft<8>(free_rows), free_rows);
    uint8_t maybe_bits[8] = {};
    hn::StoreMaskBits(d, hn::Eq(hn::And(rhs, free_bytes), hn::Zero(d)), maybe_bits);
    uint32_t maybe = maybe_bits[0];
    const int left = num_seeds - first;
    if (left < static_cast<int>(lanes)) maybe &= (1u << left) - 1;
    if (maybe == 0) continue;
    alignas(64) uint64_t lane_coef[simd::kSolverMaxLanes];
    alignas(64) uint64_t lane_combo[simd::kSolverMaxLanes];
    alignas(64) uint64_t lane_pivots[simd::kSolverMaxLanes];
    hn::Store(coef, d, lane_coef);
    hn::Store(combo, d, lane_combo);
    hn::Store(pivots, d, lane_pivots);
    for (; maybe != 0; maybe &= maybe - 1) {
      const int t = __builtin_ctz(maybe);
      if (wide && (lane_pivots[t] & key_rows & kOnes) != (key_rows & kOnes)) {
        bool solvable = true;
        for (uint64_t free = key_rows & ~lane_pivots[t] & kOnes; free != 0 && solvable;
             free &= free - 1) {
          const int shift = __builtin_ctzll(free);  // 8 * row
          solvable = xors.Of(static_cast<uint32_t>((lane_combo[t] >> shift) & 0xFF)) == 0;
        }
        if (!solvable) continue;
      }
      for (uint64_t j = 0; j < m; ++j) value[j] = 0;
      for (uint64_t p = lane_pivots[t]; p != 0; p &= p - 1) {
        const int shift = __builtin_ctzll(p);  // 8 * row; its lowest bit is its slot
        value[__builtin_ctzll((lane_coef[t] >> shift) & 0xFF)] =
            xors.Of(static_cast<uint32_t>((lane_combo[t] >> shift) & 0xFF));
      }
      return first + t;
    }
  }
  return -1;
}

// ---- simd::SolveTiny on AVX-512: one seed per 128-bit block, by columns ----
// A seed's system is one 128-bit block of bytes: byte j < 8 is slot j's
// column (bit i: key i's equation has slot j), byte 8 + k is key k's column
// of the combinations (bit i: row i now sums key k; the identity at first),
// so the fingerprints stay out of the elimination. Slot j's step is the same
// on every block: byte j broadcast (one byte shuffle), the lowest row of it
// not yet a pivot becomes the pivot p, and every column byte holding p's bit
// is xored with the other rows of slot j's column (the row operation
// "rows with slot j += pivot row", in columns). The pivot's row bit is kept
// in byte j of `piv`. Any pivot order gives the one reduced form (see
// SolveTinySeeds), hence the same solution. Eight seeds a round. Rows left
// without a pivot have coefficients 0 and must have right-hand side 0: the
// low 8 bits of every row's right-hand side come from one pass over the
// combination columns (exact for fingerprints under 2^8; wider ones are then
// checked in full for the few seeds that pass). Against SolveTinySeeds (one
// seed per 64-bit lane, rows in bytes, a broadcast by SumsOf8 and a multiply
// per slot) on an Intel Xeon (AVX3), random square systems, CPU time per
// solve: 0.72x at 8 slots, 0.80x at 6; on AVX2 it took 0.93-1.1x, and
// 1.3x with SSSE3's 128-bit vectors, where SolveTinySeeds stays.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
inline constexpr size_t kTinyBlockRound = 8;  // seeds a round

// Bytes 0-15 of every 128-bit block: 0, 1, ..., 15.
struct TinyBlockIota {
  uint8_t of[64];
  constexpr TinyBlockIota() : of() {
    for (int i = 0; i < 64; ++i) of[i] = static_cast<uint8_t>(i & 15);
  }
};

// Each 64-bit lane's 8 x 8 bit matrix transposed (byte i, bit j -> byte j,
// bit i): three exchanges of bit blocks (Hacker's Delight, 7-3).
template <class D64, class V>
HWY_INLINE V TransposeBits8x8Lanes(D64 d64, V x) {
  auto t = hn::And(hn::Xor(x, hn::ShiftRight<7>(x)), hn::Set(d64, 0x00AA00AA00AA00AAull));
  x = hn::Xor(x, hn::Xor(t, hn::ShiftLeft<7>(t)));
  t = hn::And(hn::Xor(x, hn::ShiftRight<14>(x)), hn::Set(d64, 0x0000CCCC0000CCCCull));
  x = hn::Xor(x, hn::Xor(t, hn::ShiftLeft<14>(t)));
  t = hn::And(hn::Xor(x, hn::ShiftRight<28>(x)), hn::Set(d64, 0x00000000F0F0F0F0ull));
  return hn::Xor(x, hn::Xor(t, hn::ShiftLeft<28>(t)));
}

HWY_INLINE uint64_t TransposeBits8x8(uint64_t x) {
  uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
  x ^= t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
  x ^= t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
  return x ^ t ^ (t << 28);
}

// simd::SolveTiny's contract (compiled for AVX3 and up only).
HWY_INLINE int SolveTinyBlocks(const uint64_t* HWY_RESTRICT x,
                               const uint32_t* HWY_RESTRICT fingerprint, size_t rows, uint64_t m,
                               int num_seeds, uint32_t* HWY_RESTRICT value) {
  const hn::ScalableTag<uint8_t> d8;
  const hn::Repartition<uint64_t, decltype(d8)> d64;
  constexpr size_t kLanes64 = HWY_LANES(uint64_t);
  static_assert(kLanes64 >= 2 && kLanes64 <= kTinyBlockRound, "whole blocks, whole rounds");
  constexpr size_t kRowVectors = kTinyBlockRound / kLanes64;  // per key, a round
  constexpr size_t kBlockVectors = 2 * kRowVectors;           // a round's systems
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  alignas(64) static constexpr TinySeedKeys kSeedKeys{};
  static_assert(simd::kSolverTinySeeds + simd::kSolverMaxLanes >= 2 * kTinyBlockRound,
                "a round's seed keys");
  alignas(64) static constexpr TinyBlockIota kIota{};
  const auto iota = hn::Load(d8, kIota.of);
  const auto multiplier = hn::Set(d64, simd::kSolverCoefMultiplier);
  const auto slots = hn::Set(d64, (uint64_t{1} << m) - 1);
  const auto one = hn::Set(d64, 1);
  uint64_t identity = 0;  // key k's combination column: row k
  for (size_t k = 0; k < rows; ++k) identity |= uint64_t{1} << (9 * k);
  const auto identity_v = hn::Set(d64, identity);
  // planes[k]: byte b < 8 is 0xFF where fingerprint[k] has bit b, bytes 8-15
  // of each block 0; `wide`: some fingerprint has a bit from 8 up.
  hn::Vec<decltype(d8)> planes[8];
  uint32_t any = 0;
  for (size_t k = 0; k < rows; ++k) {
    any |= fingerprint[k];
    const uint64_t bit_b = ((fingerprint[k] & 0xFFu) * kOnes) & 0x8040201008040201ull;
    const uint64_t high =
        (bit_b | ((bit_b & 0x7F7F7F7F7F7F7F7Full) + 0x7F7F7F7F7F7F7F7Full)) & 0x8080808080808080ull;
    planes[k] =
        hn::BitCast(d8, hn::InterleaveLower(d64, hn::Set(d64, (high >> 7) * 0xFF), hn::Zero(d64)));
  }
  const bool wide = any > 0xFF;
  const TinySubsetXors xors(fingerprint, rows);
  const uint8_t key_rows = static_cast<uint8_t>((1u << rows) - 1);
  for (int first = 0; first < num_seeds; first += static_cast<int>(kTinyBlockRound)) {
    // Block vector 2q holds seeds first + q * kLanes64 + 2b (block b), 2q + 1
    // the odd ones.
    hn::Vec<decltype(d8)> sys[kBlockVectors], piv[kBlockVectors], used[kBlockVectors];
    HWY_UNROLL(4)
    for (size_t q = 0; q < kRowVectors; ++q) {
      const auto seed_key = hn::Load(d64, kSeedKeys.of + first + q * kLanes64);
      auto by_rows = hn::Zero(d64);  // byte i: key i's coefficients
      for (size_t i = 0; i < rows; ++i) {
        auto c = hn::Mul(hn::Xor(hn::Set(d64, x[i]), seed_key), multiplier);  // AVX-512DQ
        c = hn::Or(hn::And(hn::Xor(c, hn::ShiftRight<32>(c)), slots), one);
        by_rows = hn::Or(by_rows, hn::ShiftLeftSame(c, static_cast<int>(8 * i)));
      }
      const auto columns = TransposeBits8x8Lanes(d64, by_rows);
      sys[2 * q] = hn::BitCast(d8, hn::InterleaveLower(d64, columns, identity_v));
      sys[2 * q + 1] = hn::BitCast(d8, hn::InterleaveUpper(d64, columns, identity_v));
    }
    for (size_t t = 0; t < kBlockVectors; ++t) {
      piv[t] = hn::Zero(d8);
      used[t] = hn::Zero(d8);
    }
    for (uint64_t j = 0; j < m; ++j) {
      const auto byte_j = hn::Set(d8, static_cast<uint8_t>(j));
      const auto at_j = hn::Eq(iota, byte_j);
      HWY_UNROLL(8)
      for (size_t t = 0; t < kBlockVectors; ++t) {
        const auto column = hn::TableLookupBytes(sys[t], byte_j);
        const auto avail = hn::AndNot(used[t], column);
        const auto p = hn::And(avail, hn::Sub(hn::Zero(d8), avail));  // lowest, or 0
        const auto others = hn::Xor(column, p);
        // (Not TestBit: with p = 0 it would select every byte.)
        const auto has_p = hn::Ne(hn::And(sys[t], p), hn::Zero(d8));
        sys[t] = hn::Xor(sys[t], hn::IfThenElseZero(has_p, others));
        used[t] = hn::Or(used[t], p);
        piv[t] = hn::IfThenElse(at_j, p, piv[t]);
      }
    }
    uint32_t maybe = 0;  // bit s: seed first + s may be solvable
    HWY_UNROLL(8)
    for (size_t t = 0; t < kBlockVectors; ++t) {
      // Byte b < 8 of rhs: the rows whose right-hand side has bit b.
      auto rhs = hn::Zero(d8);
      for (size_t k = 0; k < rows; ++k) {
        const auto keys_column =
            hn::TableLookupBytes(sys[t], hn::Set(d8, static_cast<uint8_t>(8 + k)));
        rhs = hn::Xor(rhs, hn::And(keys_column, planes[k]));
      }
      const auto no_pivot = hn::AndNot(used[t], hn::Set(d8, key_rows));
      const auto ok = hn::Eq(hn::BitCast(d64, hn::And(rhs, no_pivot)), hn::Zero(d64));
      uint8_t bits[8] = {};
      hn::StoreMaskBits(d64, ok, bits);
      // Lane 2b (block b's low half) of vector t: seed (t / 2) * kLanes64 + 2b + t % 2.
      constexpr uint32_t kEvenLanes = kLanes64 == 8 ? 0x55u : kLanes64 == 4 ? 0x5u : 0x1u;
      maybe |= ((bits[0] & kEvenLanes) << (t % 2)) << ((t / 2) * kLanes64);
    }
    const int left = num_seeds - first;
    if (left < static_cast<int>(kTinyBlockRound)) maybe &= (1u << left) - 1;
    for (; maybe != 0; maybe &= maybe - 1) {
      const int s = __builtin_ctz(maybe);
      const size_t in_row = static_cast<size_t>(s) % kLanes64;
      const size_t t = 2 * (static_cast<size_t>(s) / kLanes64) + (in_row & 1);
      const size_t block = 16 * (in_row / 2);
      alignas(64) uint8_t sys_bytes[64], piv_bytes[64], used_bytes[64];
      hn::Store(sys[t], d8, sys_bytes);
      hn::Store(piv[t], d8, piv_bytes);
      hn::Store(used[t], d8, used_bytes);
      const uint8_t* keys_columns = sys_bytes + block + 8;
      const uint8_t no_pivot = static_cast<uint8_t>(key_rows & ~used_bytes[block]);
      uint64_t row_keys;  // byte i: the keys row i sums
      std::memcpy(&row_keys, keys_columns, sizeof(row_keys));
      row_keys = TransposeBits8x8(row_keys);
      if (wide && no_pivot != 0) {  // the full right-hand sides (rare)
        bool solvable = true;
        for (uint32_t f = no_pivot; f != 0 && solvable; f &= f - 1) {
          const int row = __builtin_ctz(f);
          solvable = xors.Of(static_cast<uint32_t>(row_keys >> (8 * row)) & 0xFF) == 0;
        }
        if (!solvable) continue;
      }
      for (uint64_t j = 0; j < m; ++j) {
        const uint32_t p = piv_bytes[block + j];  // the pivot row's bit, 0 for a free slot
        const uint32_t keys =
            static_cast<uint32_t>(row_keys >> (8 * (__builtin_ctz(p | 0x100u) & 7))) & 0xFF;
        value[j] = p != 0 ? xors.Of(keys) : 0;
      }
      return first + s;
    }
  }
  return -1;
}
#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3

// ---- simd::SolveDense: at most 16 keys in at most 16 slots, one seed per vector ----
// A seed's system is one vector of 16-bit lanes: lane i is key i's
// coefficients (bit j: slot j), and a second vector's lane i the keys whose
// equations row i now sums (bit k: key k; 1 << i at first), so the
// fingerprints stay out of the elimination. Slot j's step: the lowest lane
// with bit j set that is not yet a pivot becomes the pivot (a mask's first
// true lane), its two words are broadcast, and every other lane with bit j
// set is xored with them. Slots in order 0..m-1 make each pivot row's lowest
// bit its slot, as in the row eliminations, hence the same solution. The
// seeds of a round are independent chains, which the core runs side by side.
// Every seed in one pass instead (a seed per 16-bit lane, a vector per slot
// and per fingerprint bit, the keys' coefficient words transposed by masked
// swaps, no lane extracted until the chosen seed's values) took 0.68-0.77x
// the time at 9-16 keys with R = 4, but 0.89-1.19x with R = 10 and
// 1.06-1.09x with R = 16: each fingerprint bit is a column to eliminate, 16
// steps of four dependent operations (AMD Zen 3, AVX2, random sets; through
// the policy at 16 keys, compact over blocked 7.1 -> 5.3 at 4 bits/key,
// 3.8 -> 3.5 at 10, unchanged at 16).
inline constexpr int kDenseRoundSeeds = 4;

HWY_INLINE int SolveDenseSeeds(const uint64_t* HWY_RESTRICT x,
                               const uint32_t* HWY_RESTRICT fingerprint, size_t rows, uint64_t m,
                               int num_seeds, uint32_t* HWY_RESTRICT value) {
  const hn::CappedTag<uint16_t, simd::kSolverDenseSlots> d;
  if (hn::Lanes(d) < simd::kSolverDenseSlots) return -2;  // a system per vector only
  const auto iota = hn::Iota(d, 0);
  const auto key_rows = hn::FirstN(d, rows);
  alignas(64) uint16_t identity_lanes[simd::kSolverDenseSlots] = {};
  for (size_t i = 0; i < rows; ++i) identity_lanes[i] = static_cast<uint16_t>(1u << i);
  const auto identity = hn::Load(d, identity_lanes);  // row i sums key i
  const uint64_t slot_mask = (uint64_t{1} << m) - 1;  // m <= 16
  for (int first = 0; first < num_seeds; first += kDenseRoundSeeds) {
    hn::Vec<decltype(d)> coef[kDenseRoundSeeds], keys[kDenseRoundSeeds];
    hn::Mask<decltype(d)> used[kDenseRoundSeeds];
    for (int t = 0; t < kDenseRoundSeeds; ++t) {
      alignas(64) uint16_t lanes[simd::kSolverDenseSlots] = {};
      const uint64_t seed_key = static_cast<uint64_t>(first + t + 1) * simd::kSolverSeedStep;
      for (size_t i = 0; i < rows; ++i) {
        uint64_t c = (x[i] ^ seed_key) * simd::kSolverCoefMultiplier;
        c ^= c >> 32;
        lanes[i] = static_cast<uint16_t>((c & slot_mask) | 1);
      }
      coef[t] = hn::Load(d, lanes);
      keys[t] = identity;
      used[t] = hn::FirstN(d, 0);
    }
    for (uint64_t j = 0; j < m; ++j) {
      const auto bit = hn::Set(d, static_cast<uint16_t>(1u << j));
      for (int t = 0; t < kDenseRoundSeeds; ++t) {
        const auto has = hn::TestBit(coef[t], bit);
        const intptr_t found = hn::FindFirstTrue(d, hn::AndNot(used[t], has));
        // No pivot (a free slot): no lane is 0xFFFF, and the broadcast rows
        // are 0, so nothing changes.
        const uint16_t p = found < 0 ? uint16_t{0xFFFF} : static_cast<uint16_t>(found);
        const auto keep = hn::Set(d, found < 0 ? uint16_t{0} : uint16_t{0xFFFF});
        const auto is_pivot = hn::Eq(iota, hn::Set(d, p));
        const auto update = hn::AndNot(is_pivot, has);
        const size_t lane = found < 0 ? 0 : static_cast<size_t>(found);
        const auto row_coef = hn::And(hn::Set(d, hn::ExtractLane(coef[t], lane)), keep);
        const auto row_keys = hn::And(hn::Set(d, hn::ExtractLane(keys[t], lane)), keep);
        coef[t] = hn::Xor(coef[t], hn::IfThenElseZero(update, row_coef));
        keys[t] = hn::Xor(keys[t], hn::IfThenElseZero(update, row_keys));
        used[t] = hn::Or(used[t], is_pivot);
      }
    }
    for (int t = 0; t < kDenseRoundSeeds && first + t < num_seeds; ++t) {
      // Row i's right-hand side: the xor of the fingerprints of its keys,
      // low and high halves.
      auto sum_lo = hn::Zero(d), sum_hi = hn::Zero(d);
      for (size_t k = 0; k < rows; ++k) {
        const auto with_k = hn::TestBit(keys[t], hn::Set(d, static_cast<uint16_t>(1u << k)));
        sum_lo = hn::Xor(
            sum_lo, hn::IfThenElseZero(with_k, hn::Set(d, static_cast<uint16_t>(fingerprint[k]))));
        sum_hi = hn::Xor(
            sum_hi,
            hn::IfThenElseZero(with_k, hn::Set(d, static_cast<uint16_t>(fingerprint[k] >> 16))));
      }
      // A row that is no slot's pivot has coefficients 0 (its bits were
      // cleared by pivots, or it would have been one): solvable iff its
      // right-hand side is 0 too.
      const auto free_rows = hn::AndNot(used[t], key_rows);
      const auto bad = hn::And(free_rows, hn::Ne(hn::Or(sum_lo, sum_hi), hn::Zero(d)));
      if (!hn::AllFalse(d, bad)) continue;
      alignas(64) uint16_t lane_coef[simd::kSolverDenseSlots];
      alignas(64) uint16_t lane_lo[simd::kSolverDenseSlots];
      alignas(64) uint16_t lane_hi[simd::kSolverDenseSlots];
      hn::Store(hn::IfThenElseZero(used[t], coef[t]), d, lane_coef);
      hn::Store(sum_lo, d, lane_lo);
      hn::Store(sum_hi, d, lane_hi);
      for (uint64_t j = 0; j < m; ++j) value[j] = 0;
      for (size_t i = 0; i < rows; ++i) {
        if (lane_coef[i] == 0) continue;  // not a pivot row
        value[__builtin_ctz(lane_coef[i])] = uint32_t{lane_lo[i]} | uint32_t{lane_hi[i]} << 16;
      }
      return first + t;
    }
  }
  return -1;
}

// ---- simd::SolveDense on AVX-512: rows in 32-bit lanes, pivots by compress ----
// A seed's system is one vector of sixteen 32-bit lanes: lane i is key i's
// row, its coefficients in bits 0-15 and in bits 16-31 its right-hand side
// where every fingerprint has at most 16 bits (`narrow`: R <= 16, every
// LevelDB filter of 9-16 keys up to 16 bits/key), else the keys it now sums
// (1 << (16 + i) at first), whose fingerprints are summed at the end. Slot
// j's step: the rows with bit j set are compressed to the low lanes
// (vpcompressd), so the lowest of them, the pivot, is lane 0, broadcast to
// every lane (no round trip through a scalar register, which
// SolveDenseSeeds's pivot takes); it is xored into every row with bit j,
// itself included, so a pivot row leaves the system as 0 (the layout of
// EliminateRows) and no mask of used rows is kept. The pivot rows are
// recorded by slot in a second vector, Gauss-Jordan style: each new one is
// xored into the recorded rows with bit j. Lane j of that vector starts as
// bit j alone, so slot j's step xors its pivot into lane j too, leaving the
// pivot row without its bit j (or bit j alone for a free slot): either way
// lane j's upper bits are those of the reduced row of slot j, the solution
// at slot j. Rows left nonzero have coefficients 0: solvable iff their
// right-hand sides are 0 too. Slots in order 0..m-1 with the lowest row as
// pivot: the same solution as every other elimination (see SolveTinySeeds).
//
// Two seeds a round: a round's cost grows with its seeds (vpcompressd, the
// broadcasts and the mask tests share one port on Intel), while a square
// system is solvable for a seed w.p. about 0.29. Against SolveDenseSeeds
// (sixteen 16-bit lanes, the pivot through a scalar register, four seeds a
// round) on an Intel Xeon (AVX3), random sets, time per solve of the first
// solvable seed: 0.49x at 16 keys, 0.49x at 12 in 12, 0.53x at 9 in 9, 0.40x
// at 14 in 16; with key bits above the coefficients (no right-hand sides in
// the rows) 0.59x, 0.59x, 0.62x and 0.44x, and then with three seeds a round
// 0.65x at 16, four 0.66x, one 0.67x. Through the LevelDB policy
// (compact_bench BM_BuildVs at 16 keys, medians of 3 alternated runs, ns per
// key): 37.3 -> 20.0 at 4 bits/key, 34.7 -> 24.2 at 10, 35.1 -> 22.8 at 16;
// 37.3 -> 25.7 at 20 (R = 20: key bits). The same kernel on eight lanes in
// place of SolveTinyBlocks took 0.79-0.85x its time alone at 5-8 keys, but
// 1.03-1.09x through the policy (BM_BuildVs at 8 keys, 4-20 bits/key), so
// SolveTiny keeps SolveTinyBlocks.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
inline constexpr int kDenseCompressRoundSeeds = 2;

// Bits 16 + k of every lane of `rows` name keys k: the xor of those keys'
// fingerprints, per lane.
template <class D32, class V>
HWY_INLINE V KeyFingerprintSums(D32 d32, V rows, const uint32_t* HWY_RESTRICT fingerprint,
                                size_t keys) {
  auto sums = hn::Zero(d32);
  for (size_t k = 0; k < keys; ++k) {
    const auto with_k = hn::TestBit(rows, hn::Set(d32, uint32_t{1} << (16 + k)));
    sums = hn::Xor(sums, hn::IfThenElseZero(with_k, hn::Set(d32, fingerprint[k])));
  }
  return sums;
}

// simd::SolveDense's contract (compiled for AVX3 and up only).
HWY_INLINE int SolveDenseCompress(const uint64_t* HWY_RESTRICT x,
                                  const uint32_t* HWY_RESTRICT fingerprint, size_t rows, uint64_t m,
                                  int num_seeds, uint32_t* HWY_RESTRICT value) {
  const hn::ScalableTag<uint32_t> d32;
  const hn::Repartition<uint64_t, decltype(d32)> d64;
  const hn::Half<decltype(d32)> dh32;
  static_assert(HWY_LANES(uint32_t) == simd::kSolverDenseSlots, "a system per vector");
  constexpr size_t kHalf = HWY_LANES(uint64_t);  // rows per 64-bit vector
  alignas(64) uint64_t padded_x[simd::kSolverDenseSlots] = {};
  for (size_t i = 0; i < rows; ++i) padded_x[i] = x[i];
  const auto x_lo = hn::Load(d64, padded_x);
  const auto x_hi = hn::Load(d64, padded_x + kHalf);
  const auto multiplier = hn::Set(d64, simd::kSolverCoefMultiplier);
  const auto key_rows = hn::FirstN(d32, rows);
  uint32_t any = 0;
  for (size_t i = 0; i < rows; ++i) any |= fingerprint[i];
  const bool narrow = any <= 0xFFFF;
  alignas(64) uint32_t narrow_upper[simd::kSolverDenseSlots] = {};
  for (size_t i = 0; i < rows && narrow; ++i) narrow_upper[i] = fingerprint[i] << 16;
  const auto lane_bits = hn::Shl(hn::Set(d32, 1), hn::Iota(d32, 0));  // 1 << i
  const auto upper = narrow ? hn::Load(d32, narrow_upper) : hn::ShiftLeft<16>(lane_bits);
  const auto upper_bits = hn::Set(d32, 0xFFFF0000u);
  const auto slots = hn::Set(d32, static_cast<uint32_t>((uint64_t{1} << m) - 1));
  const auto one = hn::Set(d32, 1);
  alignas(64) static constexpr int32_t kLane0[HWY_LANES(uint32_t)] = {};
  const auto lane0 = hn::SetTableIndices(d32, kLane0);
  // Key i's coefficients under `seed`, `upper` above them.
  const auto system = [&](int seed) {
    const auto seed_key = hn::Set(d64, static_cast<uint64_t>(seed + 1) * simd::kSolverSeedStep);
    auto lo = hn::Mul(hn::Xor(x_lo, seed_key), multiplier);  // AVX-512DQ
    auto hi = hn::Mul(hn::Xor(x_hi, seed_key), multiplier);
    lo = hn::Xor(lo, hn::ShiftRight<32>(lo));
    hi = hn::Xor(hi, hn::ShiftRight<32>(hi));
    const auto c = hn::Combine(d32, hn::TruncateTo(dh32, hi), hn::TruncateTo(dh32, lo));
    return hn::IfThenElseZero(key_rows, hn::Or(hn::Or(hn::And(c, slots), one), upper));
  };
  for (int first = 0; first < num_seeds; first += kDenseCompressRoundSeeds) {
    hn::Vec<decltype(d32)> live[kDenseCompressRoundSeeds], reduced[kDenseCompressRoundSeeds];
    for (int t = 0; t < kDenseCompressRoundSeeds; ++t) {
      live[t] = system(first + t);
      reduced[t] = lane_bits;
    }
    for (uint64_t j = 0; j < m; ++j) {
      const auto bit = hn::Set(d32, uint32_t{1} << j);
      for (int t = 0; t < kDenseCompressRoundSeeds; ++t) {
        const auto has = hn::TestBit(live[t], bit);
        // The pivot: the lowest row with bit j (0 if none: a free slot).
        const auto pivot = hn::TableLookupLanes(hn::Compress(live[t], has), lane0);
        live[t] = MaskedXor(d32, has, live[t], pivot);
        reduced[t] = MaskedXor(d32, hn::TestBit(reduced[t], bit), reduced[t], pivot);
      }
    }
    for (int t = 0; t < kDenseCompressRoundSeeds && first + t < num_seeds; ++t) {
      // Rows left (coefficients 0) must have right-hand sides 0.
      if (narrow) {
        if (!hn::AllFalse(d32, hn::TestBit(live[t], upper_bits))) continue;
      } else if (!hn::AllTrue(d32, hn::Eq(live[t], hn::Zero(d32)))) {
        const auto left = KeyFingerprintSums(d32, live[t], fingerprint, rows);
        if (!hn::AllTrue(d32, hn::Eq(left, hn::Zero(d32)))) continue;
      }
      alignas(64) uint32_t lanes[simd::kSolverDenseSlots];
      hn::Store(narrow ? hn::ShiftRight<16>(reduced[t])
                       : KeyFingerprintSums(d32, reduced[t], fingerprint, rows),
                d32, lanes);
      for (uint64_t j = 0; j < m; ++j) value[j] = lanes[j];
      return first + t;
    }
  }
  return -1;
}
#endif  // HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3

}  // namespace compact_solver

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#endif  // include guard
