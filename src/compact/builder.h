// Builds compact filters (format in compact/format.h) and models their FPR.
//
// Sizing. A filter for n keys at c bits/key may use at most
// ceil(n*c/8) + 8 bytes, trailer and index included. The builder spends that
// budget on the largest fingerprint range U = B*W it can: FPR = E/U, so every
// byte not spent is FPR left on the table. The Rice parameter r and a first U
// come from the model below; then W is adjusted (Newton steps on the exact
// encoded size, bracketed) until the exact size fits the budget with the
// largest W found. The result is deterministic: same hashes and bits/key,
// same bytes.
//
// Model (Golomb 1966; Putze, Sanders, Singler 2007, section 4 for GCS).
// Sorted fingerprints uniform in [0, U) have gaps ~ Geometric with mean U/n;
// with t = n * 2^r / U, a Rice code with parameter r costs on average
//   r + 1 + 1/(e^t - 1)   bits per key
// (the unary part counts how many times 2^r fits in the gap). For a data
// budget of D bits the builder solves for t and picks the r with the largest
// U. At 10 bits/key that is r = 8, t ~ ln 2 and FPR ~ 0.27% before index and
// trailer costs, against the bound 2^-10 = 0.098% and a Bloom filter's
// ~0.82%.
//
// Thread-safety: pure functions.
#ifndef BLOCKBLOOM_COMPACT_BUILDER_H_
#define BLOCKBLOOM_COMPACT_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "compact/format.h"

namespace blockbloom {
namespace compact {

// ceil(n * bits_per_key / 8) + 8 with bits_per_key clamped (ClampBitsPerKey);
// saturates at UINT64_MAX.
uint64_t MaxEncodedSize(uint64_t num_keys, double bits_per_key);

struct BuildInfo {
  Params params;
  uint64_t num_entries = 0;  // distinct fingerprints stored (E)
};

// Appends the encoding of the set of `hashes` (any order; duplicates allowed)
// to *dst, using at most MaxEncodedSize(hashes.size(), bits_per_key) bytes.
BuildInfo AppendFilter(absl::Span<const uint64_t> hashes, double bits_per_key,
                       std::string* dst);

// The same, taking a vector of hashes it may reorder and overwrite (saves a
// copy; the LevelDB policies use it).
BuildInfo AppendFilterConsuming(std::vector<uint64_t>* hashes, double bits_per_key,
                                std::string* dst);

// The model's FPR for n distinct keys at bits_per_key (clamped): the builder's
// first guess of U, with E[E]/U = 1 - (1 - 1/U)^n.
double PredictedFpr(uint64_t num_keys, double bits_per_key);

}  // namespace compact
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMPACT_BUILDER_H_
