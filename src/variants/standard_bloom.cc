#include "blockbloom/standard_bloom.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_cat.h"
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/hash.h"
#include "blockbloom/math.h"
#include "variants/probes.h"

namespace blockbloom {
namespace {

// Trailer (variants/probes.h): [m: u64 LE][k: u8][scheme: u8][version: u8][marker: u8].
constexpr uint8_t kStandardMarker = 0xB5;
constexpr uint8_t kStandardVersion = 1;

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

namespace internal {

BitArrayFilter::BitArrayFilter(uint64_t num_bits, int num_probes, HashScheme scheme, uint64_t range,
                               uint64_t stride)
    : scheme_(scheme),
      range_(range),
      stride_(stride),
      bytes_(static_cast<size_t>((num_bits + 7) / 8), 0),
      num_probes_(num_probes) {}

BitArrayFilter& BitArrayFilter::operator=(BitArrayFilter&& other) noexcept {
  if (this != &other) {
    scheme_ = other.scheme_;
    range_ = other.range_;
    stride_ = other.stride_;
    bytes_ = std::move(other.bytes_);
    num_probes_ = other.num_probes_;
    num_added_ = other.num_added_;
    // No bits: the probes answer "may match" (moved_from()).
    other.bytes_.clear();
    other.range_ = 0;
    other.stride_ = 0;
    other.num_added_ = 0;
  }
  return *this;
}

void BitArrayFilter::AddHash(uint64_t hash) {
  num_added_ = variants::SaturatingAdd(num_added_, 1);
  if (moved_from()) return;  // it matches every key already
  variants::ProbeWalk{scheme_, num_probes_, range_, stride_}.Set(bytes_.data(), hash);
}

bool BitArrayFilter::MayContainHash(uint64_t hash) const {
  if (moved_from()) return true;
  return variants::ProbeWalk{scheme_, num_probes_, range_, stride_}.AllSet(bytes_.data(), hash);
}

}  // namespace internal

StandardBloomFilter::StandardBloomFilter(uint64_t num_bits, int num_probes, HashScheme scheme)
    : BitArrayFilter(num_bits, num_probes, scheme, /*range=*/num_bits, /*stride=*/0) {}

absl::StatusOr<StandardBloomFilter> StandardBloomFilter::CreateWithGeometry(uint64_t num_bits,
                                                                            int num_probes,
                                                                            HashScheme scheme) {
  if (num_bits < 1) return absl::InvalidArgumentError("num_bits must be >= 1");
  if (num_bits > variants::kMaxBits) {
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
  absl::StatusOr<variants::Sizing> size = variants::SizeForBitsPerKey(expected_keys, bits_per_key);
  if (!size.ok()) return size.status();
  return CreateWithGeometry(size->num_bits, size->num_probes, scheme);
}

absl::StatusOr<StandardBloomFilter::Geometry> StandardBloomFilter::GeometryForFpr(
    uint64_t expected_keys, double fpr, HashScheme scheme) {
  if (!variants::IsKnownScheme(static_cast<uint8_t>(scheme))) {
    return absl::InvalidArgumentError("unknown hash scheme");
  }
  const double n = static_cast<double>(std::max<uint64_t>(expected_keys, 1));
  absl::StatusOr<variants::Sizing> size = variants::SizeForFpr(n, fpr);
  if (!size.ok()) return size.status();
  const auto too_big = [&] {
    return absl::ResourceExhaustedError(
        absl::StrFormat("standard filter of %g keys at fpr %g needs more than 2^48 bits", n, fpr));
  };
  // The closed form m = -n ln p / ln^2 2 assumes the real k = (m/n) ln 2; the
  // integer k misses p slightly (1.0039% instead of 1% at n = 1e6, k = 7).
  // Formula (1) solved for m with this k, m = -k n / ln(1 - p^(1/k)), meets
  // it: the start of the search, and the answer whenever the small-m model
  // of blockbloom/math.h agrees with (1) there (every n above a few
  // thousand at 1%).
  const auto start = [&](int k) -> uint64_t {
    const double m_k = std::ceil(-k * n / std::log(-std::expm1(std::log(fpr) / k)));
    if (!(m_k <= static_cast<double>(variants::kMaxBits))) return variants::kMaxBits + 1;
    return std::max({variants::kMinBits, size->num_bits, static_cast<uint64_t>(m_k)});
  };
  if (start(size->num_probes) > variants::kMaxBits) return too_big();
  const variants::Sizing chosen = variants::SizeUnderModel(
      size->num_probes, variants::kMaxBits, fpr, start, [](uint64_t bits, int) { return bits; },
      [&](uint64_t bits, int k) {
        return *StandardFprFor(k, static_cast<double>(bits), n, scheme);
      });
  if (chosen.num_probes == 0) return too_big();
  return Geometry{chosen.num_bits, chosen.num_probes};
}

absl::StatusOr<StandardBloomFilter> StandardBloomFilter::CreateForFpr(uint64_t expected_keys,
                                                                      double fpr,
                                                                      HashScheme scheme) {
  absl::StatusOr<Geometry> g = GeometryForFpr(expected_keys, fpr, scheme);
  if (!g.ok()) return g.status();
  return CreateWithGeometry(g->num_bits, g->num_probes, scheme);
}

double StandardBloomFilter::PredictedFpr() const {
  if (moved_from()) return 1.0;
  return *StandardFprFor(num_probes(), static_cast<double>(num_bits()),
                         static_cast<double>(num_added()), scheme());
}

std::string StandardBloomFilter::Serialize() const {
  if (moved_from()) {  // one bit, set: every probe reads it
    const uint8_t one = 1;
    return variants::EncodeWithTrailer(&one, 1, {1, num_probes(), static_cast<uint8_t>(scheme())},
                                       kStandardVersion, kStandardMarker);
  }
  return variants::EncodeWithTrailer(data(), num_bytes(),
                                     {num_bits(), num_probes(), static_cast<uint8_t>(scheme())},
                                     kStandardVersion, kStandardMarker);
}

absl::StatusOr<StandardBloomFilter> StandardBloomFilter::Deserialize(std::string_view encoded) {
  return variants::DecodeBitArrayFilter<StandardBloomFilter>(
      encoded, "standard filter", kStandardVersion, kStandardMarker,
      [](const variants::Trailer& t) -> absl::StatusOr<uint64_t> {
        if (!variants::IsKnownScheme(t.byte9)) {
          return absl::DataLossError("standard filter: unknown hash scheme");
        }
        if (t.num_probes < 1 || t.num_probes > kMaxStandardProbes || t.word < 1 ||
            t.word > variants::kMaxBits) {
          return absl::DataLossError("standard filter: parameters out of range");
        }
        return t.word;  // m
      },
      [](const variants::Trailer& t) {
        return CreateWithGeometry(t.word, t.num_probes, static_cast<HashScheme>(t.byte9));
      });
}

}  // namespace blockbloom
