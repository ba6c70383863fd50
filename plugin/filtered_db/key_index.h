// The set-of-live-keys index behind FilteredDB: an insert-only blocked Bloom
// "front" filter (FrontFilter, below) in front of a counting or d-left
// counting Bloom filter, keyed by 64-bit hashes of the keys: XXH3-64 under
// the index's own random seed (KeyIndex::HashOf).
//
// Why a seed. XXH3 with seed 0 (blockbloom::HashKey, every filter format's
// hash) is public: anyone can compute offline which keys share an index's
// buckets or fingerprints, and a writer who can choose keys could make every
// size a rebuild tries refuse them, leaving the index saturated (every Get
// passing through). Four keys sharing a 16-bit d-left cell's fingerprint at
// every size took 10 seconds of hashing to find; keys with one and the same
// XXH3 value take none (32-byte keys whose first 8 bytes are XXH3's default
// secret's zero its 16-byte mixer's product, whatever bytes 8-15 hold). So
// the seed keys the hash of the key bytes, not a remix of HashKey (which
// would keep equal values equal): under a seed drawn when the index is built
// (and saved with it), which keys collide is not known outside the process,
// and every rebuild draws a new one. XXH3 under a seed costs what it does
// under seed 0. (XXH3 is not a cryptographic function: this stops offline
// search, not an attacker who can read the process's memory.)
//
// Hot path. FilteredDB hashes a key once and hands the hash to every call
// here. The front filter's probe is inline (no call, no virtual dispatch):
// an absent key is almost always ruled out by it from ONE cache line, and
// only the keys it passes reach the counting filter (one virtual call).
//
// Thread-safety: queries (MayContain, Prefetch) are lock-free and safe with
// one concurrent writer; writers (Insert, Erase, Serialize) must not run
// concurrently with each other.
#ifndef BLOCKBLOOM_FILTERED_DB_KEY_INDEX_H_
#define BLOCKBLOOM_FILTERED_DB_KEY_INDEX_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "blockbloom/dleft_counting_bloom.h"
#include "blockbloom/filtered_db.h"
#include "common/large_allocator.h"
#include "common/xxh3_inline.h"
#include "range_reduction.h"

namespace blockbloom {

// An insert-only blocked Bloom filter over every key inserted since the
// index was built (deleted keys stay until the next rebuild: a superset of
// the live keys, so it may rule a key out on its own). One 64-byte block per
// key, k = 4 bits at 6 bits per key of capacity (Putze, Sanders, Singler,
// "Cache-, Hash- and Space-Efficient Bloom Filters", WEA 2007 s.3; model FPR
// BlockedBloomFpr(6, 4) = 5.75% at capacity, k = 4 the model's best at 6
// bits): an absent key costs one cache line instead of the counting filter's
// four (d-left) buckets, and only its false positives reach those. Why 6 bits:
// docs/FILTERED_DB.md, "Sizing". Bits are std::atomic words: one
// writer at a time (relaxed load and store), relaxed loads to query; a query
// that happens after an insert sees its bits (per-word coherence), as for the
// counting filters. The bit layout is part of the index file (docs/FORMAT.md).
class FrontFilter {
 public:
  static constexpr int kProbes = 4;
  static constexpr double kBitsPerKey = 6.0;

  explicit FrontFilter(uint64_t num_blocks) : blocks_(std::max<uint64_t>(num_blocks, 1)) {}
  static uint64_t BlocksFor(uint64_t capacity) {
    return std::max<uint64_t>(1, static_cast<uint64_t>(capacity * kBitsPerKey / 512.0) + 1);
  }

  // REQUIRES: no concurrent Insert (FilteredDB's writers hold its writer
  // mutex, and a rebuild fills a private index), so each word is updated with
  // a plain load and store; concurrent queries see each word old or new.
  void Insert(uint64_t hash) {
    Block& b = blocks_[BlockOf(hash)];
    uint64_t masks[8] = {};
    uint64_t bits = Mix(hash);
    for (int i = 0; i < kProbes; ++i, bits >>= 9) {
      const unsigned bit = bits & 511;
      masks[bit >> 6] |= uint64_t{1} << (bit & 63);
    }
    for (int w = 0; w < 8; ++w) {
      if (masks[w] != 0) {
        b.words[w].store(b.words[w].load(std::memory_order_relaxed) | masks[w],
                         std::memory_order_relaxed);
      }
    }
    inserted_.store(inserted_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  bool MayContain(uint64_t hash) const {
    const Block& b = blocks_[BlockOf(hash)];
    const uint64_t bits = Mix(hash);
    // Branchless and fully unrolled (constant shifts; ~5 instructions per
    // probe instead of a loop's ~10): AND together the probed bits, each
    // shifted to bit 0; the key may be present iff bit 0 stays set. Fewer
    // instructions per absent Get let more of the next Get run while this
    // one's line is still missing (measured: docs/FILTERED_DB.md).
    uint64_t all_set = ~uint64_t{0};
#pragma GCC unroll 4
    for (int i = 0; i < kProbes; ++i) {
      const unsigned bit = (bits >> (9 * i)) & 511;
      all_set &= b.words[bit >> 6].load(std::memory_order_relaxed) >> (bit & 63);
    }
    return (all_set & 1) != 0;
  }
  // Starts loading the key's block (a hint: never faults, changes nothing).
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&blocks_[BlockOf(hash)]); }

