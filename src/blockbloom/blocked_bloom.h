// A cache-line-blocked Bloom filter: each key's k bits live in one 512-bit
// block, so a probe touches one cache line. The structure, its hash and its
// serialized bytes (version 1) are those of the LevelDB policy's filters of
// millions of keys (blockbloom/leveldb_filter_policy.h; smaller ones are
// flat, version 2); docs/FORMAT.md draws the layout.
//
//   auto filter = blockbloom::BlockedBloomFilter::Create(1'000'000, 10.0);
//   filter->AddKey("apple");
//   filter->MayContain("apple");   // true: no false negatives, ever
//   filter->MayContain("pear");    // false, except ~0.96% of the time
//
//   auto sized = blockbloom::BlockedBloomFilter::CreateForFpr(20, 1e-5);  // any n
//
// Thread-safety: const methods (queries, Serialize) may run concurrently with
// each other. Add* and assignment need exclusive access: no reader or writer
// may run at the same time.
#ifndef BLOCKBLOOM_BLOCKED_BLOOM_H_
#define BLOCKBLOOM_BLOCKED_BLOOM_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "blockbloom/simd/blocked_kernel.h"  // blocked::ProbeArgs (not an API)

namespace blockbloom {

// bits_per_key is clamped into [kMinBitsPerKey, kMaxBitsPerKey]; NaN means
// kDefaultBitsPerKey. Clamping is the documented answer to a bad argument
// everywhere a bits-per-key is accepted.
inline constexpr double kMinBitsPerKey = 1.0;
inline constexpr double kMaxBitsPerKey = 64.0;
inline constexpr double kDefaultBitsPerKey = 10.0;
double ClampBitsPerKey(double bits_per_key);

// k for a (clamped) bits-per-key: the minimiser of the blocked filter's
// Poisson-mixture FPR (blockbloom/math.h). 7 at 10 bits/key. The search
// (16 model evaluations) runs once per distinct bits-per-key per process;
// later calls read a cache (thread-safe).
int BlockedBloomProbes(double bits_per_key);

// Size of the filter bits for n keys: ceil(n * bits_per_key / 8) bytes, with
// bits_per_key clamped. The serialized filter adds a 3-byte trailer.
uint64_t BlockedBloomBytes(uint64_t num_keys, double bits_per_key);

// Predicted FPR of a filter of `num_bytes` bytes holding `num_keys` keys
// (512-bit blocks, the last one as short as the size makes it). Filters of
// up to 64 blocks (4 KiB) are modelled exactly, binomial loads, the short
// last block and the spread of set bits within a block included, within a
// bound on the work (past it, as at a few hundred keys and 16-24 bits/key,
// their full blocks take the mixture below: ~10% off); larger ones by the
// Poisson mixture of blockbloom/math.h (BlockedBloomFpr) for their full
// blocks, plus their short block exactly. The mixture alone gives 1/7 of
// the measured FPR at 50 keys and 32 bits/key and 1.4x it at 5 keys and 16
// (blocked_bloom_test, PredictedFprFollowsSmallFilters). In [0, 1] for any
// arguments, in bounded time (at most 2 * kMaxModelTerms terms' worth of
// work: the file and table readers call it on claimed key counts).
double BlockedBloomPredictedFpr(uint64_t num_keys, uint64_t num_bytes, int num_probes);

// Allocation options of a standalone filter.
struct BlockedBloomOptions {
  // Back filters of at least kHugePageMinBytes with transparent huge pages
  // (2 MiB-aligned allocation + madvise(MADV_HUGEPAGE), Linux only; elsewhere
  // or if the kernel refuses, ordinary pages). A random probe of a large
  // filter then rarely misses the TLB (kernel_bench's *-hugepages rows
  // measure it beside the same probes on ordinary pages).
  bool huge_pages = false;
};
inline constexpr uint64_t kHugePageMinBytes = uint64_t{4} << 20;

class BlockedBloomFilter {
 public:
  // An empty filter sized for `expected_keys` at `bits_per_key` (clamped).
  // ResourceExhausted if the size does not fit in memory.
  static absl::StatusOr<BlockedBloomFilter> Create(uint64_t expected_keys, double bits_per_key,
                                                   const BlockedBloomOptions& options = {});
  // Sized for `expected_keys` at false-positive rate `fpr` (in (0, 1), else
  // InvalidArgument; OutOfRange below what 64 bits per key reach), by
  // GeometryForFpr.
  static absl::StatusOr<BlockedBloomFilter> CreateForFpr(uint64_t expected_keys, double fpr,
                                                         const BlockedBloomOptions& options = {});
  // The geometry CreateForFpr uses, without allocating: the bytes of
  // BlockedBitsPerKeyForFpr(fpr) for the keys where BlockedBloomPredictedFpr
  // (the whole filter, its short last block included) meets `fpr`; else the
  // next larger size that does (for a filter under 512 bytes, byte by byte
  // up to the end of its last block; then whole 64-byte blocks), each size
  // with the k best for its bits per key. Filters of more than 64 blocks
  // keep the bits-per-key size or gain at most 63 bytes; smaller ones may
  // gain more (20 keys at 1e-5: 82 bytes, where the 74 of 29.6 bits/key give
  // 5x the target). Up to the end of the last block costs no memory: a
  // filter's bits are allocated in whole blocks anyway. InvalidArgument for
  // fpr outside (0, 1); OutOfRange below what 64 bits per key reach (or if
  // 64 blocks past the size do not reach it); ResourceExhausted for a size
  // whose bits do not fit in 64 bits.
  struct Geometry {
    uint64_t num_bytes;
    int num_probes;
  };
  static absl::StatusOr<Geometry> GeometryForFpr(uint64_t expected_keys, double fpr);
  // A filter of exactly `num_bytes` filter bytes and k probes (1..16).
  static absl::StatusOr<BlockedBloomFilter> CreateWithGeometry(
      uint64_t num_bytes, int num_probes, const BlockedBloomOptions& options = {});
  static absl::StatusOr<BlockedBloomFilter> BuildFromKeys(absl::Span<const std::string_view> keys,
                                                          double bits_per_key);
  static absl::StatusOr<BlockedBloomFilter> BuildFromHashes(absl::Span<const uint64_t> hashes,
                                                            double bits_per_key);
  // Parses the output of Serialize() (or a LevelDB policy's filter, version 1
  // or 2) into an owned copy. DataLoss on a malformed trailer (it is then not
  // a filter this library wrote); ResourceExhausted if it cannot be copied.
  // The trailer holds no length or checksum: bits flipped, or bytes lost
  // from the front, under a well-formed trailer read as a valid filter that
  // can miss keys. Bytes kept outside LevelDB (whose blocks are checksummed)
  // belong in a filter file (blockbloom/filter_file.h), which checks them.
  // A version-2 (flat, small) filter keeps its geometry: its probes, adds and
  // Serialize() follow it. Filters this class creates are version 1.
  static absl::StatusOr<BlockedBloomFilter> Deserialize(std::string_view encoded);

