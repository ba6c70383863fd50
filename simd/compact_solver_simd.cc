// Compile every attainable target, the portable scalar one included, whatever
// the build passes: tests prove each writes the same bytes.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "compact_solver.h"

#include <atomic>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "compact_solver_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "compact_solver-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {

// Out-of-line per-target entry points (the -inl.h kernels are HWY_INLINE).
HWY_NOINLINE bool EliminateByColumnsKernel(uint64_t m, uint64_t* coef, uint32_t* result,
                                           const simd::SolverRows& rows) {
  return compact_solver::EliminateRows(m, coef, result, rows);
}

HWY_NOINLINE bool SolveSmallKernel(const uint64_t* row_coef, const uint64_t* result_planes,
                                   size_t rows, uint64_t m, int r, uint8_t* out) {
  return compact_solver::SolveSmallRows(row_coef, result_planes, rows, m, r, out);
}

HWY_NOINLINE bool SolveBandKernel(const uint64_t* row_coef, const uint32_t* row_start,
                                  const uint64_t* result_planes, size_t rows, uint64_t m, int r,
                                  uint8_t* out) {
  return compact_solver::SolveBandRows(row_coef, row_start, result_planes, rows, m, r, out);
}

HWY_NOINLINE int SolveTinyKernel(const uint64_t* x, const uint32_t* fingerprint, size_t rows,
                                 uint64_t m, int num_seeds, uint32_t* value) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3  // compact_solver-inl.h, SolveTinyBlocks
  return compact_solver::SolveTinyBlocks(x, fingerprint, rows, m, num_seeds, value);
#else
  return compact_solver::SolveTinySeeds(x, fingerprint, rows, m, num_seeds, value);
#endif
}

HWY_NOINLINE int SolveDenseKernel(const uint64_t* x, const uint32_t* fingerprint, size_t rows,
                                  uint64_t m, int num_seeds, uint32_t* value) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3  // compact_solver-inl.h, SolveDenseCompress
  return compact_solver::SolveDenseCompress(x, fingerprint, rows, m, num_seeds, value);
#else
  return compact_solver::SolveDenseSeeds(x, fingerprint, rows, m, num_seeds, value);
#endif
}

HWY_NOINLINE void ResultPlanesKernel(const uint32_t* result, size_t rows, uint64_t* planes) {
  compact_solver::ResultPlanesRows(result, rows, planes);
}

