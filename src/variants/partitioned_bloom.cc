#include "blockbloom/partitioned_bloom.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_cat.h"
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/hash.h"
#include "blockbloom/math.h"
#include "blockbloom/standard_bloom.h"
#include "variants/probes.h"

namespace blockbloom {
namespace {

// Trailer (variants/probes.h): [slice bits: u64 LE][k: u8][reserved: u8 = 0][version: u8][marker:
// u8].
constexpr uint8_t kPartitionedMarker = 0xB6;
constexpr uint8_t kPartitionedVersion = 1;

}  // namespace

PartitionedBloomFilter::PartitionedBloomFilter(uint64_t slice_bits, int num_probes)
    : BitArrayFilter(slice_bits * static_cast<uint64_t>(num_probes), num_probes,
                     HashScheme::kEnhancedDoubleHashing, /*range=*/slice_bits,
                     /*stride=*/slice_bits) {}

absl::StatusOr<PartitionedBloomFilter> PartitionedBloomFilter::CreateWithGeometry(
    uint64_t slice_bits, int num_probes) {
  if (num_probes < 1 || num_probes > kMaxStandardProbes) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_probes must be in [1, ", kMaxStandardProbes, "], got ", num_probes));
  }
  if (slice_bits < 1) return absl::InvalidArgumentError("slice_bits must be >= 1");
  if (slice_bits > variants::kMaxBits / static_cast<uint64_t>(num_probes)) {
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
  absl::StatusOr<variants::Sizing> size = variants::SizeForBitsPerKey(expected_keys, bits_per_key);
  if (!size.ok()) return size.status();
  const uint64_t k = static_cast<uint64_t>(size->num_probes);
  return CreateWithGeometry((size->num_bits + k - 1) / k, size->num_probes);
}

absl::StatusOr<PartitionedBloomFilter::Geometry> PartitionedBloomFilter::GeometryForFpr(
    uint64_t expected_keys, double fpr) {
  const double n = static_cast<double>(std::max<uint64_t>(expected_keys, 1));
  absl::StatusOr<variants::Sizing> size = variants::SizeForFpr(n, fpr);
  if (!size.ok()) return size.status();
  const auto too_big = [&] {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "partitioned filter of %g keys at fpr %g needs more than 2^48 bits", n, fpr));
  };
  if (size->num_bits > variants::kMaxBits) return too_big();
  // As for the standard filter, the integer k needs a little more than the
  // closed form; the partitioned formula solved for m with this k gives
  //   m = k / (1 - (1 - p^(1/k))^(1/n)),
  // the start of the search over slice sizes under the model of
  // blockbloom/math.h (PartitionedFprFor), and the answer whenever the model
  // agrees with the formula there.
  const auto start = [&](int k) -> uint64_t {
    const double clear = -std::expm1(std::log(fpr) / k);  // 1 - p^(1/k)
    const double m_k = std::ceil(k / -std::expm1(std::log(clear) / n));
    if (!(m_k <= static_cast<double>(variants::kMaxBits))) return variants::kMaxBits + 1;
    const uint64_t m = std::max({variants::kMinBits, size->num_bits, static_cast<uint64_t>(m_k)});
    return (m + static_cast<uint64_t>(k) - 1) / static_cast<uint64_t>(k);  // slice bits
  };
  if (start(size->num_probes) > variants::kMaxBits / static_cast<uint64_t>(size->num_probes)) {
    return too_big();
  }
  // Slice counts that would not fit fail the model (2.0 > any fpr).
  const int k_min = std::max(1, size->num_probes - 1);
  const variants::Sizing chosen = variants::SizeUnderModel(
      size->num_probes, variants::kMaxBits / static_cast<uint64_t>(k_min), fpr, start,
      [](uint64_t slice_bits, int k) { return slice_bits * static_cast<uint64_t>(k); },
      [&](uint64_t slice_bits, int k) {
        if (slice_bits > variants::kMaxBits / static_cast<uint64_t>(k)) return 2.0;
        return *PartitionedFprFor(k, static_cast<double>(slice_bits) * k, n);
      });
  if (chosen.num_probes == 0) return too_big();
  return Geometry{chosen.num_bits, chosen.num_probes};
}

absl::StatusOr<PartitionedBloomFilter> PartitionedBloomFilter::CreateForFpr(uint64_t expected_keys,
                                                                            double fpr) {
  absl::StatusOr<Geometry> g = GeometryForFpr(expected_keys, fpr);
  if (!g.ok()) return g.status();
  return CreateWithGeometry(g->slice_bits, g->num_probes);
}

double PartitionedBloomFilter::PredictedFpr() const {
  if (moved_from()) return 1.0;
  return *PartitionedFprFor(num_probes(), static_cast<double>(num_bits()),
                            static_cast<double>(num_added()));
}

std::string PartitionedBloomFilter::Serialize() const {
  if (moved_from()) {  // slices of one bit, each set: every probe reads one
    const int k = num_probes();
    std::string bits(static_cast<size_t>((k + 7) / 8), '\0');
    for (int i = 0; i < k; ++i) bits[i / 8] = static_cast<char>(bits[i / 8] | (1 << (i % 8)));
    return variants::EncodeWithTrailer(reinterpret_cast<const uint8_t*>(bits.data()), bits.size(),
                                       {1, k, /*reserved=*/0}, kPartitionedVersion,
                                       kPartitionedMarker);
  }
  return variants::EncodeWithTrailer(data(), num_bytes(),
                                     {slice_bits(), num_probes(), /*reserved=*/0},
                                     kPartitionedVersion, kPartitionedMarker);
}

absl::StatusOr<PartitionedBloomFilter> PartitionedBloomFilter::Deserialize(
    std::string_view encoded) {
  return variants::DecodeBitArrayFilter<PartitionedBloomFilter>(
      encoded, "partitioned filter", kPartitionedVersion, kPartitionedMarker,
      [](const variants::Trailer& t) -> absl::StatusOr<uint64_t> {
        if (t.byte9 != 0) return absl::DataLossError("partitioned filter: reserved byte set");
        const uint64_t k = static_cast<uint64_t>(t.num_probes);
        if (k < 1 || k > kMaxStandardProbes || t.word < 1 || t.word > variants::kMaxBits / k) {
          return absl::DataLossError("partitioned filter: parameters out of range");
        }
        return t.word * k;  // m = slice bits * k
      },
      [](const variants::Trailer& t) { return CreateWithGeometry(t.word, t.num_probes); });
}

}  // namespace blockbloom
