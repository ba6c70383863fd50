// The compact filter's solver kernels (simd/compact_solver.h) on every
// compiled Highway target this CPU runs, the portable scalar one included:
// each must find the same systems solvable and write the same solution bytes,
// and every solution must satisfy every equation of its system. Random banded
// systems of the version-2 shape (rows of up to 64 coefficients from their
// start slot, right-hand sides of r bits), from empty to 5,000 rows, tight
// and spare, plus systems with every row at slot 0 (SolveSmall's). The
// builder's one-row-at-a-time elimination (compact/banding.h) must find the
// same systems solvable as the elimination by columns and, with
// SolveColumns, write the same bytes, in any order of rows.
#include "compact_solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compact/banding.h"
#include "compact/format.h"
#include "test_keys.h"

namespace blockbloom {
namespace {

using testing_keys::SplitMix64;

struct System {
  uint64_t m = 0;
  int r = 1;
  std::vector<uint64_t> start, coef, result;  // per row, sorted by start
};

// n rows in m slots, starts uniform in [0, m - 64] (0 when m <= 64), each
// row's first coefficient set (as the builder's are).
System RandomSystem(size_t n, uint64_t m, int r, uint64_t seed) {
  SplitMix64 rng(seed);
  System s;
  s.m = m;
  s.r = r;
  const uint64_t span = m > 64 ? m - 64 + 1 : 1;
  for (size_t i = 0; i < n; ++i) s.start.push_back(rng.Next() % span);
  std::sort(s.start.begin(), s.start.end());
  const uint64_t width = std::min<uint64_t>(m, 64);
  const uint64_t width_mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const uint64_t result_mask = r == 64 ? ~uint64_t{0} : (uint64_t{1} << r) - 1;
  for (size_t i = 0; i < n; ++i) {
    s.coef.push_back((rng.Next() | 1) & width_mask);
    s.result.push_back(rng.Next() & result_mask);
  }
  return s;
}

// Makes up to `copies` rows copies of others (start and coefficients): with
// the copied result for copies == 1 (a consistent dependent row), a random
// one for 2 (a coin toss).
void DuplicateRows(System* s, int copies, uint64_t seed) {
  const size_t n = s->coef.size();
  SplitMix64 rng(seed);
  for (int c = 0; c < copies && n >= 2; ++c) {
    const size_t from = rng.Next() % n, to = rng.Next() % n;
    if (from == to) continue;
    s->start[to] = s->start[from];
    s->coef[to] = s->coef[from];
    s->result[to] = copies == 1 ? s->result[from] : rng.Next() & ((uint64_t{1} << s->r) - 1);
  }
}

// Every equation holds: for each row and column b, the parity of the
// solution's bits at the row's coefficients is bit b of its result.
void ExpectSolves(const System& s, const std::string& out) {
  const auto bit = [&](int b, uint64_t slot) {
    const uint64_t at = static_cast<uint64_t>(b) * s.m + slot;
    return (static_cast<uint8_t>(out[at / 8]) >> (at % 8)) & 1;
  };
  for (size_t i = 0; i < s.coef.size(); ++i) {
    for (int b = 0; b < s.r; ++b) {
      int parity = 0;
      for (int j = 0; j < 64; ++j) {
        if ((s.coef[i] >> j) & 1) parity ^= bit(b, s.start[i] + j);
      }
      ASSERT_EQ(parity, static_cast<int>((s.result[i] >> b) & 1)) << "row " << i << " column " << b;
    }
  }
}

// Eliminates and solves `s` on `target` through EliminateByColumns; "" if
// unsolvable, else the solution bytes.
std::string SolveBanded(const System& s, int64_t target) {
  const size_t n = s.coef.size();
  const size_t pad = simd::kSolverRowPad;
  std::vector<uint32_t> first(s.m + 2, 0);
  for (uint64_t st : s.start) ++first[st + 1];
  for (uint64_t j = 0; j <= s.m; ++j) first[j + 1] += first[j];
  std::vector<uint64_t> join_coef(n + pad, 0), join_result(n + pad, 0);
  std::copy(s.coef.begin(), s.coef.end(), join_coef.begin());
  std::copy(s.result.begin(), s.result.end(), join_result.begin());
  std::vector<uint64_t> act_coef(n + pad, 0), act_result(n + pad, 0);
  const simd::SolverRows rows{first.data(), join_coef.data(), join_result.data(), act_coef.data(),
                              act_result.data()};
  std::vector<uint64_t> coef(s.m);
  std::vector<uint32_t> result(s.m);
  if (!simd::EliminateByColumnsForTarget(target)(s.m, coef.data(), result.data(), rows)) {
    return "";
  }
  std::string out((s.r * s.m + 7) / 8 + 8, '\0');
  simd::SolveColumnsForTarget(target)(coef.data(), result.data(), s.m, s.r,
                                      reinterpret_cast<uint8_t*>(&out[0]));
  return out;
}

// The bytes of a solution whose slot j holds value[j] (< 2^r): bit b of
// slot j at bit b * m + j, over ceil(r * m / 8) bytes and 8 more of zeros
// (the solvers' outputs are compared in buffers of that size).
template <typename T>
std::string SolutionBytes(const T* value, uint64_t m, int r) {
  std::string out((r * m + 7) / 8 + 8, '\0');
  for (uint64_t j = 0; j < m; ++j) {
    for (int b = 0; b < r; ++b) {
      if ((value[j] >> b) & 1) {
        const uint64_t at = static_cast<uint64_t>(b) * m + j;
        out[at / 8] = static_cast<char>(out[at / 8] | (1 << (at % 8)));
      }
    }
  }
  return out;
}

// The plain reference for systems of at most 64 slots, every row at slot 0:
// reduced row echelon form by slots in order, one row at a time, then every
// free slot 0 and each pivot slot its row's result. "" if some row reduces
// to 0 = nonzero.
std::string ReferenceSolve(const System& s) {
  std::vector<uint64_t> pivot_coef(64, 0), pivot_result(64, 0);
  uint64_t pivots = 0;
  for (size_t i = 0; i < s.coef.size(); ++i) {
    uint64_t c = s.coef[i], f = s.result[i];
    for (int j = 0; j < 64; ++j) {
      if (((c >> j) & 1) && ((pivots >> j) & 1)) {
        c ^= pivot_coef[j];
        f ^= pivot_result[j];
      }
    }
    if (c == 0) {
      if (f != 0) return "";
      continue;
    }
    const int q = __builtin_ctzll(c);
    for (int j = 0; j < 64; ++j) {  // clear slot q from the other pivot rows
      if (((pivots >> j) & 1) && ((pivot_coef[j] >> q) & 1)) {
        pivot_coef[j] ^= c;
        pivot_result[j] ^= f;
      }
    }
    pivot_coef[q] = c;
    pivot_result[q] = f;
    pivots |= uint64_t{1} << q;
  }
  // Fully reduced with free slots 0: slot j's value is its row's result,
  // less the free slots' terms (0); a free slot's pivot_result stays 0.
  return SolutionBytes(pivot_result.data(), s.m, s.r);
}

// simd::SolveSmall on `target`; "" if unsolvable. The bytes past the
// solution must stay untouched.
std::string SolveSmallDirect(const System& s, int64_t target) {
  uint32_t result[64] = {};
  for (size_t i = 0; i < s.result.size(); ++i) result[i] = static_cast<uint32_t>(s.result[i]);
  uint64_t planes[32];
  simd::ResultPlanesForTarget(target)(result, s.coef.size(), planes);
  std::string out((s.r * s.m + 7) / 8 + 8, '\0');
  if (!simd::SolveSmallForTarget(target)(s.coef.data(), planes, s.coef.size(), s.m, s.r,
                                         reinterpret_cast<uint8_t*>(&out[0]))) {
    return "";
  }
  return out;
}

// simd::SolveBand on `target`; "" if unsolvable. The bytes past the
// solution must stay untouched.
std::string SolveBandDirect(const System& s, int64_t target) {
  const size_t n = s.coef.size();
  uint32_t result[64] = {}, start[64] = {};
  for (size_t i = 0; i < n; ++i) {
    result[i] = static_cast<uint32_t>(s.result[i]);
    start[i] = static_cast<uint32_t>(s.start[i]);
  }
  uint64_t planes[32];
  simd::ResultPlanesForTarget(target)(result, n, planes);
  std::string out((s.r * s.m + 7) / 8 + 8, '\0');
  if (!simd::SolveBandForTarget(target)(s.coef.data(), start, planes, n, s.m, s.r,
                                        reinterpret_cast<uint8_t*>(&out[0]))) {
    return "";
  }
  return out;
}

// Eliminates `s` with compact::BandingAdd, rows in the order of `order`
// (indices into the system's rows), and solves it on `target`; "" if
// unsolvable.
std::string SolveByBanding(const System& s, const std::vector<size_t>& order, int64_t target) {
  std::vector<uint64_t> coef(s.m, 0);
  std::vector<uint32_t> result(s.m, 0);
  for (size_t i : order) {
    if (!compact::BandingAdd(s.start[i], s.coef[i], static_cast<uint32_t>(s.result[i]), coef.data(),
                             result.data())) {
      return "";
    }
  }
  std::string out((s.r * s.m + 7) / 8 + 8, '\0');
  simd::SolveColumnsForTarget(target)(coef.data(), result.data(), s.m, s.r,
                                      reinterpret_cast<uint8_t*>(&out[0]));
  return out;
}

TEST(CompactSolverBanding, MatchesEliminationByColumnsInAnyOrder) {
  int solved = 0, unsolvable = 0;
  uint64_t seed = 5000;
  const int64_t target = simd::SupportedTargets().front();
  for (size_t n : {0, 1, 2, 17, 60, 64, 65, 164, 1000, 5000}) {
    for (double spare : {1.0, 1.02, 1.05, 1.1, 1.3}) {
      const uint64_t m = std::max<uint64_t>(1, static_cast<uint64_t>(n * spare));
      for (int r : {1, 7, 16, 32}) {
        const System s = RandomSystem(n, m, r, ++seed);
        SCOPED_TRACE("n=" + std::to_string(n) + " m=" + std::to_string(m) +
                     " r=" + std::to_string(r));
        const std::string expected = SolveBanded(s, target);
        if (expected.empty()) {
          ++unsolvable;
        } else {
          ++solved;
        }
        std::vector<size_t> order(n);
        for (size_t i = 0; i < n; ++i) order[i] = i;  // by start
        ASSERT_EQ(SolveByBanding(s, order, target), expected);
        std::reverse(order.begin(), order.end());
        ASSERT_EQ(SolveByBanding(s, order, target), expected);
        SplitMix64 rng(seed);
        for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.Next() % i]);
        ASSERT_EQ(SolveByBanding(s, order, target), expected);
      }
    }
  }
  EXPECT_GT(solved, 50);
  EXPECT_GT(unsolvable, 20);
}

