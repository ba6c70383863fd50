#include "blockbloom/math.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "blocked_kernel.h"  // kBlockBits: the geometry the whole-filter model follows
#include "common/model_work.h"

namespace blockbloom {
namespace {
constexpr double kLn2 = 0.69314718055994530942;
thread_local uint64_t tls_model_terms = 0;  // internal::ModelTermsOnThisThread
}  // namespace

uint64_t internal::ModelTermsOnThisThread() { return tls_model_terms; }

double StandardBloomFpr(double bits_per_key, int num_probes) {
  // The same domain guards as BlockedBloomFpr: without them a negative or
  // NaN bits_per_key, or k < 1, gave NaN, infinities or negative "rates".
  if (!(bits_per_key > 0.0) || num_probes < 1) return 1.0;
  const double k = num_probes;
  return std::pow(1.0 - std::exp(-k / bits_per_key), k);
}

namespace {

// ln Poisson(lambda)(x) for a real x >= 0 (the pmf continued through Gamma).
double LogPoissonPmf(double lambda, double x) {
  // lgamma_r, not std::lgamma: lgamma also stores the sign in the global
  // `signgam`, a data race when two threads evaluate the model (ThreadSanitizer
  // reports it; tests/counting_bloom_tsan_test.cc). Same value; Gamma(x + 1)
  // is positive for x >= 0.
  int sign = 0;
  return x * std::log(lambda) - lambda - ::lgamma_r(x + 1.0, &sign);
}

// Where BlockedBloomFpr sums: keys per block in [lo, hi] (whole numbers),
// for a mean of lambda keys per block. Far enough into both tails that the
// Poisson mass left out is below 1e-15.
struct SumRange {
  double lo, hi;
};
SumRange PoissonSumRange(double lambda) {
  const double spread = 12.0 * std::sqrt(lambda) + 30.0;
  return {std::floor(std::max(0.0, lambda - spread)), std::floor(lambda + spread)};
}

// The model's domain guards, shared by BlockedBloomFpr and
// BlockedBloomFprTerms: true and *answer set when the arguments are answered
// without a sum; else false and *lambda (mean keys per block) set.
bool AnsweredByGuards(double bits_per_key, int num_probes, int block_bits, double* answer,
                      double* lambda) {
  // No bits, or nonsense: everything matches.
  if (!(bits_per_key > 0.0) || num_probes < 1 || block_bits < 1) {
    *answer = 1.0;
    return true;
  }
  if (std::isinf(bits_per_key)) {
    *answer = 0.0;
    return true;
  }
  *lambda = block_bits / bits_per_key;
  if (!(*lambda <= kMaxModelKeysPerBlock)) {  // every bit set, to 1e-300
    *answer = 1.0;
    return true;
  }
  return false;
}

}  // namespace

int BlockedBloomFprTerms(double bits_per_key, int num_probes, int block_bits) {
  double answer = 0.0, lambda = 0.0;
  if (AnsweredByGuards(bits_per_key, num_probes, block_bits, &answer, &lambda)) return 0;
  const SumRange range = PoissonSumRange(lambda);
  return range.hi - range.lo < kMaxModelTerms ? static_cast<int>(range.hi - range.lo) + 1
                                              : kMaxModelTerms;
}

double BlockedBloomFpr(double bits_per_key, int num_probes, int block_bits) {
  // Domain guards: this model is reachable from untrusted input (a .bbf
  // header or a LevelDB table may claim any key count), so every argument
  // gets an answer in bounded time.
  double guarded = 0.0, lambda = 0.0;  // lambda: mean keys per block
  if (AnsweredByGuards(bits_per_key, num_probes, block_bits, &guarded, &lambda)) return guarded;
  const double k = num_probes;
  const double log_keep = std::log1p(-1.0 / block_bits);  // ln(1 - 1/B)
  const auto fpr_at = [&](double keys) {                  // FPR of a block holding `keys` keys
    if (keys <= 0.0) return 0.0;                          // (also: B = 1 makes log_keep -inf)
    return std::pow(-std::expm1(k * keys * log_keep), k);
  };
  // Sum the Poisson(lambda) pmf over PoissonSumRange. The pmf is computed in
  // log space (lambda can be several hundred, where e^-lambda underflows).
  const auto [lo, hi] = PoissonSumRange(lambda);
  if (hi - lo < kMaxModelTerms) {
    tls_model_terms += static_cast<uint64_t>(hi - lo) + 1;
    double fpr = 0.0;
    for (double i = lo; i <= hi; i += 1.0) {
      fpr += std::exp(LogPoissonPmf(lambda, i)) * fpr_at(i);
    }
    return std::min(1.0, fpr);  // the pmf's rounding can sum past 1
  }
  // More terms than kMaxModelTerms (lambda above ~27,000 keys per block: only
  // absurdly overfull filters get here). The pmf is then smooth on the scale
  // of one key (its standard deviation is sqrt(lambda) > 160), so kMaxModelTerms
  // evenly spaced nodes, with weights normalised to sum to 1, give the same
  // mixture to well under 1e-9 relative: bounded work for any lambda.
  tls_model_terms += kMaxModelTerms;
  const double step = (hi - lo) / (kMaxModelTerms - 1);
  double weighted = 0.0, total = 0.0;
  for (int j = 0; j < kMaxModelTerms; ++j) {
    const double x = lo + j * step;
    const double w = std::exp(LogPoissonPmf(lambda, x));
    weighted += w * fpr_at(x);
    total += w;
  }
  return total > 0.0 ? std::min(1.0, weighted / total) : 1.0;
}

// ---- The whole-filter model (internal::BlockedFilterFpr) ----
//
// BlockedBloomFpr is the mixture for an endless row of full blocks: every
// block's load Poisson, and a block holding i keys read as
// (1 - (1 - 1/B)^(k i))^k, as if its set bits were independent. A small
// filter breaks all three: its loads are binomial (n keys over a few
// blocks), its last block is usually shorter than 512 bits (a filter is
// exactly as long as bits-per-key asks), and in a short block the number of
// set bits varies enough that E[fill^k] is well above (E fill)^k at the k a
// high bits-per-key takes. At 50 keys and 32 bits/key (three blocks and a
// 64-bit one) the mixture gives 1/7 of the measured FPR, at 5 keys and 16
// bits/key 1.4x it. So a filter of up to kExactModelBlocks blocks is
// modelled exactly: for each block size b (512, and the short last block),
// its load l ~ Binomial(n, b / total_bits), and given l, the chance that k
// uniform probes all find set bits, E[(X / b)^k] for X the set bits after
// k l probes, from the distribution of X carried probe by probe (the
// occupancy chain: a probe sets a new bit w.p. (b - X) / b). Larger
// filters keep the mixture for their full blocks (binomial and Poisson
// agree there; the full blocks' own error is ~5-8% at high bits/key) and
// add their short block exactly. A query lands in a block in proportion to
// its size, as keys do.
//
// Work. The chain costs two multiply-adds per probe and state ("cell");
// kCellsPerTerm cells count as one term of ModelTermsOnThisThread (a term,
// an exp, log, lgamma, pow and expm1, takes about as long: 1-1.5 ns a cell
// and 50-100 ns a term on a Zen 3 core), and so does each load step (a log
// and an exp); the table of (x / b)^k costs half a term a state. The chains
// of one filter stop at kExactModelCells cells in all (kMaxModelTerms
// terms); where the short block's does not finish, the mixture answers for
// the whole filter, and where the full blocks' does not, for them (a few
// hundred keys at high bits per key: ~10% off): at most 2 kMaxModelTerms
// terms for any claimed key count.
namespace {

constexpr uint64_t kExactModelBlocks = 64;
constexpr uint64_t kCellsPerTerm = 64;
constexpr uint64_t kExactModelCells = kCellsPerTerm * kMaxModelTerms;
constexpr int kExactModelMaxProbes = 64;
// States of the chain below this probability are dropped: each changes
// E[(X/b)^k] by less than 1e-40 (an absolute error far below any FPR a
// filter is sized for; the answers agree with an untrimmed long-double
// sum to ~1e-12 relative).
constexpr double kNegligibleState = 1e-40;

// Loads of a block size: l in [lo, hi] carries all but a negligible share
// of Binomial(n, share) (8 standard deviations and 12 keys beyond, where
// the tail's weight times the rise of E[fill^k] is far below 1e-9 of the
// sum).
struct LoadRange {
  uint64_t lo, hi;
};
LoadRange BinomialRange(uint64_t n, double share) {
  const double mean = static_cast<double>(n) * share;
  const double spread = 8.0 * std::sqrt(mean * (1.0 - share)) + 12.0;
  const double lo = std::max(0.0, std::floor(mean - spread));
  // (Clamped below 2^63: a double of 2^64 has no uint64_t.)
  const double hi = std::min({static_cast<double>(n), std::ceil(mean + spread), 0x1p63});
  return {static_cast<uint64_t>(std::min(lo, hi)), static_cast<uint64_t>(hi)};
}

// The FPR of a query in a block of `bits` bits whose load is
// Binomial(n, share) (share 1: exactly n), or -1 if the chain would take
// more than *cells_left cells (it stops short of them). The cells spent
// either way are taken off *cells_left.
double ExactBlockFpr(uint64_t n, double share, uint32_t bits, int k, uint64_t* cells_left) {
  const LoadRange range = share >= 1.0 ? LoadRange{n, n} : BinomialRange(n, share);
  // Every load step costs kCellsPerTerm (its log and exp) and a cell per
  // probe at least; the table below bits + 1 pows (kCellsPerTerm / 2 each).
  const uint64_t per_step = static_cast<uint64_t>(k) + kCellsPerTerm;
  const uint64_t table = (bits + 1) * (kCellsPerTerm / 2);
  if (table > *cells_left || range.hi >= (*cells_left - table) / per_step) return -1.0;
  // p[x]: x bits set (two buffers, one probe apart); a probe keeps a state
  // x w.p. stay[x] = x / bits and moves x - 1 to x w.p. move[x] =
  // (bits - x + 1) / bits, so each new state is two multiply-adds of old
  // ones (no division, and no dependence between states: it vectorises).
  constexpr uint32_t kMaxStates = blocked::kBlockBits + 1;
  double buffer[2][kMaxStates + 1] = {};
  double stay[kMaxStates], move[kMaxStates], power[kMaxStates];  // power[x]: (x / bits)^k
  for (uint32_t x = 0; x <= bits; ++x) {
    stay[x] = static_cast<double>(x) / bits;
    move[x] = static_cast<double>(bits + 1 - x) / bits;
    power[x] = std::pow(stay[x], k);
  }
  double* p = buffer[0];
  double* next = buffer[1];
  p[0] = 1.0;
  uint32_t lo = 0, hi = 0;  // the states carried; p is 0 outside them
  // Counts the cells of a step before it is taken, and refuses one past
  // *cells_left: the work counted never exceeds it.
  uint64_t cells = table;
  const auto spend = [&](uint64_t step) {
    if (cells + step > *cells_left) {
      *cells_left -= cells;
      return false;
    }
    cells += step;
    return true;
  };
  double fpr = 0.0;
  // Unused (and not finite) for share 1.
  const double log_odds = share < 1.0 ? std::log(share) - std::log1p(-share) : 0.0;
  double log_weight = share < 1.0 ? static_cast<double>(n) * std::log1p(-share) : 0.0;  // l = 0
  for (uint64_t l = 0;; ++l) {
    if (!spend(kCellsPerTerm)) return -1.0;
    if (l >= range.lo) {
      if (!spend(hi - lo + 1)) return -1.0;
      double fill_k = 0.0;  // E[(X / bits)^k] with l keys
      for (uint32_t x = lo; x <= hi; ++x) fill_k += p[x] * power[x];
      fpr += (share >= 1.0 ? 1.0 : std::exp(log_weight)) * fill_k;
    }
    if (l == range.hi) break;
    // Every bit set: so for every load from here on. One load (share 1)
    // is then answered.
    if (share >= 1.0 && lo == bits) {
      fpr = 1.0;
      break;
    }
    // ln Binomial(n, share)(l + 1) from ln ...(l): exact steps from l = 0,
    // where lgamma(n) would lose the pmf's precision for large n.
    if (share < 1.0) {
      log_weight += std::log(static_cast<double>(n - l) / static_cast<double>(l + 1)) + log_odds;
    }
    for (int probe = 0; probe < k; ++probe) {
      const uint32_t top = std::min(bits, hi + 1);
      if (!spend(top - lo + 1)) return -1.0;
      p[hi + 1] = 0.0;  // the buffers are stale outside the carried states
      next[lo] = p[lo] * stay[lo];
      for (uint32_t x = lo + 1; x <= top; ++x) next[x] = p[x] * stay[x] + p[x - 1] * move[x];
      std::swap(p, next);
      hi = top;
      while (lo < hi && p[lo] < kNegligibleState) p[lo++] = 0.0;
      while (hi > lo && p[hi] < kNegligibleState) p[hi--] = 0.0;
    }
  }
  *cells_left -= cells;
  return std::min(1.0, fpr);
}

}  // namespace

double internal::BlockedFilterFpr(uint64_t num_keys, uint64_t total_bits, int num_probes) {
  if (num_keys == 0) return 0.0;
  if (total_bits == 0 || num_probes < 1) return 1.0;
  const double total = static_cast<double>(total_bits);
  const uint64_t full_blocks = total_bits / blocked::kBlockBits;
  const uint32_t short_bits = static_cast<uint32_t>(total_bits % blocked::kBlockBits);
  const double bits_per_key = total / static_cast<double>(num_keys);
  if (num_probes > kExactModelMaxProbes) {
    return BlockedBloomFpr(bits_per_key, num_probes, blocked::kBlockBits);
  }
  uint64_t cells_left = kExactModelCells;
  // The short block first: its error is the largest, and its chain is the
  // shorter one. Where it does not finish, the mixture answers for the whole
  // filter (as for a filter of whole blocks).
  double short_fpr = 0.0, full_fpr = 0.0;
  const double short_share = short_bits / total;
  if (short_bits != 0) {
    short_fpr = ExactBlockFpr(num_keys, short_share, short_bits, num_probes, &cells_left);
  }
  // The full blocks exactly only in a small filter (see above).
  const bool small = full_blocks + (short_bits != 0 ? 1 : 0) <= kExactModelBlocks;
  if (short_fpr >= 0.0 && full_blocks > 0) {
    full_fpr = small ? ExactBlockFpr(num_keys, blocked::kBlockBits / total, blocked::kBlockBits,
                                     num_probes, &cells_left)
                     : -1.0;
  }
  tls_model_terms += (kExactModelCells - cells_left + kCellsPerTerm - 1) / kCellsPerTerm;
  if (short_fpr < 0.0) return BlockedBloomFpr(bits_per_key, num_probes, blocked::kBlockBits);
  if (full_fpr < 0.0) full_fpr = BlockedBloomFpr(bits_per_key, num_probes, blocked::kBlockBits);
  return std::min(1.0, short_share * short_fpr + (1.0 - short_share) * full_fpr);
}

int OptimalBlockedProbes(double bits_per_key, int max_probes, int block_bits) {
  // No k above B ln 2 can win: a block holding i >= 1 keys contributes
  // (1 - q^(k i))^k, q = 1 - 1/B, which falls in k up to q^(k i) = 1/2, i.e.
  // k = ln 2 / (i (-ln q)) < B ln 2, and rises beyond; so past B ln 2 every
  // term, and the mixture, only rises (ties go to the smaller k anyway).
  // Searching no further bounds the work (max_probes = INT_MAX meant 2^31
  // model sums, then a signed overflow of k) and changes no answer.
  const double k_cap = std::ceil(std::max(1, block_bits) * kLn2);
  const int last_k = k_cap < max_probes ? static_cast<int>(k_cap) : max_probes;
  // The model falls to one minimum in k and rises after it, so a run of k
  // where it does not fall ends the search: B ln 2 evaluations were 13 s at
  // B = 2^17 and days at 2^31. (Checked against the search to B ln 2 over a
  // grid of bits-per-key and block sizes: model_bounds_test,
  // OptimalProbesStopsOnceTheModelRises. The run is four k long, so rounding
  // noise at a flat minimum cannot end it early; a model flat at 1, as at
  // bits-per-key near 0, ends it too.) An FPR of 0 cannot be beaten either.
  constexpr int kRisesToStop = 4;
  int best_k = 1;
  double best = BlockedBloomFpr(bits_per_key, 1, block_bits);
  double previous = best;
  int rises = 0;
  for (int k = 2; k <= last_k && best > 0 && rises < kRisesToStop; ++k) {
    const double fpr = BlockedBloomFpr(bits_per_key, k, block_bits);
    if (fpr < best) {
      best = fpr;
      best_k = k;
    }
    rises = fpr >= previous ? rises + 1 : 0;
    previous = fpr;
  }
  return best_k;
}

// ---- Classic relations (see math.h for the formulas and their source) ----

namespace {

// Largest double below 2^64 that converts to uint64_t exactly.
constexpr double kMaxU64AsDouble = 18446744073709549568.0;

absl::Status CheckKeys(double n, bool allow_zero) {
  if (!std::isfinite(n) || n < 0 || (!allow_zero && n == 0)) {
    return absl::InvalidArgumentError(absl::StrCat("number of keys must be finite and ",
                                                   allow_zero ? ">= 0" : "> 0", ", got ", n));
  }
  return absl::OkStatus();
}

absl::Status CheckBits(double m) {
  if (!std::isfinite(m) || m <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("number of bits must be finite and > 0, got ", m));
  }
  return absl::OkStatus();
}

absl::Status CheckProbes(int k) {
  if (k < 1) {
    return absl::InvalidArgumentError(absl::StrCat("number of probes must be >= 1, got ", k));
  }
  return absl::OkStatus();
}

absl::Status CheckFpr(double p) {
  if (!(p > 0.0 && p < 1.0)) {  // also rejects NaN
    return absl::InvalidArgumentError(
        absl::StrCat("false-positive rate must be in (0, 1), got ", p));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ToU64(double x, const char* what) {
  if (!(x <= kMaxU64AsDouble)) {
    return absl::OutOfRangeError(absl::StrCat(what, " does not fit in 64 bits: ", x));
  }
  return static_cast<uint64_t>(x);
}

}  // namespace

absl::StatusOr<uint64_t> StandardBitsForFpr(double num_keys, double fpr) {
  if (absl::Status s = CheckKeys(num_keys, /*allow_zero=*/false); !s.ok()) return s;
  if (absl::Status s = CheckFpr(fpr); !s.ok()) return s;
  // At least one bit: for n > 0 and p < 1 the exact answer is positive, even
  // when the product underflows (n denormal, p within 1e-12 of 1).
  return ToU64(std::max(1.0, std::ceil(-num_keys * std::log(fpr) / (kLn2 * kLn2))),
               "number of bits");
}

namespace {

// (1), the closed form.
double TextbookStandardFpr(double k, double m, double n) {
  return std::pow(-std::expm1(-k * n / m), k);
}

// E[F^k] for independent uniform probes, F the fraction of set bits after
// N = k n bit insertions into m bits (effect (a) of math.h). REQUIRES:
// m >= 1, k >= 1, n >= 0.
double ExactFillFpr(double k, double m, double n) {
  const double insertions = k * n;
  if (insertions == 0) return 0.0;
  // m <= kExactFillWork too: a tiny n must not let a huge m through.
  if (m == std::floor(m) && m <= kExactFillWork && insertions >= 1 &&
      m * insertions <= kExactFillWork) {
    // P[x] = probability that x bits are set; one bit insertion moves x to
    // x + 1 with probability (m - x) / m. At most kExactFillWork steps.
    const int bits = static_cast<int>(m);
    const int steps = static_cast<int>(insertions);
    std::vector<double> prob(static_cast<size_t>(bits) + 1, 0.0);
    prob[0] = 1.0;
    for (int t = 1; t <= steps; ++t) {
      for (int x = std::min(t, bits); x >= 1; --x) {
        prob[x] = prob[x] * (x / m) + prob[x - 1] * ((m - x + 1) / m);
      }
      prob[0] = 0.0;
    }
    double fpr = 0.0;
    for (int x = 1; x <= bits; ++x) fpr += prob[x] * std::pow(x / m, k);
    return std::min(1.0, fpr);
  }
  // Second order in the fill's spread, with its exact mean and variance
  // (the occupancy of m bins after N balls).
  if (m < 2) return 1.0;  // one bit, set by the first insertion
  const double q1 = std::exp(insertions * std::log1p(-1.0 / m));  // a bit clear
  const double q2 = std::exp(insertions * std::log1p(-2.0 / m));  // two bits clear
  const double f = 1.0 - q1;
  if (!(f > 0.0)) return 0.0;
  const double var_fraction =
      std::max(0.0, (m * (m - 1) * q2 + m * q1 - m * m * q1 * q1) / (m * m));
  return std::min(1.0, std::pow(f, k) * (1.0 + 0.5 * k * (k - 1) * var_fraction / (f * f)));
}

int EulerPhi(int b) {
  int phi = b;
  for (int d = 2, r = b; r > 1; ++d) {  // b <= kMaxModelProbes: a few steps
    if (r % d == 0) {
      phi -= phi / d;
      while (r % d == 0) r /= d;
    }
  }
  return phi;
}

// (1 - f^j) / ln(1/f): j as f -> 1. REQUIRES 0 < f <= 1, j >= 0.
double ClearOverLog(double f, double j) {
  const double log_f = std::log(f);
  return log_f == 0.0 ? j : std::expm1(j * log_f) / log_f;
}

// Effect (b) of math.h, times m: the query-side probe collapse, f = mean fill.
double CollapseTimesBits(int k, double f, HashScheme scheme) {
  if (k < 2 || !(f > 0.0)) return 0.0;
  if (scheme == HashScheme::kEnhancedDoubleHashing) {
    if (k < 3)
      scheme = HashScheme::kDoubleHashing;  // T_0 = T_1 = 0: as plain
    else
      return std::max(0.0, 2 * std::pow(f, k - 2) * (0.5 * ClearOverLog(f, 2) - f * f));
  }
  double sum = 0.0;
  for (int b = 1; b < k; ++b) {
    const double rest = k - b;
    sum += 2 * EulerPhi(b) * std::pow(f, b) *
           (ClearOverLog(f, rest) / (rest * b) - std::pow(f, rest) / b);
  }
  return std::max(0.0, sum);
}

// G_f(M) of math.h, effect (c) for the partitioned filter: over the plane of
// (alpha, beta) (the key's offset and stride minus the query's, in slice
// positions), the part of prod_j (f + (1 - f) a_j), a_j = max(0, 1 -
// |alpha + j beta|), j < M, of degree >= 3 in the a_j. Three or more a_j > 0
// need |beta| < 1, and the integrand is even in beta (j -> M - 1 - j), so
// beta runs over (0, 1) in two pieces with their own midpoint rules: (0,
// 2/(M-1)), where all M probes can agree (a narrow peak for large M), and the
// rest; alpha over where some a_j > 0. Against 128^2-node rules: within 0.3%
// for M <= 20; at M = 64, 7% low at f = 0 and 1% at f = 0.5.
constexpr int kPeakNodes = 64, kTailNodes = 24, kAlphaNodes = 48;
double HigherOrderAgreement(int members, double f) {
  if (members < 3) return 0.0;
  const double g = 1.0 - f;
  const double f_m = std::pow(f, members), f_m1 = std::pow(f, members - 1),
               f_m2 = std::pow(f, members - 2);
  const double edge = std::min(1.0, 2.0 / (members - 1));
  const struct {
    double lo, hi;
    int nodes;
  } pieces[2] = {{0.0, edge, kPeakNodes}, {edge, 1.0, kTailNodes}};
  double total = 0.0;
  for (const auto& piece : pieces) {
    if (!(piece.hi > piece.lo)) continue;
    const double d_beta = (piece.hi - piece.lo) / piece.nodes;
    for (int jb = 0; jb < piece.nodes; ++jb) {
      const double beta = piece.lo + (jb + 0.5) * d_beta;
      const double lo = -1.0 - (members - 1) * beta;
      const double d_alpha = (1.0 - lo) / kAlphaNodes;
      double row = 0.0;
      for (int ja = 0; ja < kAlphaNodes; ++ja) {
        const double alpha = lo + (ja + 0.5) * d_alpha;
        double prod = 1.0, e1 = 0.0, sum_sq = 0.0;
        for (int j = 0; j < members; ++j) {
          const double a = std::max(0.0, 1.0 - std::abs(alpha + j * beta));
          prod *= f + g * a;
          e1 += a;
          sum_sq += a * a;
        }
        const double e2 = 0.5 * (e1 * e1 - sum_sq);
        row += prod - f_m - f_m1 * g * e1 - f_m2 * g * g * e2;
      }
      total += row * d_alpha * d_beta;
    }
  }
  return std::max(0.0, 2.0 * total);
}

// The coincidence excess (math.h, (c)): n keys, probes over ranges of s bits
// (a slice, or the standard filter's m), f the fill the other n - 1 keys
// leave.
// Returns 0 without the full sum when 4 times its b = 1 term (all k probes
// in one class, one G evaluation) is below `negligible`: the b >= 2 terms
// add less (computed, grid 32: the full sum is at most 1.17 times the b = 1
// term for k <= 64 at f <= 0.7, 1.71 at f = 0.9).
double Coincidence(int k, double s, double n, double f, double negligible) {
  const double scale = n / (s * s);
  // scale underflows to 0 for near-empty filters (n / s^2 below ~1e-308),
  // where the excess is 0 too; "!(>=)" also takes a negligible of 0.
  if (!(scale > 0)) return 0.0;
  const double first = scale * HigherOrderAgreement(k, f);
  if (!(4.0 * first >= negligible)) return 0.0;
  double cache[kMaxModelProbes + 1];
  for (double& c : cache) c = -1.0;
  cache[k] = first / scale;
  double total = 0.0;
  for (int b = 1; 2 * b < k; ++b) {  // else no class has 3 members
    const double weight = static_cast<double>(EulerPhi(b)) / b;
    for (int r = 0; r < b; ++r) {
      const int members = (k - r + b - 1) / b;  // i in [0, k), i = r mod b
      if (members < 3) continue;
      if (cache[members] < 0) cache[members] = HigherOrderAgreement(members, f);
      total += weight * std::pow(f, k - members) * cache[members];
    }
  }
  return scale * total;
}

}  // namespace

absl::StatusOr<double> StandardFprFor(int num_probes, double num_bits, double num_keys,
                                      HashScheme scheme) {
  if (absl::Status s = CheckProbes(num_probes); !s.ok()) return s;
  if (absl::Status s = CheckBits(num_bits); !s.ok()) return s;
  if (absl::Status s = CheckKeys(num_keys, /*allow_zero=*/true); !s.ok()) return s;
  const double k = num_probes, m = num_bits, n = num_keys;
  const double textbook = TextbookStandardFpr(k, m, n);
  if (num_probes > kMaxModelProbes || n == 0 || m < 1 || textbook >= 1.0) return textbook;
  const double f = -std::expm1(k * n * std::log1p(-1.0 / std::max(m, 2.0)));  // mean fill
  // Plain double hashing: the terms times 4/3, for what they leave out
  // (math.h; measured 1.15-1.26 at k = 9, 10, below 1 at k = 6, 7).
  const double weight = scheme == HashScheme::kDoubleHashing ? 4.0 / 3.0 : 1.0;
  const double f_others =
      -std::expm1(k * std::max(0.0, n - 1) * std::log1p(-1.0 / std::max(m, 2.0)));
  const double collapse = CollapseTimesBits(num_probes, f, scheme) / m;
  double coincidence = Coincidence(num_probes, m, n, f_others, kModelCorrectionFloor * textbook);
  if (scheme == HashScheme::kDoubleHashing && num_probes >= 2) {
    // Its shifted alignments (key probe i + t on query probe i) make the
    // first-and-last agreement bound, n / ((k - 1) m^2), the safer estimate
    // at the smallest m (measured: 1.038 p at n = 2, m = 68 without it).
    coincidence = std::max(coincidence, n / ((k - 1) * m * m));
  }
  const double correlated = weight * (collapse + coincidence);
  const double model = std::min(1.0, ExactFillFpr(k, m, n) + correlated);
  if (textbook > 0.0 && std::abs(model / textbook - 1.0) < kModelCorrectionFloor) return textbook;
  return model;
}

absl::StatusOr<int> StandardOptimalProbes(double num_bits, double num_keys) {
  if (absl::Status s = CheckBits(num_bits); !s.ok()) return s;
  if (absl::Status s = CheckKeys(num_keys, /*allow_zero=*/false); !s.ok()) return s;
  const double ideal = num_bits / num_keys * kLn2;
  // Beyond a few hundred probes every candidate's p underflows to 0; the
  // answer is still the rounded ideal, capped to stay an int.
  if (ideal >= 1e6) return 1000000;
  const int lo = std::max(1, static_cast<int>(std::floor(ideal)));
  const int hi = std::max(1, static_cast<int>(std::ceil(ideal)));
  // Formula (1) itself, not the small-m model: this is the closed form's k
  // (the sizing searches its neighbours under the model).
  const double p_lo = TextbookStandardFpr(lo, num_bits, num_keys);
  const double p_hi = TextbookStandardFpr(hi, num_bits, num_keys);
  return p_hi < p_lo ? hi : lo;
}

absl::StatusOr<uint64_t> StandardCapacity(double num_bits, int num_probes, double fpr) {
  if (absl::Status s = CheckBits(num_bits); !s.ok()) return s;
  if (absl::Status s = CheckProbes(num_probes); !s.ok()) return s;
  if (absl::Status s = CheckFpr(fpr); !s.ok()) return s;
  const double k = num_probes;
  // 1 - p^(1/k), computed without cancellation for p^(1/k) near 1.
  const double clear = -std::expm1(std::log(fpr) / k);
  return ToU64(std::floor(-(num_bits / k) * std::log(clear)), "number of keys");
}

absl::StatusOr<double> PartitionedFprFor(int num_probes, double num_bits, double num_keys) {
  if (absl::Status s = CheckProbes(num_probes); !s.ok()) return s;
  if (absl::Status s = CheckBits(num_bits); !s.ok()) return s;
  if (absl::Status s = CheckKeys(num_keys, /*allow_zero=*/true); !s.ok()) return s;
  if (num_bits < num_probes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a partitioned filter needs at least one bit per slice: m=", num_bits,
                     " < k=", num_probes));
  }
  // No keys set no bit. (Tested first: at one bit per slice, m = k, the
  // log below is -inf and 0 * -inf would be NaN.)
  if (num_keys == 0) return 0.0;
  const double k = num_probes;
  const double slice_set = -std::expm1(num_keys * std::log1p(-k / num_bits));
  const double textbook = std::pow(slice_set, k);
  if (num_probes > kMaxModelProbes || textbook >= 1.0) return textbook;
  const double slice = num_bits / k;
  const double model = std::min(
      1.0,
      textbook + Coincidence(num_probes, slice, num_keys,
                             -std::expm1(std::max(0.0, num_keys - 1) * std::log1p(-1.0 / slice)),
                             kModelCorrectionFloor * textbook));
  if (textbook > 0.0 && model / textbook - 1.0 < kModelCorrectionFloor) return textbook;
  return model;
}