  // A moved-from filter keeps no bits and may match every key: its probes
  // answer "may match" (never a false negative, whatever it held before),
  // Serialize() writes the 1-byte filter with every bit set, and Add*
  // count their keys and change nothing. It may be assigned to, used or
  // destroyed.
  BlockedBloomFilter(BlockedBloomFilter&& other) noexcept;
  BlockedBloomFilter& operator=(BlockedBloomFilter&& other) noexcept;

  // Adding to a filter sized for 0 keys (0 bytes, the empty set) turns it into
  // a 1-byte filter that may match every key: never a false negative.
  void AddKey(std::string_view key);
  void AddHash(uint64_t hash);
  void AddKeys(absl::Span<const std::string_view> keys);
  void AddHashes(absl::Span<const uint64_t> hashes);  // SIMD, dispatched

  // Single-key probes: the key's line is tested in vector registers on the
  // CPU's best Highway target, XXH3 inlined. Each is one indirect call
  // through a pointer the filter chose when it was made (the target's
  // kernel, the flat kernel or the empty set's answer), passed the key and
  // the filter's probe arguments by one pointer: no per-probe dispatch, no
  // branch on the geometry. (simd::ForceTargetForTesting affects filters
  // made after it.)
  bool MayContain(std::string_view key) const {
    return probe_key_(&probe_args_, key.data(), key.size());
  }
  bool MayContainHash(uint64_t hash) const { return probe_hash_(&probe_args_, hash); }
  // Batch probes: out[i] answers for keys[i] / hashes[i]. Blocks are
  // prefetched `window` keys ahead (1..1024), which is what makes probes of
  // filters larger than the caches fast. REQUIRES: out.size() == input size.
  void MayContainKeys(absl::Span<const std::string_view> keys, absl::Span<bool> out,
                      size_t window = 64) const;
  void MayContainHashes(absl::Span<const uint64_t> hashes, absl::Span<bool> out,
                        size_t window = 64) const;

