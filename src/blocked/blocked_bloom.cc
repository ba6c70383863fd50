#include "blockbloom/blocked_bloom.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "blockbloom/hash.h"
#include "common/coding.h"
#include "blockbloom/math.h"
#include "blocked/format.h"
#include "blocked/key_probe.h"
#include "blocked_bloom_simd.h"
#include "blocked_kernel.h"
#include "common/hash_slices.h"
#include "common/model_work.h"
#include "common/xxh3_inline.h"

namespace blockbloom {

double ClampBitsPerKey(double bits_per_key) {
  if (std::isnan(bits_per_key)) return kDefaultBitsPerKey;
  return std::clamp(bits_per_key, kMinBitsPerKey, kMaxBitsPerKey);
}

int BlockedBloomProbes(double bits_per_key) {
  const double clamped = ClampBitsPerKey(bits_per_key);
  // The model search is 16 Poisson-mixture sums; its answer depends on the clamped value
  // alone, so it is computed once per distinct value and cached (bounded: a
  // program sweeping millions of distinct values keeps searching, correctly).
  // Whole bits-per-key values (10, the usual) are read without a lock: a
  // filter of a few keys is built in a few hundred ns, and the mutex and
  // map lookup were a tenth of that (perf, kernel_bench build/class-best/20).
  // Racing threads store the same k.
  static std::atomic<int8_t> whole[static_cast<int>(kMaxBitsPerKey) + 1] = {};
  const bool is_whole = clamped == std::floor(clamped);
  if (is_whole) {
    const int k = whole[static_cast<int>(clamped)].load(std::memory_order_relaxed);
    if (k != 0) return k;
  }
  static std::mutex mu;
  static auto* cache = new std::unordered_map<double, int>();  // never freed: no exit-time race
  {
    std::lock_guard<std::mutex> lock(mu);
    const auto it = cache->find(clamped);
    if (it != cache->end()) return it->second;
  }
  const int k = OptimalBlockedProbes(clamped, blocked::kMaxProbes, blocked::kBlockBits);
  if (is_whole) {
    whole[static_cast<int>(clamped)].store(static_cast<int8_t>(k), std::memory_order_relaxed);
    return k;
  }
  std::lock_guard<std::mutex> lock(mu);
  if (cache->size() < 4096) cache->emplace(clamped, k);
  return k;
}

uint64_t BlockedBloomBytes(uint64_t num_keys, double bits_per_key) {
  return internal::SaturatingBytes(
      std::ceil(static_cast<double>(num_keys) * ClampBitsPerKey(bits_per_key) / 8.0));
}

double BlockedBloomPredictedFpr(uint64_t num_keys, uint64_t num_bytes, int num_probes) {
  // Bits beyond 2^64 saturate: such a filter's FPR is the mixture's anyway.
  const uint64_t total_bits = num_bytes <= UINT64_MAX / 8 ? num_bytes * 8 : UINT64_MAX;
  return internal::BlockedFilterFpr(num_keys, total_bits, num_probes);
}

BlockedBloomFilter::BlockedBloomFilter(std::unique_ptr<uint8_t[], AlignedFree> bits,
                                       uint64_t num_bytes, int num_probes, bool huge_pages)
    : bits_(std::move(bits)), huge_pages_(huge_pages) {
  SetGeometry(num_bytes, num_probes, /*flat=*/false);
}

BlockedBloomFilter::BlockedBloomFilter(BlockedBloomFilter&& other) noexcept {
  *this = std::move(other);
}

BlockedBloomFilter& BlockedBloomFilter::operator=(BlockedBloomFilter&& other) noexcept {
  if (this != &other) {
    bits_ = std::move(other.bits_);
    num_added_ = other.num_added_;
    huge_pages_ = other.huge_pages_;
    SetGeometry(other.num_bytes(), other.num_probes(), other.flat());
    other.BecomeMatchEverything();
  }
  return *this;
}

namespace {
// What a filter without bits of its own reads: a 1-byte filter with every
// bit set, padded to a whole block (the batch probe may read the block).
alignas(blocked::kBlockBytes) constexpr uint8_t kMatchEverythingBlock[blocked::kBlockBytes] = {
    0xFF};
}  // namespace

void BlockedBloomFilter::BecomeMatchEverything() {
  // The moved bits are another filter's now: the probes read the shared
  // all-ones block instead, and answer "may match" for every key.
  num_added_ = 0;
  huge_pages_ = false;
  // The geometry stays (a flat filter's k may be above the blocked
  // geometry's 16): a 1-byte filter of it, every bit set.
  SetGeometry(1, probe_args_.num_probes, probe_args_.flat);
}

namespace {
bool EmptySetProbe(const blocked::ProbeArgs*, uint64_t) { return false; }
bool FlatProbe(const blocked::ProbeArgs* args, uint64_t hash) {
  return blocked::flat::MayContainHash(hash, args->total_bits, args->num_probes, args->data);
}
}  // namespace

void BlockedBloomFilter::SetGeometry(uint64_t num_bytes, int num_probes, bool flat) {
  probe_args_.data = bits_ != nullptr ? bits_.get() : kMatchEverythingBlock;
  probe_args_.total_bits = num_bytes * 8;
  probe_args_.num_probes = num_probes;
  probe_args_.flat = flat;
  probe_hash_ = num_bytes == 0 ? &EmptySetProbe
                : flat         ? &FlatProbe
                               : simd::ChosenMayContainHashArgs();
  // Answers the empty set and the flat geometry itself.
  probe_key_ = blocked::ChosenMayContainKeyArgs();
}

absl::StatusOr<BlockedBloomFilter> BlockedBloomFilter::CreateWithGeometry(
    uint64_t num_bytes, int num_probes, const BlockedBloomOptions& options) {
  if (num_probes < blocked::kMinProbes || num_probes > blocked::kMaxProbes) {
    return absl::InvalidArgumentError("num_probes must be in [1, 16]");
  }
  // Pad to whole blocks (and at least one) so the gather path may read every
  // word of the last, partial block. Padding bits are never set.
  constexpr uint64_t kLine = blocked::kBlockBytes;
  if (num_bytes > (uint64_t{1} << 62)) {
    return absl::ResourceExhaustedError("filter size overflows memory");
  }
  uint64_t padded = std::max<uint64_t>(kLine, (num_bytes + kLine - 1) / kLine * kLine);
  // Huge pages: a 2 MiB-aligned allocation of whole 2 MiB pages, advised
  // before the first touch (the memset) so the kernel backs it with huge
  // pages where transparent huge pages are "madvise" or "always".
  bool huge = false;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uint64_t kHugePage = uint64_t{2} << 20;
  huge = options.huge_pages && padded >= kHugePageMinBytes;
  if (huge) padded = (padded + kHugePage - 1) / kHugePage * kHugePage;
  const size_t alignment = huge ? static_cast<size_t>(kHugePage) : kLine;
#else
  (void)options;
  const size_t alignment = kLine;
#endif
  if (padded > SIZE_MAX) return absl::ResourceExhaustedError("filter size overflows memory");
  auto* raw = static_cast<uint8_t*>(std::aligned_alloc(alignment, static_cast<size_t>(padded)));
  if (raw == nullptr) {
    return absl::ResourceExhaustedError("cannot allocate " + std::to_string(padded) +
                                        " bytes for a blocked Bloom filter");
  }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (huge) huge = ::madvise(raw, static_cast<size_t>(padded), MADV_HUGEPAGE) == 0;
#endif
  std::memset(raw, 0, static_cast<size_t>(padded));
  return BlockedBloomFilter(std::unique_ptr<uint8_t[], AlignedFree>(raw), num_bytes, num_probes,
                            huge);
}

absl::StatusOr<BlockedBloomFilter> BlockedBloomFilter::Create(uint64_t expected_keys,
                                                              double bits_per_key,
                                                              const BlockedBloomOptions& options) {
  return CreateWithGeometry(BlockedBloomBytes(expected_keys, bits_per_key),
                            BlockedBloomProbes(bits_per_key), options);
}

absl::StatusOr<BlockedBloomFilter::Geometry> BlockedBloomFilter::GeometryForFpr(
    uint64_t expected_keys, double fpr) {
  const absl::StatusOr<double> bits_per_key = BlockedBitsPerKeyForFpr(fpr);
  if (!bits_per_key.ok()) return bits_per_key.status();
  const uint64_t bytes = BlockedBloomBytes(expected_keys, *bits_per_key);
  const int probes = BlockedBloomProbes(*bits_per_key);
  // Sizes whose bits 64 bits cannot count are no filter (and past the
  // search below).
  constexpr uint64_t kMaxBytes = UINT64_MAX / 8 - 64 * blocked::kBlockBytes;
  if (bytes > kMaxBytes) return absl::ResourceExhaustedError("filter size overflows memory");
  if (expected_keys == 0 || BlockedBloomPredictedFpr(expected_keys, bytes, probes) <= fpr) {
    return Geometry{bytes, probes};
  }
  // Larger sizes, each with the k best for its bits per key, until the
  // model meets fpr: for a filter of a few blocks, every byte up to the next
  // whole block (a block is a large share of it, and the short block's size
  // moves the FPR either way), then whole blocks. The model falls with every
  // whole block added (more bits, no short block), so the first size that
  // meets fpr is the smallest of those tried; a few blocks past the size do
  // for any n, kMaxExtraBlocks bounds the search regardless.
  constexpr uint64_t kLine = blocked::kBlockBytes;
  constexpr uint64_t kByteSearchMaxBytes = 8 * kLine;
  constexpr uint64_t kMaxExtraBlocks = 64;
  const auto meets = [&](uint64_t size, Geometry* out) {
    const double per_key = 8.0 * static_cast<double>(size) / static_cast<double>(expected_keys);
    const int k = BlockedBloomProbes(per_key);
    if (BlockedBloomPredictedFpr(expected_keys, size, k) > fpr) return false;
    *out = Geometry{size, k};
    return true;
  };
  Geometry found{0, 0};
  // The whole blocks from the first one not tried yet (the size itself, or
  // the byte search, reached `first` blocks already where it ran).
  const uint64_t first = (bytes + kLine - 1) / kLine;
  uint64_t from = first * kLine > bytes ? first : first + 1;
  if (bytes < kByteSearchMaxBytes) {
    for (uint64_t size = bytes + 1; size <= first * kLine; ++size) {
      if (meets(size, &found)) return found;
    }
    from = first + 1;
  }
  for (uint64_t blocks = from; blocks <= first + kMaxExtraBlocks; ++blocks) {
    if (meets(blocks * kLine, &found)) return found;
  }
  return absl::OutOfRangeError("no blocked filter geometry near " + std::to_string(bytes) +
                               " bytes reaches the target FPR");
}

absl::StatusOr<BlockedBloomFilter> BlockedBloomFilter::CreateForFpr(
    uint64_t expected_keys, double fpr, const BlockedBloomOptions& options) {
  const absl::StatusOr<Geometry> geometry = GeometryForFpr(expected_keys, fpr);
  if (!geometry.ok()) return geometry.status();
  return CreateWithGeometry(geometry->num_bytes, geometry->num_probes, options);
}

absl::StatusOr<BlockedBloomFilter> BlockedBloomFilter::BuildFromHashes(
    absl::Span<const uint64_t> hashes, double bits_per_key) {
  absl::StatusOr<BlockedBloomFilter> filter = Create(hashes.size(), bits_per_key);
  if (filter.ok()) filter->AddHashes(hashes);
  return filter;
}

absl::StatusOr<BlockedBloomFilter> BlockedBloomFilter::BuildFromKeys(
    absl::Span<const std::string_view> keys, double bits_per_key) {
  absl::StatusOr<BlockedBloomFilter> filter = Create(keys.size(), bits_per_key);
  if (filter.ok()) filter->AddKeys(keys);
  return filter;
}

absl::StatusOr<BlockedBloomFilter> BlockedBloomFilter::Deserialize(std::string_view encoded) {
  blocked::FilterView view;
  if (!blocked::ParseFilter(encoded, &view)) {
    return absl::DataLossError("not a version-1 or version-2 blockbloom blocked filter");
  }
  // A flat filter may have up to blocked::kMaxFlatProbes probes: the
  // allocation is the same, the probes are the flat kernel's.
  absl::StatusOr<BlockedBloomFilter> filter =
      CreateWithGeometry(view.num_bytes, std::min(view.num_probes, blocked::kMaxProbes));
  if (filter.ok() && view.num_bytes > 0) {
    std::memcpy(filter->bits_.get(), view.bits, static_cast<size_t>(view.num_bytes));
  }
  if (filter.ok()) {
    filter->SetGeometry(view.num_bytes, view.num_probes, view.geometry == blocked::Geometry::kFlat);
  }
  return filter;
}

bool BlockedBloomFilter::PrepareToAdd() {
  // A moved-from filter already matches every key: nothing to write.
  if (bits_ == nullptr) return false;
  if (num_bytes() != 0) return true;
  // A zero-byte filter is the empty set and has no bits to set. It becomes a
  // one-byte filter with every bit set: it answers "may match" for every key,
  // and serializes as exactly that. (The allocation is padded to 64 bytes.)
  bits_[0] = 0xFF;
  SetGeometry(1, probe_args_.num_probes, probe_args_.flat);
  return true;
}

void BlockedBloomFilter::AddHash(uint64_t hash) {
  ++num_added_;
  if (!PrepareToAdd()) return;
  if (flat()) {
    blocked::flat::AddHash(hash, num_bits(), num_probes(), bits_.get());
  } else {
    blocked::AddHash(hash, num_bits(), num_probes(), bits_.get());
  }
}

void BlockedBloomFilter::AddKey(std::string_view key) { AddHash(internal::InlineHashKey(key)); }

void BlockedBloomFilter::AddHashes(absl::Span<const uint64_t> hashes) {
  if (hashes.empty()) return;
  num_added_ += hashes.size();
  if (!PrepareToAdd()) return;
  blocked::AddHashes(hashes.data(), hashes.size(), num_bytes(), num_probes(),
                     flat() ? blocked::Geometry::kFlat : blocked::Geometry::kBlocked512,
                     bits_.get());
}

void BlockedBloomFilter::AddKeys(absl::Span<const std::string_view> keys) {
  if (keys.empty()) return;
  num_added_ += keys.size();
  if (!PrepareToAdd()) return;
  // Hash and set in one loop on the chosen target (blocked/key_probe.h).
  blocked::AddKeys(keys.data(), keys.size(), num_bits(), num_probes(), bits_.get(), flat());
}

void BlockedBloomFilter::MayContainHashes(absl::Span<const uint64_t> hashes, absl::Span<bool> out,
                                          size_t window) const {
  const size_t n = std::min(hashes.size(), out.size());
  if (num_bytes() == 0) {
    std::fill(out.begin(), out.begin() + n, false);  // the empty set
    return;
  }
  if (flat()) {  // a deserialized flat filter: probed in place, no prefetch
    for (size_t i = 0; i < n; ++i) {
      out[i] = blocked::flat::MayContainHash(hashes[i], num_bits(), num_probes(), data());
    }
    return;
  }
  const uint64_t padded = std::max<uint64_t>(blocked::kBlockBytes, (num_bytes() + 63) / 64 * 64);
  simd::MayContainHashes(hashes.data(), n, num_bits(), num_probes(), data(),
                         static_cast<size_t>(padded), out.data(), window);
}

void BlockedBloomFilter::MayContainKeys(absl::Span<const std::string_view> keys,
                                        absl::Span<bool> out, size_t window) const {
  internal::ForEachHashSlice(keys, [&](absl::Span<const uint64_t> hashes, size_t start) {
    MayContainHashes(hashes, out.subspan(start, hashes.size()), window);
  });
}

std::string BlockedBloomFilter::Serialize() const {
  std::string out(reinterpret_cast<const char*>(data()), static_cast<size_t>(num_bytes()));
  blocked::AppendTrailer(num_probes(), &out,
                         flat() ? blocked::Geometry::kFlat : blocked::Geometry::kBlocked512);
  return out;
}

}  // namespace blockbloom
