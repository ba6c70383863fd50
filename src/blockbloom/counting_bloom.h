// A blocked counting Bloom filter: a Bloom filter that supports deletion.
//
// Geometry. The filter is an array of 64-byte blocks (one cache line each);
// a block holds 128 four-bit counters, counter j being bits [4*(j%16), +4) of
// little 64-bit word j/16. A key with 64-bit hash h (blockbloom::HashKey):
//  - uses block FastRange64(h, num_blocks) (multiply-shift, the high bits of h;
//    as the blocked filter does),
//  - and the k counters x_i >> 25 (the top 7 bits) of the probe sequence
//      x_0 = low32(h),  x_{i+1} = x_i * 0x9E3779B9 (mod 2^32),
//    the blocked Bloom filter's sequence. Two probes of a key may hit the same
//    counter; Insert then adds 2 to it and Erase takes 2 away, so the
//    bookkeeping stays exact.
// So a probe touches one cache line, and the FPR is that of a blocked Bloom
// filter with 128-bit blocks (blockbloom/math.h, Putze et al. WEA 2007 s.3)
// evaluated at c = counters per key. Memory is 4c bits per key.
//
// Saturation. Four-bit counters count to 15. A counter that reaches 15 is
// "saturated" and never changes again, neither up nor down: once it has been
// asked to count past 15 its true count is unknown, and decrementing it could
// reach 0 while keys that set it are still present -- a false negative. A
// saturated counter costs only FPR (it reads as "present" forever). With c >= 4
// counters per key, a counter reaches 15 with probability far below 1e-9 per
// counter unless the same key is inserted many times; stats() reports how many
// counters saturated.
//
// Erase. Erase(key) REQUIRES that key was inserted (and not yet erased as
// often as it was inserted). Erasing a key that was never inserted can break
// the no-false-negative promise: its counters are shared with other keys, and
// taking them down can bring one to 0 under a key that is still present. Erase
// refuses (NotFound, nothing changed) only when the filter proves the key is
// absent; a never-inserted key that is a false positive gets through. Callers
// that cannot guarantee the precondition must keep their own exact record of
// what is present (blockbloom/filtered_db.h does).
//
// Thread-safety: every method may be called from any thread at any time,
// except AppendCounters (no concurrent Insert/Erase: its bytes are one state).
// Counters live in std::atomic<uint64_t> words: queries read whole words with
// relaxed loads (no torn counter), and Insert/Erase update a word with a
// compare-and-swap loop, so concurrent writers cannot lose each other's
// updates. A query that starts after Insert(key) returned (happens-after)
// sees every counter of key at >= 1 until an Erase(key): per-word coherence
// is all that needs. A query concurrent with Insert/Erase of the same key may
// answer either way. Tested under ThreadSanitizer.
#ifndef BLOCKBLOOM_COUNTING_BLOOM_H_
#define BLOCKBLOOM_COUNTING_BLOOM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace blockbloom {

struct CountingBloomStats {
  uint64_t keys = 0;                // inserts minus successful erases
  uint64_t saturated_counters = 0;  // counters stuck at 15
  uint64_t underflows = 0;          // decrements that found a 0 (caller bug)
  uint64_t memory_bytes = 0;        // counter array
  double estimated_fpr = 0.0;       // model at the current key count
};

class CountingBloomFilter {
 public:
  static constexpr int kCounterBits = 4;
  static constexpr uint32_t kMaxCount = 15;  // saturated: sticky
  static constexpr uint32_t kCountersPerBlock = 128;
  static constexpr uint32_t kBlockBytes = 64;
  static constexpr int kMaxProbes = 16;
  // Counters per key are clamped into [kMinCountersPerKey, kMaxCountersPerKey];
  // NaN means kDefaultCountersPerKey.
  static constexpr double kMinCountersPerKey = 1.0;
  static constexpr double kMaxCountersPerKey = 64.0;
  static constexpr double kDefaultCountersPerKey = 10.0;

  // A filter for `expected_keys` at `counters_per_key` (clamped; k chosen by
  // the Poisson-mixture model). At least one block. ResourceExhausted if the
  // size does not fit in memory.
  static absl::StatusOr<std::unique_ptr<CountingBloomFilter>> Create(uint64_t expected_keys,
                                                                     double counters_per_key);
  // The fewest counters per key (in steps of 1/4) whose model FPR at
  // `expected_keys` is <= target_fpr; target_fpr is clamped to [1e-6, 0.5]
  // (NaN means 1%).
  static absl::StatusOr<std::unique_ptr<CountingBloomFilter>> CreateForFpr(uint64_t expected_keys,
                                                                           double target_fpr);
  // Exactly `num_blocks` (>= 1) blocks and k = num_probes (1..16) probes.
  static absl::StatusOr<std::unique_ptr<CountingBloomFilter>> CreateWithGeometry(
      uint64_t num_blocks, int num_probes);

