#include "blockbloom/standard_bloom.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/hash.h"
#include "blockbloom/math.h"
#include "blocked/kernel.h"
#include "variants/probes.h"

namespace blockbloom {
namespace {

// Trailer: [m: u64 LE][k: u8][scheme: u8][version: u8][marker: u8].
constexpr size_t kTrailerSize = 12;
constexpr uint8_t kMarker = 0xB5;
constexpr uint8_t kVersion = 1;
// 2^48 bits = 32 TiB: beyond any machine this runs on; refusing early gives a
// clear error instead of an allocation failure deep inside.
constexpr uint64_t kMaxBits = uint64_t{1} << 48;
constexpr uint64_t kMinBits = 64;

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
    : bytes_(static_cast<size_t>((num_bits + 7) / 8), 0),
      num_bits_(num_bits),
      num_probes_(num_probes),
      scheme_(scheme) {}

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
  num_added_ = variants::SaturatingAdd(num_added_, 1);
  variants::ProbeSequence seq(hash, scheme_, num_bits_);
  for (int i = 0; i < num_probes_; ++i) {
    variants::SetBit(bytes_.data(), blocked::FastRange64(seq.Next(), num_bits_));
  }
}

bool StandardBloomFilter::MayContainHash(uint64_t hash) const {
  variants::ProbeSequence seq(hash, scheme_, num_bits_);
  for (int i = 0; i < num_probes_; ++i) {
    if (!variants::GetBit(bytes_.data(), blocked::FastRange64(seq.Next(), num_bits_))) {
      return false;
    }
  }
  return true;
}

void StandardBloomFilter::AddKey(std::string_view key) { AddHash(HashKey(key)); }

bool StandardBloomFilter::MayContain(std::string_view key) const {
  return MayContainHash(HashKey(key));
}

double StandardBloomFilter::PredictedFpr() const {
  return *StandardFprFor(num_probes_, static_cast<double>(num_bits_),
                         static_cast<double>(num_added_));
}

std::string StandardBloomFilter::Serialize() const {
  std::string out(reinterpret_cast<const char*>(bytes_.data()), bytes_.size());
  variants::PutFixed64(&out, num_bits_);
  out.push_back(static_cast<char>(num_probes_));
  out.push_back(static_cast<char>(scheme_));
  out.push_back(static_cast<char>(kVersion));
  out.push_back(static_cast<char>(kMarker));
  return out;
}

absl::StatusOr<StandardBloomFilter> StandardBloomFilter::Deserialize(std::string_view encoded) {
  const size_t n = encoded.size();
  if (n < kTrailerSize) return absl::DataLossError("standard filter: shorter than its trailer");
  const char* t = encoded.data() + n - kTrailerSize;
  if (static_cast<uint8_t>(t[11]) != kMarker) {
    return absl::DataLossError("standard filter: wrong marker byte");
  }
  if (static_cast<uint8_t>(t[10]) != kVersion) {
    return absl::DataLossError(
        absl::StrCat("standard filter: unknown version ", static_cast<uint8_t>(t[10])));
  }
  const uint8_t scheme = static_cast<uint8_t>(t[9]);
  if (!variants::IsKnownScheme(scheme)) {
    return absl::DataLossError("standard filter: unknown hash scheme");
  }
  const int k = static_cast<uint8_t>(t[8]);
  const uint64_t m = variants::GetFixed64(t);
  if (k < 1 || k > kMaxStandardProbes || m < 1 || m > kMaxBits) {
    return absl::DataLossError("standard filter: parameters out of range");
  }
  const uint64_t data_bytes = n - kTrailerSize;
  if ((m + 7) / 8 != data_bytes) {
    return absl::DataLossError(absl::StrCat("standard filter: ", data_bytes,
                                            " bytes of bits for m=", m));
  }
  if (m % 8 != 0 &&
      (static_cast<uint8_t>(encoded[data_bytes - 1]) >> (m % 8)) != 0) {
    return absl::DataLossError("standard filter: bits set past m");
  }
  absl::StatusOr<StandardBloomFilter> filter =
      CreateWithGeometry(m, k, static_cast<HashScheme>(scheme));
  if (filter.ok()) {
    std::copy(encoded.begin(), encoded.begin() + data_bytes, filter->bytes_.begin());
  }
  return filter;
}

}  // namespace blockbloom