// Dependent rows (duplicates, and sums of other rows) are consistent when
// their right-hand sides agree, and make the system unsolvable otherwise.
TEST(CompactSolverBanding, DependentRows) {
  const uint64_t m = 200;
  std::vector<uint64_t> coef(m, 0);
  std::vector<uint32_t> result(m, 0);
  ASSERT_TRUE(compact::BandingAdd(10, 0b1011, 5, coef.data(), result.data()));
  ASSERT_TRUE(compact::BandingAdd(11, 0b101, 3, coef.data(), result.data()));
  ASSERT_TRUE(compact::BandingAdd(10, 0b1011, 5, coef.data(), result.data()));  // a duplicate
  // Row 1 + row 2 (slots 10, 11, 13 and 11, 13): slot 10 alone, result 6.
  ASSERT_TRUE(compact::BandingAdd(10, 0b1, 6, coef.data(), result.data()));
  std::vector<uint64_t> coef2 = coef;
  std::vector<uint32_t> result2 = result;
  EXPECT_FALSE(compact::BandingAdd(10, 0b1, 7, coef2.data(), result2.data()));
  EXPECT_FALSE(compact::BandingAdd(11, 0b101, 2, coef.data(), result.data()));
}

// The elimination by columns and SolveColumns on every target: the same
// bytes everywhere, "" (unsolvable) everywhere or a solution of every
// equation; counts the outcome once.
void SolvesIdenticallyOnEveryTarget(const System& s, int* solved, int* unsolvable) {
  std::string expected;
  bool first = true;
  for (int64_t target : simd::SupportedTargets()) {
    SCOPED_TRACE(simd::TargetName(target) + " n=" + std::to_string(s.coef.size()) +
                 " m=" + std::to_string(s.m) + " r=" + std::to_string(s.r));
    const std::string out = SolveBanded(s, target);
    if (first) {
      expected = out;
      first = false;
      ++*(out.empty() ? unsolvable : solved);
    }
    ASSERT_EQ(out, expected);
    if (!out.empty()) ExpectSolves(s, out);
  }
}

