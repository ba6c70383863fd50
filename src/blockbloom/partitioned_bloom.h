// A partitioned Bloom filter: the m bits are cut into k slices of m/k bits
// and probe i sets one bit in slice i, so a key's k bits never collide with
// each other. For the same m its FPR, (1 - (1 - k/m)^n)^k, is a hair above
// the standard filter's (blockbloom/math.h; plus a small-m term there); its worth is that every
// slice fills evenly, which the scalable filter's analysis relies on (Almeida, Baquero, Preguica
// and Hutchison, "Scalable Bloom Filters", Information Processing Letters 101(6), 2007, section 3).
//
// Hashing: the probe sequence g_0..g_{k-1} of a key is the enhanced double
// hashing of blockbloom/standard_bloom.h over h = HashKey(key) with
// m = slice_bits; probe i is bit i * slice_bits + floor(g_i * slice_bits /
// 2^64) (multiply-shift).
//
// Thread-safety: const methods (queries, Serialize) may run concurrently with
// each other. Add* and assignment need exclusive access.
#ifndef BLOCKBLOOM_PARTITIONED_BLOOM_H_
#define BLOCKBLOOM_PARTITIONED_BLOOM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "blockbloom/standard_bloom.h"  // internal::BitArrayFilter

namespace blockbloom {

// AddKey, AddHash, MayContain, MayContainHash, num_bytes, num_probes,
// num_added (saturating; Deserialize gives 0, Union an upper bound),
// set_num_added, data and mutable_data come from internal::BitArrayFilter
// (blockbloom/standard_bloom.h).
class PartitionedBloomFilter : public internal::BitArrayFilter {
 public:
  // Sized for `expected_keys` at `bits_per_key` (clamped to [1, 64], NaN
  // means 10): m = max(64, ceil(n * bits_per_key)) bits, k =
  // StandardOptimalProbes(bits_per_key, 1) (floor or ceil of bits_per_key *
  // ln 2, whichever gives the lower FPR; not always the rounded one), slices
  // of ceil(m / k) bits.
  static absl::StatusOr<PartitionedBloomFilter> Create(uint64_t expected_keys, double bits_per_key);
  // Sized for `expected_keys` at `fpr` in (0, 1) (InvalidArgument otherwise).
  static absl::StatusOr<PartitionedBloomFilter> CreateForFpr(uint64_t expected_keys, double fpr);
  // The (slice bits, k) CreateForFpr uses, without allocating: the fewest
  // bits, k slices of the closed form's k or a neighbour, at which
  // PartitionedFprFor (blockbloom/math.h: the formula above, exact in
  // expectation for independent probes, plus the key-query coincidence of
  // double hashing within small slices) is at most `fpr`. For large n that
  // is the formula solved for m with the integer k: unchanged sizes.
  struct Geometry {
    uint64_t slice_bits;
    int num_probes;
  };
  static absl::StatusOr<Geometry> GeometryForFpr(uint64_t expected_keys, double fpr);
  // k (1..64) slices of `slice_bits` (>= 1) bits each.
  static absl::StatusOr<PartitionedBloomFilter> CreateWithGeometry(uint64_t slice_bits,
                                                                   int num_probes);
  // Parses Serialize() output; DataLoss on anything malformed.
  static absl::StatusOr<PartitionedBloomFilter> Deserialize(std::string_view encoded);

  // Bits, then a 12-byte trailer (docs/FORMAT.md "Partitioned Bloom filter").
  std::string Serialize() const;

  uint64_t slice_bits() const { return range_; }
  uint64_t num_bits() const { return range_ * static_cast<uint64_t>(num_probes()); }
  // PartitionedFprFor(k, num_bits(), num_added()): the model GeometryForFpr
  // sizes with.
  double PredictedFpr() const;

 private:
  PartitionedBloomFilter(uint64_t slice_bits, int num_probes);
};

}  // namespace blockbloom

#endif  // BLOCKBLOOM_PARTITIONED_BLOOM_H_
