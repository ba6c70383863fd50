// A d-left counting Bloom filter (dlCBF): Bonomi, Mitzenmacher, Panigrahy,
// Singh, Varghese, "An Improved Construction for Counting Bloom Filters",
// ESA 2006. A counting filter that stores fingerprints in a d-left hash table
// instead of counters in a bit array: at equal memory its FPR is far lower
// than a counting Bloom filter's (docs/FILTERED_DB.md records the figures
// and the benchmark that measures them).
//
// Structure (paper s.3). d = 4 subtables of B = s * 2^b buckets each (s, the
// segments, 1..15: sizes between the powers of two); a bucket is w = 8 cells
// of 16 bits, cell = (remainder << 2) | counter:
//   - remainder: r = 14 bits; counter: 2 bits, 0 = empty cell, 1..3 = how many
//     inserted keys share this fingerprint.
// A key with 64-bit hash h (blockbloom::HashKey) has the true fingerprint
//   f = top F bits of h,  F = b + r,
// and d permutations of it, P_i(f) = (a_i * f) mod 2^F for fixed odd
// constants a_i (multiplication by an odd number is a bijection mod 2^F).
// A key's segment is g = (h mod 2^18) * s / 2^18 (the low 18 bits, never part
// of f since F <= 46), the same in every subtable; in subtable i the key uses
// bucket g * 2^b + (P_i(f) >> r) and remainder P_i(f) mod 2^r. Because P_i is
// a bijection, (bucket, remainder) in subtable i determines (g, f): two keys
// share a cell only when their segments and whole fingerprints are equal
// (paper s.3.2), which is what makes Erase safe. With s = 1 this is the
// paper's layout; s segments are s independent filters of 2^b buckets per
// subtable, which is how a table grows in steps finer than doubling.
//
// Insert: if some subtable's candidate bucket already holds the key's
// remainder, that cell's counter is incremented (so one fingerprint never
// occupies two cells); otherwise the remainder goes to the least-loaded of
// the d candidate buckets, leftmost on ties (d-left, Voecking 1999). Erase
// decrements the cell. Query: any subtable's candidate bucket holds the
// key's remainder. Each bucket's 8 remainders are compared with one 128-bit
// vector compare (simd/dleft-inl.h, every Highway target).
//
// Why these parameters. d = 4, w = 8 and a design load of 6 keys per bucket
// (75% of cells) are the paper's choice: with d-left placement, the chance
// that a bucket overflows at that load is negligible (max load concentrates
// at log log n / d). 16-bit cells keep a bucket in one 128-bit vector and a
// key's 4 buckets in one 64-byte line's worth of loads. At the design load a
// query meets ~d*6 = 24 occupied cells, each matching with probability
// 2^-14, so FPR ~= 24 / 16384 = 0.15% at 21.3 bits per key. B is a power of
// two so that P_i stays a bijection with plain multiply-and-mask; Create
// rounds B up, so after expected_keys inserts between 37.5% and 75% of the
// cells are in use, and the FPR shrinks with the load.
// The 2-bit counter reaches 3 only when 3 keys share a whole F-bit
// fingerprint: with unique keys (the FilteredDB index), about n^3 / 2^(2F+1).
//
// Failure is loud, never silent: Insert returns ResourceExhausted when all d
// candidate buckets are full or the key's counter is at 3, changes nothing,
// and counts it in stats(). The key is then NOT represented: the caller must
// not rely on the filter for it (FilteredDB switches to pass-through and
// rebuilds larger).
//
// Erase REQUIRES that the key was inserted (successfully) and not yet erased
// as often. Erasing a never-inserted key whose fingerprint happens to match
// a cell decrements another key's cell and can break the no-false-negative
// promise. Erase refuses (NotFound, nothing changed) only when no cell holds
// the key's fingerprint.
//
// Thread-safety: any method may be called from any thread at any time,
// except AppendTables (no concurrent Insert/Erase: its bytes are one state).
// Queries are lock-free: they read buckets as std::atomic<uint64_t> words
// with relaxed loads; a cell never moves and each update rewrites one 16-bit
// cell inside one word, so a reader sees each cell whole (old or new value),
// and a key whose Insert happened before the query is found (per-word
// coherence).
// Insert and Erase serialize among themselves on an internal mutex (Insert is
// a read-decide-write sequence). Tested under ThreadSanitizer.
#ifndef BLOCKBLOOM_DLEFT_COUNTING_BLOOM_H_
#define BLOCKBLOOM_DLEFT_COUNTING_BLOOM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace blockbloom {

struct DleftStats {
  uint64_t keys = 0;                  // successful inserts minus successful erases
  uint64_t occupied_cells = 0;        // cells with counter > 0
  uint64_t full_bucket_failures = 0;  // Insert refused: all d buckets full
  uint64_t counter_overflows = 0;     // Insert refused: counter at 3
  uint64_t memory_bytes = 0;          // the tables
  double load = 0.0;                  // occupied_cells / all cells
  double estimated_fpr = 0.0;         // occupied / (B * 2^r), see Create
};

class DleftCountingBloomFilter {
 public:
  static constexpr int kSubtables = 4;       // d
  static constexpr int kCellsPerBucket = 8;  // w
  static constexpr int kRemainderBits = 14;  // r
  static constexpr int kCounterBits = 2;
  static constexpr uint32_t kMaxCount = 3;
  static constexpr int kBucketBytes = kCellsPerBucket * 2;  // 16
  // Design load: 6 keys per bucket (paper s.3).
  static constexpr int kDesignKeysPerBucket = 6;
  static constexpr int kMaxLog2Buckets = 32;  // 4 * 2^32 buckets = 256 GiB