TEST(CompactSolverEveryTarget, BandedSystemsSolveIdentically) {
  int solved = 0, unsolvable = 0;
  uint64_t seed = 1;
  for (size_t n : {0, 1, 2, 17, 60, 64, 65, 164, 1000, 5000}) {
    for (double spare : {1.0, 1.05, 1.1, 1.3}) {
      const uint64_t m = std::max<uint64_t>(1, static_cast<uint64_t>(n * spare));
      for (int r : {1, 4, 7, 9, 16, 23, 32}) {
        const System s = RandomSystem(n, m, r, ++seed);
        SolvesIdenticallyOnEveryTarget(s, &solved, &unsolvable);
      }
    }
  }
  EXPECT_GT(solved, 100);  // both outcomes are exercised
  EXPECT_GT(unsolvable, 10);
}

TEST(CompactSolverEveryTarget, SmallSystemsSolveIdentically) {
  int solved = 0, unsolvable = 0;
  uint64_t seed = 1000;
  for (size_t n = 0; n <= simd::kSolverSmallRows; ++n) {
    for (uint64_t m : {n, n + 1, n + 3, uint64_t{40}, uint64_t{64}}) {
      if (m == 0 || m > 64 || m < n) continue;
      for (int r : {1, 8, 13, 32}) {
        const System s = RandomSystem(n, m, r, ++seed);
        SolvesIdenticallyOnEveryTarget(s, &solved, &unsolvable);
      }
    }
  }
  EXPECT_GT(solved, 50);
  EXPECT_GT(unsolvable, 5);
}

