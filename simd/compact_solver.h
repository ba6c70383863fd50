// Runtime-dispatched kernels of the compact filter's version-2 build
// (src/compact/builder.cc): the GF(2) elimination of its banded system and
// the back substitution that writes the solution's columns
// (docs/FORMAT.md, "Compact filter, version 2"). simd/compact_solver-inl.h
// computes them per Highway target; every target returns the same answers
// and writes the same bytes (tests/compact_solver_test.cc runs each).
//
// Each call goes through one function pointer, resolved on first use for
// the CPU's best target (re-resolved by simd::ForceTargetForTesting).
//
// Thread-safety: pure functions over caller-owned memory.
#ifndef BLOCKBLOOM_SIMD_COMPACT_SOLVER_H_
#define BLOCKBLOOM_SIMD_COMPACT_SOLVER_H_

#include <cstddef>
#include <cstdint>

#include "targets.h"  // SupportedTargets, ForceTargetForTesting

namespace blockbloom {
namespace simd {

// The most rows one vector holds on any target: the elimination's scratch
// rows hold this many entries past the last row (SolverRows).
inline constexpr size_t kSolverMaxLanes = 8;
inline constexpr size_t kSolverRowPad = kSolverMaxLanes;

// The system of EliminateByColumns: n rows (keys) sorted by their first
// slot; row i's coefficients lie in slots [start, start + 64), stored with
// bit 0 at its start. Scratch owned by the caller, reused across seeds.
struct SolverRows {
  const uint32_t* first;        // first[j]: rows starting before slot j; m + 1 entries
  const uint64_t* join_coef;    // the rows in start order; n entries
  const uint64_t* join_result;  // their right-hand sides; n entries
  uint64_t* coef;               // active rows (scratch, defined); n + kSolverRowPad entries
  uint64_t* result;             // (scratch, defined); n + kSolverRowPad entries
};

// Eliminates the system slot by slot (the echelon form: coef[j] is slot j's
// pivot row shifted so that bit 0 is slot j, or 0 for a free slot; result[j]
// its right-hand side). False if the system has no solution. coef and result
// hold m entries, written in full.
bool EliminateByColumns(uint64_t m, uint64_t* coef, uint32_t* result, const SolverRows& rows);

// The most rows of the systems all starting at slot 0 (SolveSmall).
inline constexpr size_t kSolverSmallRows = 64;

// Eliminates and solves a system of `rows` <= 64 rows, all starting at slot
// 0, in rows <= m <= 64 slots (row_coef: bit k is slot k; result_planes:
// word b < r, bit i is bit b of row i's right-hand side, as
// ResultPlanes writes them): writes the solution with every free slot 0 as
// SolveColumns does, over the first ceil(r * m / 8) bytes of `out`. False if
// the system has no solution (`out` untouched). REQUIRES: 1 <= r <= 32.
bool SolveSmall(const uint64_t* row_coef, const uint64_t* result_planes, size_t rows, uint64_t m,
                int r, uint8_t* out);

// The most rows and slots of the systems of SolveBand.
inline constexpr size_t kSolverBandRows = 64;
inline constexpr size_t kSolverBandSlots = 256;

// Eliminates and solves a banded system of `rows` <= kSolverBandRows rows in
// m <= kSolverBandSlots slots, sorted by start (row i: bit k of row_coef[i]
// is slot row_start[i] + k, every such slot below m; result_planes as
// ResultPlanes writes them): writes the solution with every free slot 0 as
// SolveColumns does, ORed into the first ceil(r * m / 8) bytes of the zeroed
// `out`. False if the system has no solution (`out` untouched).
// REQUIRES: 1 <= r <= 32.
bool SolveBand(const uint64_t* row_coef, const uint32_t* row_start, const uint64_t* result_planes,
               size_t rows, uint64_t m, int r, uint8_t* out);

// The most keys and slots of SolveTiny, and the most seeds SolveTiny and
// SolveDense try.
inline constexpr size_t kSolverTinySlots = 8;
inline constexpr int kSolverTinySeeds = 16;
// The version-2 coefficient rule SolveTiny and SolveDense compute
// (compact/format.h, V2Coefficients): key x under seed s has the low m bits
// of c ^ (c >> 32), c = (x ^ (s + 1) * kSolverSeedStep) *
// kSolverCoefMultiplier, with bit 0 set.
inline constexpr uint64_t kSolverSeedStep = 0x9E3779B97F4A7C15ull;
inline constexpr uint64_t kSolverCoefMultiplier = 0xD6E8FEB86659FD93ull;

// The version-2 systems of `rows` <= 8 keys in rows <= m <= 8 slots under
// seeds 0, 1, ..., num_seeds - 1 (key i: coefficients from x[i] by the rule
// above, right-hand side fingerprint[i]): the first
// seed whose system is solvable, with value[j] (j < m) its solution at slot
// j, every free slot 0; -1 if none is (value untouched). A vector of seeds
// at a time: on AVX3 and up one seed per 128-bit block, eliminated by
// columns; below, one per 64-bit lane, by rows (compact_solver-inl.h).
// REQUIRES: num_seeds <= kSolverTinySeeds.
int SolveTiny(const uint64_t* x, const uint32_t* fingerprint, size_t rows, uint64_t m,
              int num_seeds, uint32_t* value);

// The most keys and slots of SolveDense.
inline constexpr size_t kSolverDenseSlots = 16;

// SolveTiny's contract for rows <= m <= 16 (kSolverDenseSlots), one seed's
// system per vector of sixteen 16-bit lanes, a round of seeds at a time (on
// AVX3 and up sixteen 32-bit lanes, each pivot found by a compress);
// -2 where the target's vectors hold fewer lanes (the caller solves
// otherwise).
int SolveDense(const uint64_t* x, const uint32_t* fingerprint, size_t rows, uint64_t m,
               int num_seeds, uint32_t* value);

// SolveSmall's result_planes (32 words) of `rows` <= 64 right-hand sides
// (they do not depend on the seed): bit i of word b is bit b of result[i].
void ResultPlanes(const uint32_t* result, size_t rows, uint64_t* planes);

// Back substitution of an eliminated system (every free slot 0): bit b of
// slot i's solution goes to bit b * m + i of the zeroed `out` (ceil(r * m /
// 8) bytes), for b < r. REQUIRES: 1 <= r <= 32.
void SolveColumns(const uint64_t* coef, const uint32_t* result, uint64_t m, int r, uint8_t* out);

using EliminateByColumnsFn = bool (*)(uint64_t m, uint64_t* coef, uint32_t* result,
                                      const SolverRows& rows);
using SolveSmallFn = bool (*)(const uint64_t* row_coef, const uint64_t* result_planes, size_t rows,
                              uint64_t m, int r, uint8_t* out);
using SolveBandFn = bool (*)(const uint64_t* row_coef, const uint32_t* row_start,
                             const uint64_t* result_planes, size_t rows, uint64_t m, int r,
                             uint8_t* out);
using SolveTinyFn = int (*)(const uint64_t* x, const uint32_t* fingerprint, size_t rows, uint64_t m,
                            int num_seeds, uint32_t* value);
using SolveDenseFn = int (*)(const uint64_t* x, const uint32_t* fingerprint, size_t rows,
                             uint64_t m, int num_seeds, uint32_t* value);
using ResultPlanesFn = void (*)(const uint32_t* result, size_t rows, uint64_t* planes);
using SolveColumnsFn = void (*)(const uint64_t* coef, const uint32_t* result, uint64_t m, int r,
                                uint8_t* out);

// The kernels compiled for `target` (a bit of SupportedTargets()), for tests
// and benchmarks; nullptr if that target is not compiled.
EliminateByColumnsFn EliminateByColumnsForTarget(int64_t target);
SolveColumnsFn SolveColumnsForTarget(int64_t target);
SolveSmallFn SolveSmallForTarget(int64_t target);
ResultPlanesFn ResultPlanesForTarget(int64_t target);
SolveBandFn SolveBandForTarget(int64_t target);
SolveTinyFn SolveTinyForTarget(int64_t target);
SolveDenseFn SolveDenseForTarget(int64_t target);

}  // namespace simd
}  // namespace blockbloom

#endif  // BLOCKBLOOM_SIMD_COMPACT_SOLVER_H_