  uint64_t inserted() const { return inserted_.load(std::memory_order_relaxed); }
  uint64_t num_blocks() const { return blocks_.size(); }
  uint64_t memory_bytes() const { return blocks_.size() * sizeof(Block); }
  // Model FPR at the present load (BlockedBloomFpr over inserted()).
  double estimated_fpr() const;

  void Serialize(std::string* out) const;
  // Reads what Serialize wrote from the front of *in; null on a mismatch.
  static std::unique_ptr<FrontFilter> Deserialize(std::string_view* in);

 private:
  struct alignas(64) Block {
    std::atomic<uint64_t> words[8];
  };
  // Block: the high bits of the hash (multiply-shift range reduction).
  uint64_t BlockOf(uint64_t hash) const { return internal::FastRange64(hash, blocks_.size()); }
  // Bit positions: a remix of the hash (the SplitMix64 finaliser, Steele,
  // Lea, Flood, OOPSLA 2014), independent of the block choice and of the
  // counting filters' use of the same hash.
  static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  std::vector<Block, internal::LargeAllocator<Block>> blocks_;
  std::atomic<uint64_t> inserted_{0};
};

class KeyIndex {
 public:
  // The counting filter behind the front filter (key_index.cc: counting or
  // d-left). Same contracts as KeyIndex's methods of the same names.
  class Counting {
   public:
    virtual ~Counting() = default;
    virtual absl::Status Insert(uint64_t hash) = 0;
    virtual absl::Status Erase(uint64_t hash) = 0;
    virtual bool MayContain(uint64_t hash) const = 0;
    virtual void Prefetch(uint64_t hash) const = 0;
    virtual IndexKind kind() const = 0;
    virtual uint64_t keys() const = 0;
    virtual uint64_t capacity() const = 0;
    virtual uint64_t memory_bytes() const = 0;
    virtual double estimated_fpr() const = 0;
    virtual void Serialize(std::string* out) const = 0;
    // Whether Create(kind(), capacity(), target_fpr) builds this geometry.
    virtual bool BuiltFor(double target_fpr) const = 0;
  };

  // Memory budget (docs/FILTERED_DB.md, "Sizing"): a d-left index sized by
  // CapacityFor for n live keys takes at most BudgetBytes(n) (the counting
  // kind needs more per key at the same FPR: it is sized by the same rule
  // where it can be, and at least for the keys otherwise).
  static constexpr uint64_t kBudgetBytesPerKey = 4;
  static constexpr uint64_t kDefaultBudgetSlackBytes = 256 * 1024;
  // kBudgetBytesPerKey * live_keys + the slack (kDefaultBudgetSlackBytes
  // unless a test changed it: testing_hooks.h), saturating.
  static uint64_t BudgetBytes(uint64_t live_keys);
  // Model FPR of the front filter at capacity: BlockedBloomFpr(6, 4).
  static constexpr double kFrontFilterFpr = 0.0575;
  // The lowest target_fpr the d-left index's budget allows (its lower targets
  // are clamped to it; the counting kind's are not): the pair's FPR with 16-bit d-left cells at
  // their design load, 24 keys per bucket row over 2^14 remainders, times the front filter's;
  // 8.42e-5 at 3.42 bytes per key of capacity.
  static constexpr double kMinTargetFpr =
      DleftCountingBloomFilter::DesignKeysPerBucketRow(DleftCountingBloomFilter::kCellBits) /
      static_cast<double>(uint64_t{1} << DleftCountingBloomFilter::kRemainderBits) *
      kFrontFilterFpr;