namespace {
// BlockedBitsPerKeyForFpr without its cache. REQUIRES: CheckFpr(fpr) is OK.
absl::StatusOr<double> BlockedBitsPerKeyForFprUncached(double fpr) {
  // Same range as ClampBitsPerKey (blocked_bloom.h); restated here so the
  // math stays free of the filter's header.
  constexpr double kLo = 1.0, kHi = 64.0;
  const auto best = [](double c) {
    return BlockedBloomFpr(c, OptimalBlockedProbes(c, 16, 512), 512);
  };
  if (best(kLo) <= fpr) return kLo;
  if (best(kHi) > fpr) {
    return absl::OutOfRangeError(
        absl::StrCat("a blocked filter cannot reach FPR ", fpr, " with at most 64 bits per key"));
  }
  // The best FPR falls monotonically with bits per key: bisect.
  double lo = kLo, hi = kHi;
  while (hi - lo > 1e-6) {
    const double mid = 0.5 * (lo + hi);
    (best(mid) <= fpr ? hi : lo) = mid;
  }
  return hi;
}
}  // namespace

absl::StatusOr<double> BlockedBitsPerKeyForFpr(double fpr) {
  if (absl::Status s = CheckFpr(fpr); !s.ok()) return s;
  // The bisection evaluates the model a few hundred times (~3 ms): answers
  // are kept per fpr (up to 4096 of them), as a program sizing many filters
  // for one target asks the same question each time. Racing threads store
  // the same answer.
  static std::mutex mu;
  static auto* cache = new std::unordered_map<double, double>();  // never freed
  {
    std::lock_guard<std::mutex> lock(mu);
    const auto it = cache->find(fpr);
    if (it != cache->end()) return it->second;
  }
  absl::StatusOr<double> answer = BlockedBitsPerKeyForFprUncached(fpr);
  if (answer.ok()) {
    std::lock_guard<std::mutex> lock(mu);
    if (cache->size() < 4096) cache->emplace(fpr, *answer);
  }
  return answer;
}

}  // namespace blockbloom