// SolveSmall against the plain reference over random systems of 0-64 rows
// in up to 64 slots, square and spare, with duplicated rows (dependent rows
// that are consistent or not), on every target: solvable exactly when the
// reference is, and then the same bytes.
TEST(CompactSolverEveryTarget, SolveSmallMatchesReference) {
  int solved = 0, unsolvable = 0, dependent_solved = 0;
  uint64_t seed = 7000;
  for (size_t n = 0; n <= 64; ++n) {
    for (uint64_t extra : {0, 1, 2, 5, 64}) {
      const uint64_t m = std::min<uint64_t>(64, n + extra);
      if (m == 0) continue;
      for (int r : {1, 2, 3, 8, 10, 17, 32}) {
        for (int copies : {0, 1, 2}) {  // rows duplicated over others
          System s = RandomSystem(n, m, r, ++seed);
          DuplicateRows(&s, copies, seed);
          const std::string expected = ReferenceSolve(s);
          if (expected.empty()) {
            ++unsolvable;
          } else {
            ++solved;
            if (copies == 1) ++dependent_solved;
            ExpectSolves(s, expected);
          }
          for (int64_t target : simd::SupportedTargets()) {
            SCOPED_TRACE(simd::TargetName(target) + " n=" + std::to_string(n) +
                         " m=" + std::to_string(m) + " r=" + std::to_string(r) +
                         " copies=" + std::to_string(copies));
            ASSERT_EQ(SolveSmallDirect(s, target), expected);
          }
        }
      }
    }
  }
  EXPECT_GT(solved, 500);
  EXPECT_GT(unsolvable, 300);
  EXPECT_GT(dependent_solved, 50);
}

// SolveBand against the elimination by columns (the plain reference where
// every row starts at slot 0) over random banded systems of 0-64 rows in
// up to 256 slots, tight and spare, with duplicated rows (dependent rows
// that are consistent or not), on every target: solvable exactly when the
// reference is, and then the same bytes.
TEST(CompactSolverEveryTarget, SolveBandMatchesReference) {
  int solved = 0, unsolvable = 0, dependent_solved = 0;
  uint64_t seed = 9000;
  for (size_t n : {0, 1, 2, 17, 40, 60, 63, 64}) {
    for (double spare : {1.0, 1.04, 1.1, 1.3, 2.0, 4.0}) {
      const uint64_t m = std::min<uint64_t>(
          simd::kSolverBandSlots, std::max<uint64_t>(1, static_cast<uint64_t>(n * spare)));
      for (int r : {1, 3, 9, 17, 32}) {
        for (int copies : {0, 1, 2}) {  // rows duplicated over others
          System s = RandomSystem(n, m, r, ++seed);
          DuplicateRows(&s, copies, seed);
          // Back in start order.
          std::vector<size_t> order(n);
          for (size_t i = 0; i < n; ++i) order[i] = i;
          std::stable_sort(order.begin(), order.end(),
                           [&](size_t x, size_t y) { return s.start[x] < s.start[y]; });
          System sorted = s;
          for (size_t i = 0; i < n; ++i) {
            sorted.start[i] = s.start[order[i]];
            sorted.coef[i] = s.coef[order[i]];
            sorted.result[i] = s.result[order[i]];
          }
          const std::string expected =
              m <= 64 ? ReferenceSolve(sorted) : SolveBanded(sorted, simd::SupportedTargets()[0]);
          if (expected.empty()) {
            ++unsolvable;
          } else {
            ++solved;
            if (copies == 1) ++dependent_solved;
            ExpectSolves(sorted, expected);
          }
          for (int64_t target : simd::SupportedTargets()) {
            SCOPED_TRACE(simd::TargetName(target) + " n=" + std::to_string(n) +
                         " m=" + std::to_string(m) + " r=" + std::to_string(r) +
                         " copies=" + std::to_string(copies));
            ASSERT_EQ(SolveBandDirect(sorted, target), expected);
          }
        }
      }
    }
  }
  EXPECT_GT(solved, 300);
  EXPECT_GT(unsolvable, 100);
  EXPECT_GT(dependent_solved, 50);
}