  // The smallest power-of-two B with expected_keys <= 6*d*B (design load) and
  // model FPR expected_keys / (B * 2^r) <= target_fpr (clamped to
  // [1e-7, 1]; NaN means 1%). ResourceExhausted beyond kMaxLog2Buckets or
  // out of memory.
  static absl::StatusOr<std::unique_ptr<DleftCountingBloomFilter>> Create(uint64_t expected_keys,
                                                                          double target_fpr);
  static constexpr int kMaxSegments = 15;

  // Exactly segments * 2^log2_buckets buckets per subtable: InvalidArgument
  // when log2_buckets < 0 or segments is outside [1, kMaxSegments],
  // ResourceExhausted above kMaxLog2Buckets or out of memory.
  static absl::StatusOr<std::unique_ptr<DleftCountingBloomFilter>> CreateWithGeometry(
      int log2_buckets, int segments = 1);

  DleftCountingBloomFilter(const DleftCountingBloomFilter&) = delete;
  DleftCountingBloomFilter& operator=(const DleftCountingBloomFilter&) = delete;

  // OK, or ResourceExhausted (bucket full / counter overflow; nothing changed).
  absl::Status Insert(std::string_view key);
  absl::Status InsertHash(uint64_t hash);
  // OK, or NotFound when no cell holds the key's fingerprint (nothing changed).
  absl::Status Erase(std::string_view key);
  absl::Status EraseHash(uint64_t hash);

  bool MayContain(std::string_view key) const;
  bool MayContainHash(uint64_t hash) const;
  // Starts loading the d candidate buckets of the key with this hash into the
  // cache, for a caller that will query, insert or erase it shortly (so the d
  // misses overlap other work). A hint: changes nothing, never faults.
  void PrefetchHash(uint64_t hash) const;
  // Batch queries; REQUIRES out.size() == input size.
  void MayContainKeys(absl::Span<const std::string_view> keys, absl::Span<bool> out) const;
  void MayContainHashes(absl::Span<const uint64_t> hashes, absl::Span<bool> out) const;

  // The counter of the cell holding the key's fingerprint, 0 if none.
  uint32_t Count(std::string_view key) const;

  DleftStats stats() const;
  // Successful inserts minus successful erases (stats().keys), starting from
  // FromTables' num_keys; saturates at 0 and 2^64 - 1, never wraps.
  uint64_t num_keys() const { return keys_.load(std::memory_order_relaxed); }
  int log2_buckets() const { return log2_buckets_; }
  int segments() const { return segments_; }
  uint64_t buckets_per_subtable() const { return uint64_t(segments_) << log2_buckets_; }
  // Keys at the design load (6 per bucket).
  uint64_t design_capacity() const {
    return uint64_t{kDesignKeysPerBucket} * kSubtables * buckets_per_subtable();
  }
  uint64_t memory_bytes() const { return num_buckets_ * sizeof(Bucket); }

  // Persistence (used by FilteredDB's index file, docs/FORMAT.md). The tables
  // as memory_bytes() bytes: each bucket's two 64-bit words, little-endian,
  // in bucket order. Not self-describing: the caller stores log2_buckets(),
  // segments(), num_keys(), a version and a checksum. REQUIRES: no concurrent
  // Insert/Erase.
  void AppendTables(std::string* out) const;
  // The filter AppendTables saved; InvalidArgument when `tables` is not
  // exactly 16 * d * segments * 2^log2_buckets bytes (or the geometry is
  // invalid). Any bytes of that size load (the caller's checksum guards their
  // meaning); occupancy is recounted.
  static absl::StatusOr<std::unique_ptr<DleftCountingBloomFilter>> FromTables(
      int log2_buckets, uint64_t num_keys, std::string_view tables, int segments = 1);

 private:
  struct alignas(16) Bucket {
    std::atomic<uint64_t> words[2];  // cell c is bits [16*(c%4), +16) of words[c/4]
  };
  static_assert(sizeof(Bucket) == kBucketBytes, "a bucket is 8 16-bit cells");

  // Where a key lives in each subtable.
  struct Candidates {
    uint64_t bucket[kSubtables];  // index into buckets_
    uint16_t tag[kSubtables];     // remainder << 2
  };
  // Up to 64 keys' buckets copied out of the atomics for the vector scan.
  struct Scan;
  // One key's d buckets, copied out and scanned.
  struct KeyScan;

  DleftCountingBloomFilter(int log2_buckets, int segments);
  Candidates Locate(uint64_t hash) const;
  void Copy(const Candidates& c, uint16_t* cells) const;
  KeyScan ScanKey(const Candidates& c) const;
  void SetCell(uint64_t bucket, int cell, uint16_t value);
  void AddToKeysLocked(int delta);

  const int log2_buckets_;
  const int segments_;
  // Frees buckets_ (allocated on huge pages when large).
  struct BucketsFree {
    void operator()(Bucket* buckets) const noexcept;
  };
  // Subtable i, bucket j at [i * B + j].
  std::unique_ptr<Bucket[], BucketsFree> buckets_;
  uint64_t num_buckets_ = 0;
  std::mutex write_mu_;  // serializes Insert/Erase
  std::atomic<uint64_t> keys_{0};
  std::atomic<uint64_t> occupied_{0};
  std::atomic<uint64_t> full_failures_{0};
  std::atomic<uint64_t> overflows_{0};
};

}  // namespace blockbloom

#endif  // BLOCKBLOOM_DLEFT_COUNTING_BLOOM_H_
