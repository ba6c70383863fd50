// A static, space-near-optimal filter for small immutable key sets: a
// Golomb-Rice coded set of sorted fingerprints (GCS) with a bucket index. It
// is the structure behind blockbloom::NewCompactFilterPolicy
// (blockbloom/compact_filter_policy.h), built for LevelDB's per-2KB filters
// of ~10 to ~1,000 keys, written once and never modified.
//
//   auto filter = blockbloom::CompactFilter::BuildFromKeys(keys, 10.0);
//   filter->MayContain("apple");   // true for every key built in
//   filter->MayContain("pear");    // false, except ~0.3% of the time
//
// Up to 65,536 keys the builder writes format version 2, a retrieval filter
// (a GF(2) linear system solved for R-bit fingerprints, R = floor of the
// bits per key left after a 3-byte trailer): exactly ceil(n * bits_per_key
// / 8) bytes, FPR 2^-R (0.195% at 10 bits/key for 21..65,536 keys, 0.39%
// for 9..20 keys). Beyond
// that, or where version 2 does not apply, it writes version 1, the
// Golomb-Rice set described next (docs/FORMAT.md has both).
//
// Version 1 (docs/FORMAT.md, "Compact filter", has the numbers and
// commands): at 10 bits/key it measures 0.19-0.32% FPR on 10..1,000-key
// filters (0.28% averaged), about 3x below a Bloom filter's 0.82-0.96%.
// Elias-Fano coding of the same fingerprints costs ~0.45 bits/key more
// (0.39% at best); a binary fuse filter cannot beat 2^-8 = 0.39% with 8-bit
// fingerprints and needs 1.4-2.4x space at these sizes. A probe hashes the
// key and decodes one bucket of ~64 Rice codes (~32 for an absent key): far
// less CPU than the data-block read it saves (the project's compact_bench,
// BM_Probe, measures it).
//
// Size: at most ceil(n * bits_per_key / 8) + 8 bytes for n keys, trailer
// included; the builder spends all of it on fingerprint range. Duplicate
// keys are allowed, and count in n: the size, and the format version below,
// follow the number of keys passed (1,000 copies of one key make the
// filter of 1,000 keys, version 2). bits_per_key is clamped like ClampBitsPerKey
// (blockbloom/blocked_bloom.h): into [1, 64], NaN means 10.
//
// Thread-safety: a CompactFilter is immutable after construction; its const
// methods may run concurrently from any number of threads (tested under
// TSan). Moving from or assigning to one needs
// exclusive access. A moved-from filter matches every key (never a false
// negative) and serializes as a version-1 filter that matches everything
// (one fingerprint in a range of one: expected_fpr() 1), as the library's
// other filters do.
#ifndef BLOCKBLOOM_COMPACT_FILTER_H_
#define BLOCKBLOOM_COMPACT_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace blockbloom {

// Largest serialized size for n keys: ceil(n * clamped bits_per_key / 8) + 8.
uint64_t CompactFilterMaxBytes(uint64_t num_keys, double bits_per_key);

// The model's FPR for n distinct keys at bits_per_key (clamped), for random
// absent keys: 2^-R for version 2, version 1's model otherwise
// (docs/FORMAT.md, "Compact filter").
double CompactFilterPredictedFpr(uint64_t num_keys, double bits_per_key);

// The format version the builder writes for n distinct keys at bits_per_key:
// 2 where it applies (1..65,536 keys and at least one fingerprint bit; it
// then takes exactly ceil(n * clamped bits_per_key / 8) bytes), else 1 (at
// most CompactFilterMaxBytes). Version 2 falls back to 1 only if no seed of
// its linear system solves, which docs/FORMAT.md measures as rare.
int CompactFilterFormatVersion(uint64_t num_keys, double bits_per_key);

class CompactFilter {
 public:
  // A filter of `keys` (any order, duplicates allowed) at bits_per_key.
  // ResourceExhausted if the key count is beyond what can be allocated.
  static absl::StatusOr<CompactFilter> BuildFromKeys(absl::Span<const std::string_view> keys,
                                                     double bits_per_key);
  // The same from hashes: hashes[i] must be blockbloom::HashKey(key_i) for
  // the filter to answer MayContain(key_i).
  static absl::StatusOr<CompactFilter> BuildFromHashes(absl::Span<const uint64_t> hashes,
                                                       double bits_per_key);
  // Parses and fully validates an encoding of either version (Serialize() or
  // a compact policy's filter) into an owned copy. InvalidArgument for an
  // unknown marker, version or trailer; DataLoss for a stream (version 1) or
  // padding (version 2) that breaks the format's rules.
  static absl::StatusOr<CompactFilter> Deserialize(std::string_view encoded);

  CompactFilter(CompactFilter&& other) noexcept;
  CompactFilter& operator=(CompactFilter&& other) noexcept;

  bool MayContain(std::string_view key) const;
  bool MayContainHash(uint64_t hash) const;

  // The serialized filter: exactly the bytes the compact LevelDB policies
  // write for the same keys and bits_per_key (docs/FORMAT.md).
  const std::string& Serialize() const { return encoded_; }

  // Format version of the encoding: 2 (a retrieval filter of R-bit
  // fingerprints, the builder's choice for up to 65,536 keys) or 1 (a
  // Golomb-Rice coded fingerprint set). docs/FORMAT.md has both.
  int format_version() const { return version_; }
  // Version 1: distinct fingerprints stored (E) and their range (U =
  // buckets * width). Version 2: slots (m) and m * 2^R (saturating at
  // UINT64_MAX). Either way a random
  // absent key is a false positive with probability exactly E/U
  // (= 2^-R for version 2).
  uint64_t num_entries() const { return num_entries_; }
  uint64_t fingerprint_range() const;
  double expected_fpr() const;
  uint64_t num_buckets() const { return num_buckets_; }       // version 1; else 0
  int rice_bits() const { return rice_bits_; }                // version 1; else 0
  int fingerprint_bits() const { return fingerprint_bits_; }  // version 2; else 0
  size_t size_bytes() const { return encoded_.size(); }

 private:
  CompactFilter() = default;
  // Caches the parsed trailer: sets every field but encoded_ and
  // num_entries_ from it. REQUIRES: encoded_ is well-formed.
  void CacheTrailer();
  // Becomes the filter that matches everything (a moved-from filter).
  void MatchEverything() noexcept;

  std::string encoded_;
  int version_ = 1;
  int fingerprint_bits_ = 0;
  uint64_t num_entries_ = 0;
  uint64_t num_buckets_ = 0;
  uint64_t bucket_width_ = 0;
  int rice_bits_ = 0;
  // Parsed trailer (compact::FilterView minus the pointer, which is
  // encoded_.data() at each query so that moves need no fix-up).
  uint64_t stream_bits_ = 0;
  size_t index_byte_ = 0;
  int offset_bits_ = 0;
};

}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMPACT_FILTER_H_