// A seed-search kernel (simd::SolveTiny or simd::SolveDense) for n =
// x.size() keys in m slots: the first solvable seed and its solution's
// bytes (as ReferenceSolve writes them), or (-1, ""); (-2, "") where the
// kernel does not run on its target.
template <typename Kernel>
std::pair<int, std::string> SolveSeedsDirect(Kernel kernel, const std::vector<uint64_t>& x,
                                             const std::vector<uint32_t>& fingerprint, uint64_t m,
                                             int r, int num_seeds) {
  uint32_t value[simd::kSolverDenseSlots];
  const int seed = kernel(x.data(), fingerprint.data(), x.size(), m, num_seeds, value);
  if (seed < 0) return {seed, ""};
  return {seed, SolutionBytes(value, m, r)};
}

// A seed-search kernel against the plain reference, seed by seed with the
// version-2 coefficients (compact::V2Coefficients), over random keys of
// 0-max_slots rows in up to max_slots slots, square and spare, with keys
// duplicated over others (rows equal under every seed: consistent with the
// same fingerprint, else not), on every target it runs on: the same first
// solvable seed (or none, with fewer seeds allowed) and the same bytes.
// Returns the number of targets checked.
template <typename KernelFor>
int ExpectSeedSearchMatchesReference(KernelFor kernel_for, size_t max_slots, uint64_t seed) {
  int solved = 0, unsolvable = 0, dependent_solved = 0, later_seed = 0;
  std::vector<int64_t> checked;
  for (size_t n = 0; n <= max_slots; ++n) {
    for (uint64_t m = std::max<uint64_t>(n, 1); m <= max_slots; ++m) {
      for (int r : {1, 2, 8, 13, 16, 17, 32}) {  // 16: SolveDense on AVX3 carries R <= 16
        for (int copies : {0, 1, 2}) {
          for (int num_seeds : {1, 3, 16}) {
            SplitMix64 rng(++seed);
            std::vector<uint64_t> x(n);
            std::vector<uint32_t> fingerprint(n);
            for (size_t i = 0; i < n; ++i) {
              x[i] = rng.Next();
              fingerprint[i] = static_cast<uint32_t>(rng.Next() & ((uint64_t{1} << r) - 1));
            }
            for (int c = 0; c < copies && n >= 2; ++c) {
              const size_t from = rng.Next() % n, to = rng.Next() % n;
              if (from == to) continue;
              x[to] = x[from];
              if (copies == 1) fingerprint[to] = fingerprint[from];
            }
            int expected_seed = -1;
            std::string expected;
            for (int s = 0; s < num_seeds && expected_seed < 0; ++s) {
              System sys;
              sys.m = m;
              sys.r = r;
              for (size_t i = 0; i < n; ++i) {
                sys.start.push_back(0);
                sys.coef.push_back(compact::V2Coefficients(x[i], static_cast<uint8_t>(s), m));
                sys.result.push_back(fingerprint[i]);
              }
              expected = ReferenceSolve(sys);
              if (!expected.empty()) {
                expected_seed = s;
                ExpectSolves(sys, expected);
              }
            }
            if (expected_seed < 0) {
              ++unsolvable;
            } else {
              ++solved;
              if (expected_seed > 0) ++later_seed;
              if (copies == 1) ++dependent_solved;
            }
            for (int64_t target : simd::SupportedTargets()) {
              SCOPED_TRACE(simd::TargetName(target) + " n=" + std::to_string(n) +
                           " m=" + std::to_string(m) + " r=" + std::to_string(r) + " copies=" +
                           std::to_string(copies) + " seeds=" + std::to_string(num_seeds));
              const auto got =
                  SolveSeedsDirect(kernel_for(target, r), x, fingerprint, m, r, num_seeds);
              if (got.first == -2) continue;  // not on this target
              if (std::find(checked.begin(), checked.end(), target) == checked.end()) {
                checked.push_back(target);
              }
              EXPECT_EQ(got.first, expected_seed);
              EXPECT_EQ(got.second, expected);
              if (got.first != expected_seed || got.second != expected) return -1;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(solved, 500);
  EXPECT_GT(unsolvable, 50);
  EXPECT_GT(dependent_solved, 100);
  EXPECT_GT(later_seed, 80);
  return static_cast<int>(checked.size());
}

TEST(CompactSolverEveryTarget, SolveTinyMatchesReference) {
  const int targets = ExpectSeedSearchMatchesReference(
      [](int64_t target, int) { return simd::SolveTinyForTarget(target); }, simd::kSolverTinySlots,
      11000);
  EXPECT_EQ(targets, static_cast<int>(simd::SupportedTargets().size()));
}

// Two keys with the same coefficients under every seed (one key added
// twice) whose fingerprints differ only from bit 8 up: no seed solves the
// system. A kernel that screens seeds by the right-hand sides' low 8 bits
// (SolveTinyBlocks) must check the rest.
TEST(CompactSolverEveryTarget, SolveTinyChecksFingerprintBitsAboveTheLowByte) {
  SplitMix64 rng(2611);
  int checked = 0;
  for (uint64_t m = 2; m <= simd::kSolverTinySlots; ++m) {
    for (size_t n = 2; n <= m; ++n) {
      for (int round = 0; round < 20; ++round) {
        std::vector<uint64_t> x(n);
        std::vector<uint32_t> fingerprint(n);
        for (size_t i = 0; i < n; ++i) {
          x[i] = rng.Next();
          fingerprint[i] = static_cast<uint32_t>(rng.Next());
        }
        const size_t a = rng.Next() % n, b = (a + 1 + rng.Next() % (n - 1)) % n;
        x[b] = x[a];
        fingerprint[b] = fingerprint[a] ^ (1u << (8 + rng.Next() % 24));
        for (int64_t target : simd::SupportedTargets()) {
          SCOPED_TRACE(simd::TargetName(target) + " n=" + std::to_string(n) +
                       " m=" + std::to_string(m));
          const auto got = SolveSeedsDirect(simd::SolveTinyForTarget(target), x, fingerprint, m, 32,
                                            simd::kSolverTinySeeds);
          EXPECT_EQ(got.first, -1);
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

// SolveDense runs where a vector holds sixteen 16-bit lanes (AVX2 and
// above here); elsewhere it says so (-2) and the builder uses DenseSystem.
TEST(CompactSolverEveryTarget, SolveDenseMatchesReference) {
  const int targets = ExpectSeedSearchMatchesReference(
      [](int64_t target, int) { return simd::SolveDenseForTarget(target); },
      simd::kSolverDenseSlots, 13000);
  EXPECT_GE(targets, 0);
  for (int64_t target : simd::SupportedTargets()) {
    if (simd::TargetName(target) == "AVX2" || simd::TargetName(target) == "AVX3") {
      EXPECT_GE(targets, 1) << "SolveDense runs on " << simd::TargetName(target);
    }
  }
}

// ResultPlanes (a 64 x 64 bit transpose) against bit by bit, on every
// target.
TEST(CompactSolverEveryTarget, ResultPlanesTranspose) {
  SplitMix64 rng(42);
  for (size_t rows : {0, 1, 17, 63, 64}) {
    uint32_t result[64] = {};
    for (size_t i = 0; i < rows; ++i) result[i] = static_cast<uint32_t>(rng.Next());
    for (int64_t target : simd::SupportedTargets()) {
      SCOPED_TRACE(simd::TargetName(target) + " rows=" + std::to_string(rows));
      uint64_t planes[32];
      simd::ResultPlanesForTarget(target)(result, rows, planes);
      for (int b = 0; b < 32; ++b) {
        for (size_t i = 0; i < 64; ++i) {
          const uint64_t want = i < rows ? (result[i] >> b) & 1 : 0;
          ASSERT_EQ((planes[b] >> i) & 1, want) << "plane " << b << " row " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace blockbloom