  // Filter bytes followed by the 3-byte trailer (docs/FORMAT.md).
  std::string Serialize() const;

  uint64_t num_bytes() const { return probe_args_.total_bits / 8; }
  uint64_t num_bits() const { return probe_args_.total_bits; }
  int num_probes() const { return probe_args_.num_probes; }
  // Keys added through this object (not persisted; Deserialize gives 0).
  uint64_t num_added() const { return num_added_; }
  // Whether the bits were madvise'd for huge pages (BlockedBloomOptions).
  bool huge_pages() const { return huge_pages_; }
  // Whether the bits use the flat geometry of format version 2 (only filters
  // from Deserialize of a version-2 filter do).
  bool flat() const { return probe_args_.flat; }
  // The num_bytes() filter bytes (padded with zeros to whole 64-byte blocks).
  const uint8_t* data() const { return probe_args_.data; }

 private:
  struct AlignedFree {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  // The signatures of the library's per-target probes.
  using ProbeHashFn = bool (*)(const blocked::ProbeArgs* args, uint64_t hash);
  using ProbeKeyFn = bool (*)(const blocked::ProbeArgs* args, const char* key, size_t key_len);

  BlockedBloomFilter(std::unique_ptr<uint8_t[], AlignedFree> bits, uint64_t num_bytes,
                     int num_probes, bool huge_pages);
  // Before Add*: false if there is nothing to write (no bits of its own: a
  // moved-from filter, which matches everything already); a filter of 0
  // bytes (the empty set) becomes a 1-byte filter that matches everything.
  bool PrepareToAdd();
  // What a move leaves behind: no bits, the 1-byte filter that matches
  // everything (read from a shared constant block).
  void BecomeMatchEverything();
  // The geometry of bits_ (num_bytes unpadded): fills probe_args_ and
  // points the probes at its kernels. Called whenever bits_ or the geometry
  // changes, after bits_ is set (null: the shared all-ones block).
  void SetGeometry(uint64_t num_bytes, int num_probes, bool flat);

  std::unique_ptr<uint8_t[], AlignedFree> bits_;  // padded to whole blocks
  // The filter's geometry, as the probes read it: data is bits_.get() (or,
  // without bits, the shared all-ones block), total_bits 8 * the unpadded
  // bytes. Only SetGeometry writes it.
  blocked::ProbeArgs probe_args_;
  ProbeHashFn probe_hash_ = nullptr;
  ProbeKeyFn probe_key_ = nullptr;
  uint64_t num_added_ = 0;
  bool huge_pages_ = false;
};

}  // namespace blockbloom

#endif  // BLOCKBLOOM_BLOCKED_BLOOM_H_
