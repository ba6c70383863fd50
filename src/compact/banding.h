// The elimination of the compact filter's version-2 system (compact/format.h):
// Gaussian elimination "on the fly", one row at a time, as in Dillinger &
// Walzer 2021 ("Ribbon filter: practically smaller than Bloom and Xor": the
// standard Ribbon's insertion).
//
// Slot j holds at most one row, stored shifted so that bit 0 is slot j and
// set (its pivot), with its right-hand side: coef[j] == 0 marks a free slot.
// A new row (bit 0 of its coefficients at its start, set) walks up from its
// start: at an occupied slot it is xored with the stored row, which clears
// its bit 0, and moves on to its next set bit; at a free slot it is stored.
// Its coefficients stay inside [start, start + 64), so one word holds them
// wherever it is. A row that reaches 0 depends on the stored ones: the system
// is consistent iff its right-hand side reached 0 too.
//
// The stored rows are an echelon form of the rows added, in any order: the
// pivot slots are the lowest slots of the nonzero combinations of the rows,
// which depend only on the space they span. So the solution with every free
// slot 0 (simd::SolveColumns, back substitution) is the same whatever order
// the rows come in, and is the one the format stores.
//
// Cost: one load per slot a row visits, no per-slot pass over pending rows,
// but each visit waits for the last (load, xor, count trailing zeros: ~10
// cycles). Rows whose windows are disjoint commute, so BandingAddLanes walks
// kBandingLanes groups of such rows at once, one step of each in turn.
#ifndef BLOCKBLOOM_COMPACT_BANDING_H_
#define BLOCKBLOOM_COMPACT_BANDING_H_

#include <cstddef>
#include <cstdint>

#include "compact/format.h"  // V2Coefficients

namespace blockbloom {
namespace compact {

// Adds the row with coefficients `c` (bit j: slot start + j; bit 0 set) and
// right-hand side `f` to the echelon form in coef / result (m entries each;
// all 0 for no rows). False iff the row contradicts the rows added before
// (the system has no solution); the form is then unusable. REQUIRES: every
// set bit of c is a slot below m.
inline bool BandingAdd(uint64_t start, uint64_t c, uint32_t f, uint64_t* coef, uint32_t* result) {
  uint64_t slot = start;
  for (;;) {
    const uint64_t other = coef[slot];
    if (other == 0) {
      coef[slot] = c;
      result[slot] = f;
      return true;
    }
    c ^= other;
    f ^= result[slot];
    if (c == 0) return f == 0;
    const int skip = __builtin_ctzll(c);
    slot += static_cast<uint64_t>(skip);
    c >>= skip;
  }
}

// Rows [next, end) of a group, walked by BandingAddLanes.
struct BandingLane {
  size_t next = 0;
  size_t end = 0;
};

// BandingAdd of the rows of kBandingLanes groups, interleaved: row i starts
// at start[i] with coefficients V2Coefficients(x[i], seed, m) and right-hand
// side f[i]. REQUIRES: every row of a group touches slots (its start and the
// 63 after) that no row of another group touches; then the interleaving is
// the same as adding the groups one after another. False iff some row
// contradicts the rows added before.
inline constexpr int kBandingLanes = 4;
inline bool BandingAddLanes(const BandingLane* groups, const uint64_t* x, const uint32_t* start,
                            const uint32_t* f, uint8_t seed, uint64_t m, uint64_t* coef,
                            uint32_t* result) {
  struct Walk {
    size_t next, end;
    uint64_t slot, c;
    uint32_t f;
    bool live;
  };
  Walk w[kBandingLanes];
  for (int l = 0; l < kBandingLanes; ++l) {
    w[l] = Walk{groups[l].next, groups[l].end, 0, 0, 0, false};
  }
  for (;;) {
    int live = 0;
    for (int l = 0; l < kBandingLanes; ++l) {
      Walk& k = w[l];
      if (!k.live) {
        if (k.next == k.end) continue;
        k.slot = start[k.next];
        k.c = V2Coefficients(x[k.next], seed, m);
        k.f = f[k.next];
        ++k.next;
        k.live = true;
      }
      ++live;
      const uint64_t other = coef[k.slot];
      if (other == 0) {
        coef[k.slot] = k.c;
        result[k.slot] = k.f;
        k.live = false;
        continue;
      }
      k.c ^= other;
      k.f ^= result[k.slot];
      if (k.c == 0) {
        if (k.f != 0) return false;
        k.live = false;
        continue;
      }
      const int skip = __builtin_ctzll(k.c);
      k.slot += static_cast<uint64_t>(skip);
      k.c >>= skip;
    }
    if (live == 0) return true;
  }
}

}  // namespace compact
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMPACT_BANDING_H_
