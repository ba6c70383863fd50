// The textbook Bloom filter (Bloom 1970): one array of m bits, k probes
// anywhere in it. The baseline that the blocked filter is measured against.
//
//   auto filter = blockbloom::StandardBloomFilter::CreateForFpr(1'000'000, 0.01);
//   filter->AddKey("https://example.com/");
//   filter->MayContain("https://example.com/");  // true: no false negatives
//
// Hashing. A key's hash is h = blockbloom::HashKey (XXH3-64, stable). The k
// probe positions come from two 64-bit values, h1 = h and h2 = fmix64(h) | 1
// (the murmur3 64-bit finaliser; odd so the stride is never 0), combined by
// one of two schemes, both computed modulo 2^64:
//  - kDoubleHashing (Kirsch and Mitzenmacher, "Less Hashing, Same
//    Performance", ESA 2006):          g_i = h1 + i * h2
//  - kEnhancedDoubleHashing (Dillinger and Manolios, "Bloom Filters in
//    Probabilistic Verification", FMCAD 2004, section 5.2):
//        x = h1, y = h2;  for i in 0..k-1: { g_i = x; x += y; y += i * u; }
//    with u = ceil(2^64 / m): the paper's "y += i" works modulo m, and u is
//    one position of [0, m) in the 2^64 space that multiply-shift reduces.
//    The stride grows at every step (a cubic term), so two keys whose
//    (h1, h2) are one stride apart no longer share k - 1 probes, as they do
//    under plain double hashing.
// Each g_i is mapped onto [0, m) by multiply-shift, floor(g_i * m / 2^64)
// (Lemire 2019), never `%`: no modulo bias and no FPR drift with m, unlike
// LevelDB's built-in 32-bit filter. Bit p is bit (p % 8) of byte p / 8.
// Changing any of this changes the serialized format (docs/FORMAT.md).
//
// Thread-safety: const methods (queries, Serialize) may run concurrently with
// each other. Add* and assignment need exclusive access.
#ifndef BLOCKBLOOM_STANDARD_BLOOM_H_
#define BLOCKBLOOM_STANDARD_BLOOM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "blockbloom/hash.h"
#include "blockbloom/math.h"  // HashScheme, the FPR model

namespace blockbloom {

// enum class HashScheme (kDoubleHashing = 1, kEnhancedDoubleHashing = 2) is
// declared in blockbloom/math.h, whose FPR model depends on it.

// Name of a scheme ("double", "enhanced-double"), for tools and messages.
const char* HashSchemeName(HashScheme scheme);

// The largest k a standard or partitioned filter accepts. Past ~45 probes no
// bits-per-key this library accepts (<= 64) gains anything.
inline constexpr int kMaxStandardProbes = 64;

namespace internal {

// What the standard and partitioned filters share: a bit array of
// ceil(num_bits / 8) bytes, the key count, and the probe walk: probe i of a
// key is bit i * stride + floor(g_i * range / 2^64), g_i from the key's probe
// sequence under `scheme` (see above). The standard filter has range = m and
// stride 0, the partitioned filter range = stride = bits per slice.
// Thread-safety: as for the filters (const methods concurrently; the others
// exclusive).
class BitArrayFilter {
 public:
  BitArrayFilter(const BitArrayFilter&) = default;
  BitArrayFilter& operator=(const BitArrayFilter&) = default;
  // A moved-from filter keeps no bits (num_bytes() and num_bits() are 0) and
  // may match every key: its probes answer "may match", Add* count their keys
  // and change nothing, and Serialize() writes the smallest filter of its
  // kind that matches every key (one bit, or one bit per slice, set). It may
  // be assigned to, used or destroyed.
  BitArrayFilter(BitArrayFilter&& other) noexcept { *this = std::move(other); }
  BitArrayFilter& operator=(BitArrayFilter&& other) noexcept;

  void AddKey(std::string_view key) { AddHash(HashKey(key)); }
  void AddHash(uint64_t hash);
  bool MayContain(std::string_view key) const { return MayContainHash(HashKey(key)); }
  bool MayContainHash(uint64_t hash) const;

