#include "blockbloom/partitioned_bloom.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/hash.h"
#include "blockbloom/math.h"
#include "blockbloom/standard_bloom.h"
#include "variants/probes.h"

namespace blockbloom {
namespace {

// Trailer (variants/probes.h): [slice bits: u64 LE][k: u8][reserved: u8 = 0][version: u8][marker: u8].
constexpr uint8_t kMarker = 0xB6;
constexpr uint8_t kVersion = 1;
constexpr uint64_t kMaxBits = uint64_t{1} << 48;  // as for the standard filter
constexpr uint64_t kMinBits = 64;

// The probe positions of a key in `f` (variants/probes.h).
variants::ProbeWalk Walk(const PartitionedBloomFilter& f) {
  return {HashScheme::kEnhancedDoubleHashing, f.num_probes(), f.slice_bits(),
          /*stride=*/f.slice_bits()};
}

}  // namespace

PartitionedBloomFilter::PartitionedBloomFilter(uint64_t slice_bits, int num_probes)
    : BitArrayFilter(slice_bits * static_cast<uint64_t>(num_probes), num_probes),
      slice_bits_(slice_bits) {}

absl::StatusOr<PartitionedBloomFilter> PartitionedBloomFilter::CreateWithGeometry(
    uint64_t slice_bits, int num_probes) {
  if (num_probes < 1 || num_probes > kMaxStandardProbes) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_probes must be in [1, ", kMaxStandardProbes, "], got ", num_probes));
  }
  if (slice_bits < 1) return absl::InvalidArgumentError("slice_bits must be >= 1");
  if (slice_bits > kMaxBits / static_cast<uint64_t>(num_probes)) {
    return absl::ResourceExhaustedError("partitioned filter does not fit in memory");
  }
  try {
    return PartitionedBloomFilter(slice_bits, num_probes);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("cannot allocate a partitioned filter");
  }
}

absl::StatusOr<PartitionedBloomFilter> PartitionedBloomFilter::Create(uint64_t expected_keys,
                                                                      double bits_per_key) {
  const double bpk = ClampBitsPerKey(bits_per_key);
  const double bits = std::ceil(static_cast<double>(expected_keys) * bpk);
  if (!(bits <= static_cast<double>(kMaxBits))) {
    return absl::ResourceExhaustedError(
        absl::StrCat(expected_keys, " keys at ", bpk, " bits/key do not fit in memory"));
  }
  const int k = std::min(kMaxStandardProbes, *StandardOptimalProbes(bpk, 1.0));
  const uint64_t m = std::max(kMinBits, static_cast<uint64_t>(bits));
  return CreateWithGeometry((m + static_cast<uint64_t>(k) - 1) / static_cast<uint64_t>(k), k);
}

absl::StatusOr<PartitionedBloomFilter::Geometry> PartitionedBloomFilter::GeometryForFpr(
    uint64_t expected_keys, double fpr) {
  const double n = static_cast<double>(std::max<uint64_t>(expected_keys, 1));
  absl::StatusOr<uint64_t> bits = StandardBitsForFpr(n, fpr);
  if (!bits.ok()) {
    if (bits.status().code() != absl::StatusCode::kOutOfRange) return bits.status();
    return absl::ResourceExhaustedError(bits.status().message());
  }
  if (*bits > kMaxBits) return absl::ResourceExhaustedError("partitioned filter too large");
  const int k = std::min(kMaxStandardProbes, *StandardOptimalProbes(static_cast<double>(*bits), n));
  // As for the standard filter, the integer k needs a little more than the
  // closed form; the partitioned model solved for m with this k gives
  //   m = k / (1 - (1 - p^(1/k))^(1/n)).
  const double clear = -std::expm1(std::log(fpr) / k);  // 1 - p^(1/k)
  const double m_k = std::ceil(k / -std::expm1(std::log(clear) / n));
  if (!(m_k <= static_cast<double>(kMaxBits))) {
    return absl::ResourceExhaustedError("partitioned filter too large for this fpr");
  }
  const uint64_t m = std::max({kMinBits, *bits, static_cast<uint64_t>(m_k)});
  return Geometry{(m + static_cast<uint64_t>(k) - 1) / static_cast<uint64_t>(k), k};
}

absl::StatusOr<PartitionedBloomFilter> PartitionedBloomFilter::CreateForFpr(
    uint64_t expected_keys, double fpr) {
  absl::StatusOr<Geometry> g = GeometryForFpr(expected_keys, fpr);
  if (!g.ok()) return g.status();
  return CreateWithGeometry(g->slice_bits, g->num_probes);
}

void PartitionedBloomFilter::AddHash(uint64_t hash) {
  CountAdded();
  Walk(*this).Set(bytes_.data(), hash);
}

bool PartitionedBloomFilter::MayContainHash(uint64_t hash) const {
  return Walk(*this).AllSet(bytes_.data(), hash);
}

double PartitionedBloomFilter::PredictedFpr() const {
  return *PartitionedFprFor(num_probes_, static_cast<double>(num_bits()),
                            static_cast<double>(num_added_));
}

std::string PartitionedBloomFilter::Serialize() const {
  return variants::EncodeWithTrailer(bytes_, {slice_bits_, num_probes_, /*reserved=*/0},
                                     kVersion, kMarker);
}

absl::StatusOr<PartitionedBloomFilter> PartitionedBloomFilter::Deserialize(
    std::string_view encoded) {
  constexpr const char* kWhat = "partitioned filter";
  absl::StatusOr<variants::Trailer> t =
      variants::DecodeTrailer(encoded, kWhat, kVersion, kMarker);
  if (!t.ok()) return t.status();
  if (t->byte9 != 0) return absl::DataLossError("partitioned filter: reserved byte set");
  const int k = t->num_probes;
  const uint64_t slice = t->word;
  if (k < 1 || k > kMaxStandardProbes || slice < 1 ||
      slice > kMaxBits / static_cast<uint64_t>(k)) {
    return absl::DataLossError("partitioned filter: parameters out of range");
  }
  const uint64_t m = slice * static_cast<uint64_t>(k);
  if (absl::Status s = variants::CheckBitArray(encoded, m, kWhat); !s.ok()) return s;
  absl::StatusOr<PartitionedBloomFilter> filter = CreateWithGeometry(slice, k);
  if (filter.ok()) {
    std::copy(encoded.begin(), encoded.end() - variants::kTrailerSize, filter->bytes_.begin());
  }
  return filter;
}

}  // namespace blockbloom