  // The capacity to build for `live_keys`: the largest available size that
  // keeps the index within BudgetBytes(live_keys) and below max(4 *
  // live_keys, hint) keys, but at least live_keys * 33/32 + 1 (room
  // to grow before the next rebuild; small enough that the smallest size
  // above it, at most 1/8 larger, is within the budget: 3.42 * 33/32 * 9/8
  // = 3.96 bytes per key with 16-bit cells, 2.88 * 33/32 * 9/8 = 3.34 with
  // 12-bit ones). `hint` is FilteredDBOptions::
  // expected_keys: a database expected to grow large starts with a larger
  // index, never one beyond the budget.
  static uint64_t CapacityFor(IndexKind kind, uint64_t live_keys, uint64_t hint, double target_fpr);
  // An empty index holding at least `capacity` keys (the smallest available
  // size) with front filter and counting filter together at about
  // `target_fpr` (the pair's FPR at capacity).
  // Its keys are hashed under `seed` (HashOf; NewSeed for a new index).
  static absl::StatusOr<std::unique_ptr<KeyIndex>> Create(IndexKind kind, uint64_t capacity,
                                                          double target_fpr, uint64_t seed);
  // The index Serialize wrote (the "index payload" of docs/FORMAT.md);
  // InvalidArgument on any inconsistency, ResourceExhausted when out of
  // memory. The caller has checked the checksum.
  static absl::StatusOr<std::unique_ptr<KeyIndex>> Deserialize(std::string_view payload);

  // The index's hash of `key` under `seed`: XXH3-64 with that seed.
  static uint64_t HashOf(std::string_view key, uint64_t seed) {
    return internal::InlineHashBytesWithSeed(key.data(), key.size(), seed);
  }
  // A new index's seed: random (std::random_device), or the one a test fixed
  // (testing_hooks.h).
  static uint64_t NewSeed();

  KeyIndex(std::unique_ptr<Counting> counting, std::unique_ptr<FrontFilter> front, uint64_t seed)
      : counting_(std::move(counting)), front_(std::move(front)), seed_(seed) {
    const uint64_t half = memory_bytes() / 2, slack = BudgetBytes(0);
    shrink_below_ =
        memory_bytes() >= kMinShrinkBytes && half > slack ? (half - slack) / kBudgetBytesPerKey : 0;
  }

  // ResourceExhausted when the counting filter cannot hold the key (the front
  // filter has it anyway). REQUIRES: no concurrent Insert or Erase (FilteredDB
  // holds its writer mutex, or fills an index no other thread sees yet);
  // MayContain may run concurrently.
  // Every method below takes a key's HashOf under this index's seed.
  absl::Status Insert(uint64_t hash) {
    front_->Insert(hash);  // even if the counting filter refuses: a superset
    return counting_->Insert(hash);
  }
  // REQUIRES: hash was inserted and not erased since (see the filters' Erase).
  absl::Status Erase(uint64_t hash) { return counting_->Erase(hash); }
  bool MayContain(uint64_t hash) const {
    return front_->MayContain(hash) && counting_->MayContain(hash);
  }
  // The two stages of MayContain, for a caller that decides whether the
  // second is worth its cache misses (FilteredDB::Get). Either false means
  // absent.
  bool FrontMayContain(uint64_t hash) const { return front_->MayContain(hash); }
  bool CountingMayContain(uint64_t hash) const { return counting_->MayContain(hash); }
  // Starts loading every line a query, insert or erase of `hash` touches
  // (the front filter's block and the counting filter's buckets), so their
  // misses overlap each other and the caller's work until it probes.
  void Prefetch(uint64_t hash) const {
    front_->Prefetch(hash);
    counting_->Prefetch(hash);
  }
  uint64_t seed() const { return seed_; }

  IndexKind kind() const { return counting_->kind(); }
  // Whether Create(kind(), capacity(), target_fpr) builds an index of this
  // geometry: a saved index is reused only for the target it was built for
  // (the same d-left cells, or the same counters and k).
  bool BuiltFor(double target_fpr) const { return counting_->BuiltFor(target_fpr); }
  // Live keys (the counting filter's).
  uint64_t keys() const { return counting_->keys(); }
  // Keys it holds at its target FPR / design load; growth starts beyond it.
  uint64_t capacity() const { return counting_->capacity(); }
  uint64_t memory_bytes() const { return counting_->memory_bytes() + front_->memory_bytes(); }
  // Below this many live keys the index takes more than twice
  // BudgetBytes(keys()): FilteredDB rebuilds it smaller where CapacityFor
  // the keys is at most half its capacity (write_path.cc). 0 when it never
  // does (always below kMinShrinkBytes: a scan to save less is not worth it).
  static constexpr uint64_t kMinShrinkBytes = 4096;
  uint64_t shrink_below() const { return shrink_below_; }
  // The pair's: the front filter's model FPR times the counting filter's.
  double estimated_fpr() const { return front_->estimated_fpr() * counting_->estimated_fpr(); }
  // Keys inserted since it was built, deleted ones included (the front
  // filter's load; growth rebuilds it when churn has filled it).
  uint64_t inserted_since_build() const { return front_->inserted(); }
  // Appends the payload Deserialize reads. REQUIRES: no concurrent Insert/Erase.
  void Serialize(std::string* out) const;

 private:
  std::unique_ptr<Counting> counting_;
  std::unique_ptr<FrontFilter> front_;
  uint64_t seed_;
  uint64_t shrink_below_ = 0;
};

}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTERED_DB_KEY_INDEX_H_