  uint64_t num_bytes() const { return bytes_.size(); }
  int num_probes() const { return num_probes_; }
  // Keys added through this object (saturating); Deserialize gives 0,
  // Union/Intersection (blockbloom/set_ops.h) an upper bound.
  uint64_t num_added() const { return num_added_; }
  void set_num_added(uint64_t n) { num_added_ = n; }
  // ceil(num_bits / 8) bytes; bits past num_bits are always 0.
  const uint8_t* data() const { return bytes_.data(); }
  uint8_t* mutable_data() { return bytes_.data(); }

 protected:
  // REQUIRES: num_bits = range if stride == 0, else num_probes * stride.
  BitArrayFilter(uint64_t num_bits, int num_probes, HashScheme scheme, uint64_t range,
                 uint64_t stride);
  // No bits of its own (moved from): matches every key.
  bool moved_from() const { return bytes_.empty(); }

  HashScheme scheme_;
  uint64_t range_;
  uint64_t stride_;

 private:
  std::vector<uint8_t> bytes_;
  int num_probes_;
  uint64_t num_added_ = 0;
};

}  // namespace internal

// AddKey, AddHash, MayContain, MayContainHash, num_bytes, num_probes,
// num_added, set_num_added, data and mutable_data come from
// internal::BitArrayFilter above.
class StandardBloomFilter : public internal::BitArrayFilter {
 public:
  // Sized for `expected_keys` at `bits_per_key` (clamped like every
  // bits-per-key in this library: [1, 64], NaN means 10), with the k that
  // minimises the FPR (StandardOptimalProbes). At least 64 bits.
  static absl::StatusOr<StandardBloomFilter> Create(
      uint64_t expected_keys, double bits_per_key,
      HashScheme scheme = HashScheme::kEnhancedDoubleHashing);
  // Sized for `expected_keys` at false-positive rate `fpr` (in (0, 1), else
  // InvalidArgument), by GeometryForFpr(expected_keys, fpr, scheme).
  static absl::StatusOr<StandardBloomFilter> CreateForFpr(
      uint64_t expected_keys, double fpr, HashScheme scheme = HashScheme::kEnhancedDoubleHashing);
  // The (m, k) CreateForFpr uses, without allocating: the smallest m, and
  // its k (the closed form's k or a neighbour), at which the FPR model of
  // blockbloom/math.h for `scheme` (StandardFprFor: exact fill after Bose et
  // al. 2008, probe collapse and key-query coincidence of double hashing at
  // small m) is at most `fpr`. For large n the model is formula (1) and m
  // the larger of -n ln p / ln^2 2 and what the integer k needs,
  // -k n / ln(1 - p^(1/k)): unchanged sizes. Small n get more bits
  // (docs/FORMAT.md "Sizing for a target FPR"). At least 64 bits.
  struct Geometry {
    uint64_t num_bits;
    int num_probes;
  };
  static absl::StatusOr<Geometry> GeometryForFpr(
      uint64_t expected_keys, double fpr, HashScheme scheme = HashScheme::kEnhancedDoubleHashing);
  // Exactly `num_bits` (>= 1) bits and `num_probes` (1..64) probes.
  static absl::StatusOr<StandardBloomFilter> CreateWithGeometry(
      uint64_t num_bits, int num_probes, HashScheme scheme = HashScheme::kEnhancedDoubleHashing);
  // Parses Serialize() output into an owned copy; DataLoss on anything
  // malformed (size, parameters, set padding bits, unknown version/scheme).
  static absl::StatusOr<StandardBloomFilter> Deserialize(std::string_view encoded);

  // Bits, then a 12-byte trailer (docs/FORMAT.md "Standard Bloom filter").
  std::string Serialize() const;

  uint64_t num_bits() const { return range_; }
  HashScheme scheme() const { return scheme_; }
  // Predicted FPR with num_added() keys: StandardFprFor(k, m, n, scheme())
  // of blockbloom/math.h, the model GeometryForFpr sizes with.
  double PredictedFpr() const;

 private:
  StandardBloomFilter(uint64_t num_bits, int num_probes, HashScheme scheme);
};

}  // namespace blockbloom

#endif  // BLOCKBLOOM_STANDARD_BLOOM_H_
