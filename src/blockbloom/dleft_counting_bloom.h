// A d-left counting Bloom filter (dlCBF): Bonomi, Mitzenmacher, Panigrahy,
// Singh, Varghese, "An Improved Construction for Counting Bloom Filters",
// ESA 2006. A counting filter that stores fingerprints in a d-left hash table
// instead of counters in a bit array: at equal memory its FPR is far lower
// than a counting Bloom filter's (docs/FILTERED_DB.md records the figures
// and the benchmark that measures them).
//
// Structure (paper s.3). d = 4 subtables of B = s * 2^b buckets each (s, the
// segments, 1..15: sizes between the powers of two); a bucket is 128 bits
// of w cells, cell = (remainder << 2) | counter:
//   - 16-bit cells (the default): w = 8, remainder r = 14 bits;
//   - 12-bit cells: w = 10, r = 10 (5 cells in each 64-bit word);
//   - counter: 2 bits, 0 = empty cell, 1..3 = how many inserted keys share
//     this fingerprint.
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
// remainder, that cell's counter is incremented (so with 16-bit cells one
// fingerprint never occupies two cells; 12-bit cells take a new one past a
// count of 3, see Insert); otherwise the remainder goes to the least-loaded of
// the d candidate buckets, leftmost on ties (d-left, Voecking 1999). Erase
// decrements the cell. Query: any subtable's candidate bucket holds the
// key's remainder. A bucket's cells are unpacked to 16 bits each and
// compared 8 at a time with one 128-bit vector compare (simd/dleft-inl.h,
// every Highway target): one compare for 16-bit cells, two for 12-bit.
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
// cells are in use, and the FPR shrinks with the load. 12-bit cells trade
// FPR for memory: 10 cells per bucket, 7.5 keys per bucket at 75%, FPR ~=
// 30 / 1024 = 2.9% at 17.1 bits per key (FilteredDB picks them when the
// target allows: docs/FILTERED_DB.md, "Sizing").
// The 2-bit counter reaches 3 only when 3 keys share a whole F-bit
// fingerprint: with unique keys (the FilteredDB index), about n^3 / 2^(2F+1);
// a fourth one, about n^4 / (24 * 2^(3F)): negligible at r = 14, about one
// per 1.4M keys at r = 10 (dleft_width_bench: 11 in 15.7M keys).
//
// Failure is loud, never silent: Insert returns ResourceExhausted when all d
// candidate buckets are full or (16-bit cells) the key's counter is at 3,
// changes nothing,
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
  static constexpr int kSubtables = 4;  // d
  static constexpr int kCounterBits = 2;
  static constexpr uint32_t kMaxCount = 3;
  static constexpr int kBucketBytes = 16;  // every layout: one 128-bit word
  // The cell layouts. A bucket is two 64-bit words either way.
  //   16-bit cells (the default): w = 8 cells, 4 per word at bits 16j,
  //     r = 14; design load 6 keys per bucket (75%, paper s.3).
  //   12-bit cells: w = 10 cells, 5 per word at bits 12j (bits 60-63 of each
  //     word unused), r = 10; design load 7.5 keys per bucket (75%).
  // Both encode a cell as (remainder << 2) | counter.
  static constexpr int kCellBits = 16;
  static constexpr int kCellsPerBucket = 8;  // w, 16-bit cells
  static constexpr int kRemainderBits = 14;  // r, 16-bit cells
  static constexpr int kDesignKeysPerBucket = 6;
  static constexpr int kNarrowCellBits = 12;
  static constexpr int kNarrowCellsPerBucket = 10;
  static constexpr int kNarrowRemainderBits = 10;
  // Keys per bucket of every subtable together (d * keys per bucket) at the
  // design load, per layout: 24 and 30.
  static constexpr int DesignKeysPerBucketRow(int cell_bits) {
    return cell_bits == kNarrowCellBits ? 30 : kDesignKeysPerBucket * kSubtables;
  }
  static constexpr int RemainderBitsOf(int cell_bits) { return cell_bits - kCounterBits; }
  static constexpr int kMaxLog2Buckets = 32;  // 4 * 2^32 buckets = 256 GiB

  // The smallest power-of-two B with expected_keys <= 6*d*B (design load) and
  // model FPR expected_keys / (B * 2^r) <= target_fpr (clamped to
  // [1e-7, 1]; NaN means 1%). ResourceExhausted beyond kMaxLog2Buckets or
  // out of memory.
  static absl::StatusOr<std::unique_ptr<DleftCountingBloomFilter>> Create(uint64_t expected_keys,
                                                                          double target_fpr);
  static constexpr int kMaxSegments = 15;

  // Exactly segments * 2^log2_buckets buckets per subtable of cells of
  // cell_bits (kCellBits or kNarrowCellBits): InvalidArgument when
  // log2_buckets < 0, segments is outside [1, kMaxSegments] or cell_bits is
  // neither, ResourceExhausted above kMaxLog2Buckets or out of memory.
  static absl::StatusOr<std::unique_ptr<DleftCountingBloomFilter>> CreateWithGeometry(
      int log2_buckets, int segments = 1, int cell_bits = kCellBits);

  DleftCountingBloomFilter(const DleftCountingBloomFilter&) = delete;
  DleftCountingBloomFilter& operator=(const DleftCountingBloomFilter&) = delete;

  // OK, or ResourceExhausted (bucket full / counter overflow; nothing
  // changed). With 12-bit cells a key whose fingerprint's cell is at 3 takes
  // another cell (one with the same fingerprint below 3, else a new one, as
  // a new fingerprint would): 10-bit remainders make four keys on one whole
  // fingerprint common in a large table (dleft_width_bench: 11 at 15.7M
  // keys), and all cells of one fingerprint stand for indistinguishable
  // keys, so Erase may decrement any of them. Only a full bucket refuses.
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

  // The counters of the cells holding the key's fingerprint, summed; 0 if none.
  uint32_t Count(std::string_view key) const;

  DleftStats stats() const;
  // Successful inserts minus successful erases (stats().keys), starting from
  // FromTables' num_keys; saturates at 0 and 2^64 - 1, never wraps.
  uint64_t num_keys() const { return keys_.load(std::memory_order_relaxed); }
  int log2_buckets() const { return log2_buckets_; }
  int segments() const { return segments_; }
  int cell_bits() const { return cell_bits_; }
  int cells_per_bucket() const { return cells_; }
  int remainder_bits() const { return remainder_bits_; }
  uint64_t buckets_per_subtable() const { return uint64_t(segments_) << log2_buckets_; }
  // Keys at the design load (75% of the cells).
  uint64_t design_capacity() const {
    return static_cast<uint64_t>(DesignKeysPerBucketRow(cell_bits_)) * buckets_per_subtable();
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
  // meaning; the unused bits of 12-bit layouts are ignored); occupancy is
  // recounted.
  static absl::StatusOr<std::unique_ptr<DleftCountingBloomFilter>> FromTables(
      int log2_buckets, uint64_t num_keys, std::string_view tables, int segments = 1,
      int cell_bits = kCellBits);

 private:
  struct alignas(16) Bucket {
    // 16-bit cells: cell c is bits [16*(c%4), +16) of words[c/4];
    // 12-bit cells: bits [12*(c%5), +12) of words[c/5].
    std::atomic<uint64_t> words[2];
  };
  static_assert(sizeof(Bucket) == kBucketBytes, "a bucket is 128 bits");

  // Where a key lives in each subtable.
  struct Candidates {
    uint64_t bucket[kSubtables];  // index into buckets_
    uint16_t tag[kSubtables];     // remainder << 2
  };
  // Up to 64 keys' buckets copied out of the atomics for the vector scan.
  struct Scan;
  // One key's d buckets, copied out and scanned.
  struct KeyScan;

  DleftCountingBloomFilter(int log2_buckets, int segments, int cell_bits);
  Candidates Locate(uint64_t hash) const;
  void Copy(const Candidates& c, uint16_t* cells) const;
  KeyScan ScanKey(const Candidates& c) const;
  void SetCell(uint64_t bucket, int cell, uint16_t value);
  void AddToKeysLocked(int delta);

  const int log2_buckets_;
  const int segments_;
  const int cell_bits_;
  const int cells_;           // w
  const int remainder_bits_;  // r
  const int stride_;          // cells per bucket in a scan: 8 or 16
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
