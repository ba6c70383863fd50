#include "blockbloom/math.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace blockbloom {
namespace {
constexpr double kLn2 = 0.69314718055994530942;
}  // namespace

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

int OptimalBlockedProbes(double bits_per_key, int max_probes, int block_bits) {
  // No k above B ln 2 can win: a block holding i >= 1 keys contributes
  // (1 - q^(k i))^k, q = 1 - 1/B, which falls in k up to q^(k i) = 1/2, i.e.
  // k = ln 2 / (i (-ln q)) < B ln 2, and rises beyond; so past B ln 2 every
  // term, and the mixture, only rises (ties go to the smaller k anyway).
  // Searching no further bounds the work (max_probes = INT_MAX meant 2^31
  // model sums, then a signed overflow of k) and changes no answer.
  const double k_cap = std::ceil(std::max(1, block_bits) * kLn2);
  const int last_k = k_cap < max_probes ? static_cast<int>(k_cap) : max_probes;
  int best_k = 1;
  double best = BlockedBloomFpr(bits_per_key, 1, block_bits);
  for (int k = 2; k <= last_k; ++k) {
    const double fpr = BlockedBloomFpr(bits_per_key, k, block_bits);
    if (fpr < best) {
      best = fpr;
      best_k = k;
    }
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

absl::StatusOr<double> StandardFprFor(int num_probes, double num_bits, double num_keys) {
  if (absl::Status s = CheckProbes(num_probes); !s.ok()) return s;
  if (absl::Status s = CheckBits(num_bits); !s.ok()) return s;
  if (absl::Status s = CheckKeys(num_keys, /*allow_zero=*/true); !s.ok()) return s;
  const double k = num_probes;
  return std::pow(-std::expm1(-k * num_keys / num_bits), k);
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
  const double p_lo = *StandardFprFor(lo, num_bits, num_keys);
  const double p_hi = *StandardFprFor(hi, num_bits, num_keys);
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
  return std::pow(slice_set, k);
}

absl::StatusOr<double> BlockedBitsPerKeyForFpr(double fpr) {
  if (absl::Status s = CheckFpr(fpr); !s.ok()) return s;
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

}  // namespace blockbloom
