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
// Thread-safety: the functions may run on any number of threads at once
// (the version-2 builder's scratch is on the stack or per thread). The
// version-2 solver's kernels run on the CPU's best Highway target
// (simd/compact_solver.h); simd::ForceTargetForTesting picks another.
#ifndef BLOCKBLOOM_COMPACT_BUILDER_H_
#define BLOCKBLOOM_COMPACT_BUILDER_H_

#include <cstddef>
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
  int version = 1;
  Params params;             // version 1
  uint64_t num_entries = 0;  // version 1: distinct fingerprints stored (E);
                             // version 2: slots (m)
  int fingerprint_bits = 0;  // version 2: R
  uint8_t seed = 0;          // version 2
};

// Version 2 sizing. For n keys at bits_per_key (clamped) the filter is
// exactly ceil(n * bits_per_key / 8) bytes, trailer included ("all-in"):
// D = that - kV2TrailerSize (3) body bytes, R = min(32, floor(8D / n))
// fingerprint bits and m = floor(8D / R) >= n slots. fingerprint_bits is 0 where version 2 does
// not apply (no keys, R < 1, more than kV2MaxKeys keys); the builder then
// writes version 1.
inline constexpr uint64_t kV2MaxKeys = uint64_t{1} << 16;
struct V2Choice {
  int fingerprint_bits = 0;  // R; 0: version 2 does not apply
  uint64_t total_bytes = 0;
};
V2Choice ChooseV2(uint64_t num_keys, double bits_per_key);

// Appends the encoding of the set of `hashes` (any order; duplicates allowed)
// to *dst: version 2 (ChooseV2) when it applies and a seed solves the
// system (with R, else with R - 1), else version 1. At most
// MaxEncodedSize(hashes.size(), bits_per_key) bytes either way.
BuildInfo AppendFilter(absl::Span<const uint64_t> hashes, double bits_per_key, std::string* dst);

// The same, taking a vector of hashes it may reorder and overwrite (saves a
// copy; the LevelDB policies use it).
BuildInfo AppendFilterConsuming(std::vector<uint64_t>* hashes, double bits_per_key,
                                std::string* dst);

// Version 1 only (the Golomb-Rice set; its sizing and model below). Kept so
// version-1 filters can still be written for tests and goldens.
BuildInfo AppendFilterV1(absl::Span<const uint64_t> hashes, double bits_per_key, std::string* dst);
BuildInfo AppendFilterV1Consuming(std::vector<uint64_t>* hashes, double bits_per_key,
                                  std::string* dst);

// Version 2 with exactly R fingerprint bits in total_bytes bytes. Returns
// false (dst unchanged) if no seed solves the system; a banded system (more
// than 64 slots) tries at most `max_seeds` seeds (its failures come mostly
// from where the keys' windows start, which no seed changes). REQUIRES:
// 1 <= R <= 32, total_bytes > kV2TrailerSize and
// V2Slots(total_bytes - kV2TrailerSize, R) >= hashes.size().
bool AppendFilterV2(absl::Span<const uint64_t> hashes, int fingerprint_bits, uint64_t total_bytes,
                    std::string* dst, BuildInfo* info, int max_seeds = kV2Seeds);

// The body of a solved system of at most kDenseBodySlots slots, every slot's
// solution known: bit b of value[p] (< 2^R) goes to body bit b * m + p
// (docs/FORMAT.md, "Compact filter, version 2"), ceil(R * m / 8) bytes
// written to `out`. WriteDenseBody picks the faster of the two ways, which
// write the same bytes: by columns (portable) or by slots (x86-64 BMI2,
// checked at run time; HasDenseBodyBySlots says whether this CPU has it
// and runs PDEP fast: not AMD before Zen 3, nor Hygon).
// REQUIRES: 1 <= m <= kDenseBodySlots, 1 <= R <= 32.
inline constexpr uint64_t kDenseBodySlots = 16;
void WriteDenseBody(const uint32_t* value, uint64_t m, int fingerprint_bits, uint8_t* out);
void WriteDenseBodyByColumns(const uint32_t* value, uint64_t m, int fingerprint_bits, uint8_t* out);
void WriteDenseBodyBySlots(const uint32_t* value, uint64_t m, int fingerprint_bits, uint8_t* out);
bool HasDenseBodyBySlots();

// The version-1 builder's sort: hashes ascending. One most-significant-digit
// counting pass on the top ~log2(n) bits (about one hash per digit for
// uniform hashes), then each digit sorted: by insertion up to
// kInsertionSortMax hashes, else by std::sort. Linear for uniform hashes and
// O(n log n) for any input: duplicates of a few keys, or keys whose hashes
// share their top bits, fill one digit, where an insertion sort alone is
// quadratic. Returns the number of places hashes moved by insertion (fewer
// than kInsertionSortMax per hash; tests check it).
inline constexpr size_t kInsertionSortMax = 16;
uint64_t SortHashes(std::vector<uint64_t>* hashes);

// The model's FPR for n distinct keys at bits_per_key (clamped): 2^-R where
// version 2 applies (ChooseV2), else version 1's: the builder's first guess
// of U, with E[E]/U = 1 - (1 - 1/U)^n (up to 16 keys, where the trailer is
// most of the bytes, the mean E/U of the builder's own filters of 64 fixed
// pseudo-random sets). Version 2's is low by up to 2x where
// the band's margin makes the build fall back to R - 1 (docs/FORMAT.md,
// "Compact filter, version 2": 8.01 bits/key from 5,000 keys, 16-32
// bits/key at large n; never at 10 bits/key up to kV2MaxKeys).
double PredictedFpr(uint64_t num_keys, double bits_per_key);
double PredictedFprV1(uint64_t num_keys, double bits_per_key);

}  // namespace compact
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMPACT_BUILDER_H_
