#include "blockbloom/standard_bloom.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/hash.h"
#include "blockbloom/math.h"
#include "variants/probes.h"

namespace blockbloom {
namespace {

// Trailer (variants/probes.h): [m: u64 LE][k: u8][scheme: u8][version: u8][marker: u8].
constexpr uint8_t kMarker = 0xB5;
constexpr uint8_t kVersion = 1;
// 2^48 bits = 32 TiB: beyond any machine this runs on; refusing early gives a
// clear error instead of an allocation failure deep inside.
constexpr uint64_t kMaxBits = uint64_t{1} << 48;
constexpr uint64_t kMinBits = 64;

// The probe positions of a key in `f` (variants/probes.h).
variants::ProbeWalk Walk(const StandardBloomFilter& f) {
  return {f.scheme(), f.num_probes(), f.num_bits(), /*stride=*/0};
}

}  // namespace

const char* HashSchemeName(HashScheme scheme) {
  switch (scheme) {
    case HashScheme::kDoubleHashing:
      return "double";
    case HashScheme::kEnhancedDoubleHashing:
      return "enhanced-double";
  }
  return "unknown";
}

StandardBloomFilter::StandardBloomFilter(uint64_t num_bits, int num_probes, HashScheme scheme)
    : BitArrayFilter(num_bits, num_probes), num_bits_(num_bits), scheme_(scheme) {}

absl::StatusOr<StandardBloomFilter> StandardBloomFilter::CreateWithGeometry(
    uint64_t num_bits, int num_probes, HashScheme scheme) {
  if (num_bits < 1) return absl::InvalidArgumentError("num_bits must be >= 1");
  if (num_bits > kMaxBits) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a standard filter of ", num_bits, " bits does not fit in memory"));
  }
  if (num_probes < 1 || num_probes > kMaxStandardProbes) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_probes must be in [1, ", kMaxStandardProbes, "], got ", num_probes));
  }
  if (!variants::IsKnownScheme(static_cast<uint8_t>(scheme))) {
    return absl::InvalidArgumentError("unknown hash scheme");
  }
  try {
    return StandardBloomFilter(num_bits, num_probes, scheme);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", (num_bits + 7) / 8, " bytes for a standard filter"));
  }
}

absl::StatusOr<StandardBloomFilter> StandardBloomFilter::Create(uint64_t expected_keys,
                                                                double bits_per_key,
                                                                HashScheme scheme) {
  const double bpk = ClampBitsPerKey(bits_per_key);
  const double bits = std::ceil(static_cast<double>(expected_keys) * bpk);
  if (!(bits <= static_cast<double>(kMaxBits))) {
    return absl::ResourceExhaustedError(
        absl::StrCat(expected_keys, " keys at ", bpk, " bits/key do not fit in memory"));
  }
  const int k = std::min(kMaxStandardProbes, *StandardOptimalProbes(bpk, 1.0));
  return CreateWithGeometry(std::max(kMinBits, static_cast<uint64_t>(bits)), k, scheme);
}

absl::StatusOr<StandardBloomFilter::Geometry> StandardBloomFilter::GeometryForFpr(
    uint64_t expected_keys, double fpr) {
  const double n = static_cast<double>(std::max<uint64_t>(expected_keys, 1));
  absl::StatusOr<uint64_t> bits = StandardBitsForFpr(n, fpr);
  if (!bits.ok()) {
    if (bits.status().code() != absl::StatusCode::kOutOfRange) return bits.status();
    return absl::ResourceExhaustedError(bits.status().message());
  }
  const int k = std::min(kMaxStandardProbes, *StandardOptimalProbes(static_cast<double>(*bits), n));
  // The closed form m = -n ln p / ln^2 2 assumes the real k = (m/n) ln 2; the
  // integer k misses p slightly (1.0039% instead of 1% at n = 1e6, k = 7).
  // Formula (1) solved for m with this k, m = -k n / ln(1 - p^(1/k)), meets it.
  const double m_k = std::ceil(-k * n / std::log(-std::expm1(std::log(fpr) / k)));
  if (!(m_k <= static_cast<double>(kMaxBits))) {
    return absl::ResourceExhaustedError("standard filter too large for this fpr");
  }
  return Geometry{std::max({kMinBits, *bits, static_cast<uint64_t>(m_k)}), k};
}

absl::StatusOr<StandardBloomFilter> StandardBloomFilter::CreateForFpr(uint64_t expected_keys,
                                                                      double fpr,
                                                                      HashScheme scheme) {
  absl::StatusOr<Geometry> g = GeometryForFpr(expected_keys, fpr);
  if (!g.ok()) return g.status();
  return CreateWithGeometry(g->num_bits, g->num_probes, scheme);
}

void StandardBloomFilter::AddHash(uint64_t hash) {
  CountAdded();
  Walk(*this).Set(bytes_.data(), hash);
}

bool StandardBloomFilter::MayContainHash(uint64_t hash) const {
  return Walk(*this).AllSet(bytes_.data(), hash);
}

double StandardBloomFilter::PredictedFpr() const {
  return *StandardFprFor(num_probes_, static_cast<double>(num_bits_),
                         static_cast<double>(num_added_));
}

std::string StandardBloomFilter::Serialize() const {
  return variants::EncodeWithTrailer(
      bytes_, {num_bits_, num_probes_, static_cast<uint8_t>(scheme_)}, kVersion, kMarker);
}

absl::StatusOr<StandardBloomFilter> StandardBloomFilter::Deserialize(std::string_view encoded) {
  constexpr const char* kWhat = "standard filter";
  absl::StatusOr<variants::Trailer> t =
      variants::DecodeTrailer(encoded, kWhat, kVersion, kMarker);
  if (!t.ok()) return t.status();
  if (!variants::IsKnownScheme(t->byte9)) {
    return absl::DataLossError("standard filter: unknown hash scheme");
  }
  const int k = t->num_probes;
  const uint64_t m = t->word;
  if (k < 1 || k > kMaxStandardProbes || m < 1 || m > kMaxBits) {
    return absl::DataLossError("standard filter: parameters out of range");
  }
  if (absl::Status s = variants::CheckBitArray(encoded, m, kWhat); !s.ok()) return s;
  absl::StatusOr<StandardBloomFilter> filter =
      CreateWithGeometry(m, k, static_cast<HashScheme>(t->byte9));
  if (filter.ok()) {
    std::copy(encoded.begin(), encoded.end() - variants::kTrailerSize, filter->bytes_.begin());
  }
  return filter;
}

}  // namespace blockbloom