  // Counters per key needed for target_fpr, as CreateForFpr chooses it.
  static double CountersPerKeyForFpr(double target_fpr);
  // What Create(expected_keys, counters_per_key) allocates, computed without
  // allocating: num_blocks 0 where Create returns ResourceExhausted.
  struct Geometry {
    uint64_t num_blocks = 0;
    int num_probes = 0;
  };
  static Geometry GeometryFor(uint64_t expected_keys, double counters_per_key);
  // Model FPR for c counters per key with the k the filter would choose.
  static double ModelFpr(double counters_per_key);

  CountingBloomFilter(const CountingBloomFilter&) = delete;
  CountingBloomFilter& operator=(const CountingBloomFilter&) = delete;

  void Insert(std::string_view key);
  void InsertHash(uint64_t hash);
  // See "Erase" above. NotFound (and no change) when the key is certainly
  // absent; OK otherwise.
  absl::Status Erase(std::string_view key);
  absl::Status EraseHash(uint64_t hash);

  bool MayContain(std::string_view key) const;
  bool MayContainHash(uint64_t hash) const;
  // Starts loading the block of the key with this hash into the cache, for a
  // caller that will query, insert or erase it shortly. A hint: changes
  // nothing, never faults.
  void PrefetchHash(uint64_t hash) const;
  // out[i] answers for keys[i] / hashes[i]; blocks are prefetched a window of
  // 32 keys ahead. REQUIRES: out.size() == input size.
  void MayContainKeys(absl::Span<const std::string_view> keys, absl::Span<bool> out) const;
  void MayContainHashes(absl::Span<const uint64_t> hashes, absl::Span<bool> out) const;

  // The smallest of the key's k counters: an upper bound on how many times it
  // is present (15 means "at least 15, or saturated").
  uint32_t CountUpperBound(std::string_view key) const;

  CountingBloomStats stats() const;
  // Inserts minus successful erases (stats().keys, without the FPR model),
  // starting from FromCounters' num_keys; saturates at 0 and 2^64 - 1.
  uint64_t num_keys() const { return keys_.load(std::memory_order_relaxed); }
  uint64_t num_blocks() const { return num_blocks_; }
  int num_probes() const { return num_probes_; }
  uint64_t memory_bytes() const { return num_blocks_ * kBlockBytes; }

  // Persistence (used by FilteredDB's index file, docs/FORMAT.md). The
  // counters as memory_bytes() bytes: each block's eight 64-bit words,
  // little-endian, in block order. Not self-describing: the caller stores
  // num_blocks(), num_probes(), num_keys(), a version and a checksum.
  // REQUIRES: no concurrent Insert/Erase.
  void AppendCounters(std::string* out) const;
  // The filter AppendCounters saved; InvalidArgument when the geometry is out
  // of range or `counters` is not exactly 64 * num_blocks bytes. Saturated
  // counters are recounted.
  static absl::StatusOr<std::unique_ptr<CountingBloomFilter>> FromCounters(
      uint64_t num_blocks, int num_probes, uint64_t num_keys, std::string_view counters);

 private:
  struct alignas(64) Block {
    std::atomic<uint64_t> words[8];
  };
  static_assert(sizeof(Block) == kBlockBytes, "a block is one cache line");

  explicit CountingBloomFilter(int num_probes);  // no table yet: CreateWithGeometry makes it
  // Adds `delta` (+1 or -1) to each of the key's k counters, leaving saturated
  // counters alone and counting (not wrapping) a decrement of a 0.
  void Update(uint64_t hash, int delta);
  // keys_ + delta (+1 or -1), saturating at 0 and 2^64 - 1 instead of
  // wrapping (FromCounters takes any stored count). Lock-free: concurrent
  // inserts and erases each land once.
  void StepKeys(int delta);

  // Frees blocks_ (allocated on huge pages when large).
  struct BlocksFree {
    void operator()(Block* blocks) const noexcept;
  };
  std::unique_ptr<Block[], BlocksFree> blocks_;
  uint64_t num_blocks_ = 0;
  int num_probes_;
  std::atomic<uint64_t> keys_{0};
  std::atomic<uint64_t> saturated_{0};
  std::atomic<uint64_t> underflows_{0};
};

}  // namespace blockbloom

#endif  // BLOCKBLOOM_COUNTING_BLOOM_H_