HWY_NOINLINE void SolveColumnsKernel(const uint64_t* coef, const uint32_t* result, uint64_t m,
                                     int r, uint8_t* out) {
  compact_solver::SolveAllColumns(coef, result, m, r, out);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#if HWY_ONCE

namespace blockbloom {
namespace simd {

HWY_EXPORT(EliminateByColumnsKernel);
HWY_EXPORT(SolveColumnsKernel);
HWY_EXPORT(SolveSmallKernel);
HWY_EXPORT(ResultPlanesKernel);
HWY_EXPORT(SolveBandKernel);
HWY_EXPORT(SolveTinyKernel);
HWY_EXPORT(SolveDenseKernel);

EliminateByColumnsFn EliminateByColumnsForTarget(int64_t target) {
  if (!internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(EliminateByColumnsKernel)[internal::DispatchTableIndex(target)];
}

SolveColumnsFn SolveColumnsForTarget(int64_t target) {
  if (!internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(SolveColumnsKernel)[internal::DispatchTableIndex(target)];
}

SolveSmallFn SolveSmallForTarget(int64_t target) {
  if (!internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(SolveSmallKernel)[internal::DispatchTableIndex(target)];
}

ResultPlanesFn ResultPlanesForTarget(int64_t target) {
  if (!internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(ResultPlanesKernel)[internal::DispatchTableIndex(target)];
}

SolveBandFn SolveBandForTarget(int64_t target) {
  if (!internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(SolveBandKernel)[internal::DispatchTableIndex(target)];
}

SolveTinyFn SolveTinyForTarget(int64_t target) {
  if (!internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(SolveTinyKernel)[internal::DispatchTableIndex(target)];
}

SolveDenseFn SolveDenseForTarget(int64_t target) {
  if (!internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(SolveDenseKernel)[internal::DispatchTableIndex(target)];
}

namespace {

// The chosen target's kernels, resolved together on first use (each starts
// as a resolver that replaces them all; constant-initialised).
std::atomic<EliminateByColumnsFn> g_eliminate_by_columns;
std::atomic<SolveColumnsFn> g_solve_columns;
std::atomic<SolveSmallFn> g_solve_small;
std::atomic<ResultPlanesFn> g_result_planes;
std::atomic<SolveBandFn> g_solve_band;
std::atomic<SolveTinyFn> g_solve_tiny;
std::atomic<SolveDenseFn> g_solve_dense;

void Resolve() {
  const int64_t target = internal::KernelTarget(KernelFamily::kBuild);
  g_eliminate_by_columns.store(EliminateByColumnsForTarget(target), std::memory_order_relaxed);
  g_solve_columns.store(SolveColumnsForTarget(target), std::memory_order_relaxed);
  g_solve_small.store(SolveSmallForTarget(target), std::memory_order_relaxed);
  g_result_planes.store(ResultPlanesForTarget(target), std::memory_order_relaxed);
  g_solve_band.store(SolveBandForTarget(target), std::memory_order_relaxed);
  g_solve_tiny.store(SolveTinyForTarget(target), std::memory_order_relaxed);
  g_solve_dense.store(SolveDenseForTarget(target), std::memory_order_relaxed);
}

bool ResolveAndEliminateByColumns(uint64_t m, uint64_t* coef, uint32_t* result,
                                  const SolverRows& rows) {
  Resolve();
  return EliminateByColumns(m, coef, result, rows);
}

void ResolveAndSolveColumns(const uint64_t* coef, const uint32_t* result, uint64_t m, int r,
                            uint8_t* out) {
  Resolve();
  SolveColumns(coef, result, m, r, out);
}

bool ResolveAndSolveSmall(const uint64_t* row_coef, const uint64_t* result_planes, size_t rows,
                          uint64_t m, int r, uint8_t* out) {
  Resolve();
  return SolveSmall(row_coef, result_planes, rows, m, r, out);
}

void ResolveAndResultPlanes(const uint32_t* result, size_t rows, uint64_t* planes) {
  Resolve();
  ResultPlanes(result, rows, planes);
}

bool ResolveAndSolveBand(const uint64_t* row_coef, const uint32_t* row_start,
                         const uint64_t* result_planes, size_t rows, uint64_t m, int r,
                         uint8_t* out) {
  Resolve();
  return SolveBand(row_coef, row_start, result_planes, rows, m, r, out);
}

int ResolveAndSolveTiny(const uint64_t* x, const uint32_t* fingerprint, size_t rows, uint64_t m,
                        int num_seeds, uint32_t* value) {
  Resolve();
  return SolveTiny(x, fingerprint, rows, m, num_seeds, value);
}

int ResolveAndSolveDense(const uint64_t* x, const uint32_t* fingerprint, size_t rows, uint64_t m,
                         int num_seeds, uint32_t* value) {
  Resolve();
  return SolveDense(x, fingerprint, rows, m, num_seeds, value);
}

// ForceTargetForTesting re-resolves the pointers above.
[[maybe_unused]] const bool kRegistered = internal::RegisterRetargetHook(&Resolve);

}  // namespace

bool EliminateByColumns(uint64_t m, uint64_t* coef, uint32_t* result, const SolverRows& rows) {
  EliminateByColumnsFn fn = g_eliminate_by_columns.load(std::memory_order_relaxed);
  if (fn == nullptr) fn = &ResolveAndEliminateByColumns;
  return fn(m, coef, result, rows);
}

void SolveColumns(const uint64_t* coef, const uint32_t* result, uint64_t m, int r, uint8_t* out) {
  SolveColumnsFn fn = g_solve_columns.load(std::memory_order_relaxed);
  if (fn == nullptr) fn = &ResolveAndSolveColumns;
  fn(coef, result, m, r, out);
}

bool SolveSmall(const uint64_t* row_coef, const uint64_t* result_planes, size_t rows, uint64_t m,
                int r, uint8_t* out) {
  SolveSmallFn fn = g_solve_small.load(std::memory_order_relaxed);
  if (fn == nullptr) fn = &ResolveAndSolveSmall;
  return fn(row_coef, result_planes, rows, m, r, out);
}

void ResultPlanes(const uint32_t* result, size_t rows, uint64_t* planes) {
  ResultPlanesFn fn = g_result_planes.load(std::memory_order_relaxed);
  if (fn == nullptr) fn = &ResolveAndResultPlanes;
  fn(result, rows, planes);
}

bool SolveBand(const uint64_t* row_coef, const uint32_t* row_start, const uint64_t* result_planes,
               size_t rows, uint64_t m, int r, uint8_t* out) {
  SolveBandFn fn = g_solve_band.load(std::memory_order_relaxed);
  if (fn == nullptr) fn = &ResolveAndSolveBand;
  return fn(row_coef, row_start, result_planes, rows, m, r, out);
}

int SolveTiny(const uint64_t* x, const uint32_t* fingerprint, size_t rows, uint64_t m,
              int num_seeds, uint32_t* value) {
  SolveTinyFn fn = g_solve_tiny.load(std::memory_order_relaxed);
  if (fn == nullptr) fn = &ResolveAndSolveTiny;
  return fn(x, fingerprint, rows, m, num_seeds, value);
}

int SolveDense(const uint64_t* x, const uint32_t* fingerprint, size_t rows, uint64_t m,
               int num_seeds, uint32_t* value) {
  SolveDenseFn fn = g_solve_dense.load(std::memory_order_relaxed);
  if (fn == nullptr) fn = &ResolveAndSolveDense;
  return fn(x, fingerprint, rows, m, num_seeds, value);
}

}  // namespace simd
}  // namespace blockbloom
#endif  // HWY_ONCE
