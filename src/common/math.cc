#include "blockbloom/math.h"

#include <algorithm>
#include <cmath>

namespace blockbloom {

double StandardBloomFpr(double bits_per_key, int num_probes) {
  const double k = num_probes;
  return std::pow(1.0 - std::exp(-k / bits_per_key), k);
}

double BlockedBloomFpr(double bits_per_key, int num_probes, int block_bits) {
  const double lambda = block_bits / bits_per_key;  // mean keys per block
  const double k = num_probes;
  const double log_keep = std::log1p(-1.0 / block_bits);  // ln(1 - 1/B)
  // Sum the Poisson(lambda) pmf far enough into both tails that the mass
  // left out is below 1e-15. The pmf is computed in log space (lambda can be
  // several hundred, where e^-lambda underflows).
  const double spread = 12.0 * std::sqrt(lambda) + 30.0;
  const long lo = static_cast<long>(std::max(0.0, lambda - spread));
  const long hi = static_cast<long>(lambda + spread);
  double fpr = 0.0;
  for (long i = lo; i <= hi; ++i) {
    const double log_pmf =
        i * std::log(lambda) - lambda - std::lgamma(static_cast<double>(i) + 1);
    const double set_fraction = -std::expm1(k * i * log_keep);
    fpr += std::exp(log_pmf) * std::pow(set_fraction, k);
  }
  return fpr;
}

int OptimalBlockedProbes(double bits_per_key, int max_probes, int block_bits) {
  int best_k = 1;
  double best = BlockedBloomFpr(bits_per_key, 1, block_bits);
  for (int k = 2; k <= max_probes; ++k) {
    const double fpr = BlockedBloomFpr(bits_per_key, k, block_bits);
    if (fpr < best) {
      best = fpr;
      best_k = k;
    }
  }
  return best_k;
}

}  // namespace blockbloom
