#include "blockbloom/counting_bloom.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "blockbloom/hash.h"
#include "common/coding.h"
#include "blockbloom/math.h"
#include "common/hash_slices.h"
#include "common/large_allocator.h"
#include "counting/kernel.h"

namespace blockbloom {
namespace {

// A 4-bit counter array cannot reasonably exceed this many blocks (2^40 bytes).
constexpr uint64_t kMaxBlocks = uint64_t{1} << 34;

double ClampCountersPerKey(double c) {
  if (std::isnan(c)) return CountingBloomFilter::kDefaultCountersPerKey;
  return std::clamp(c, CountingBloomFilter::kMinCountersPerKey,
                    CountingBloomFilter::kMaxCountersPerKey);
}

int ProbesFor(double counters_per_key) {
  return OptimalBlockedProbes(counters_per_key, CountingBloomFilter::kMaxProbes,
                              CountingBloomFilter::kCountersPerBlock);
}

// The model on the grid CountersPerKeyForFpr searches: c_j = kMin + j/4 for
// j = 0 .. kGridPoints-1 (1, 1.25, ..., 63.75; every c_j is exact in binary).
// Each point costs OptimalBlockedProbes (16 Poisson-mixture sums) plus one
// more sum; the old search recomputed up to 252 of them on every call, which
// dominated FilteredDB rebuilds (bench/counting_fpr_search_bench.cc measures
// both: BM_SearchExhaustive vs BM_SearchCached). The grid is filled lazily, in
// order, only as far as a search has needed, by the same functions on the
// same arguments, so every answer is bit-for-bit what the exhaustive search
// gave (tests/counting_bloom_test.cc compares the two over a sweep of
// targets). At most 252 entries (~4 KiB) per process, freed at exit.
// Thread-safe: one mutex guards the table (held while extending it).
constexpr double kGridStep = 0.25;
constexpr int kGridPoints = static_cast<int>(
    (CountingBloomFilter::kMaxCountersPerKey - CountingBloomFilter::kMinCountersPerKey) /
    kGridStep);  // 252
static_assert(CountingBloomFilter::kMinCountersPerKey + kGridPoints * kGridStep ==
                  CountingBloomFilter::kMaxCountersPerKey,
              "the grid ends just below kMaxCountersPerKey");

double GridPoint(int j) { return CountingBloomFilter::kMinCountersPerKey + j * kGridStep; }

class ModelGrid {
 public:
  // The smallest grid c with model FPR <= p; kMaxCountersPerKey if none.
  double FirstAtMost(double p) {
    std::lock_guard<std::mutex> lock(mu_);
    for (int j = 0; j < kGridPoints; ++j) {
      if (EntryLocked(j).fpr <= p) return GridPoint(j);
    }
    return CountingBloomFilter::kMaxCountersPerKey;
  }
  // ProbesFor(c), from the table when c is a grid point already computed.
  int Probes(double c) {
    const double j = (c - CountingBloomFilter::kMinCountersPerKey) / kGridStep;
    if (j >= 0 && j < kGridPoints && j == std::floor(j) && GridPoint(static_cast<int>(j)) == c) {
      std::lock_guard<std::mutex> lock(mu_);
      if (static_cast<size_t>(j) < entries_.size()) return entries_[static_cast<size_t>(j)].probes;
    }
    return ProbesFor(c);
  }

 private:
  struct Entry {
    int probes;  // ProbesFor(c_j)
    double fpr;  // CountingBloomFilter::ModelFpr(c_j)
  };
  // REQUIRES: mu_ held, 0 <= j < kGridPoints.
  const Entry& EntryLocked(int j) {
    while (entries_.size() <= static_cast<size_t>(j)) {
      const double c = GridPoint(static_cast<int>(entries_.size()));
      const int k = ProbesFor(c);
      // == ModelFpr(c): c is inside the clamp range.
      entries_.push_back({k, BlockedBloomFpr(c, k, CountingBloomFilter::kCountersPerBlock)});
    }
    return entries_[static_cast<size_t>(j)];
  }

  std::mutex mu_;
  std::vector<Entry> entries_;  // entries_[j] for c_j, filled in order
};

// Calls fn(word, shift) for each of the key's k counters in `block`: the
// counter is bits [shift, shift + 4) of the atomic 64-bit `word`. `block` is
// const for queries, mutable for updates; fn sees the word with the same
// constness.
template <typename BlockT, typename Fn>
void ForEachCounter(BlockT& block, uint64_t hash, int num_probes, Fn&& fn) {
  uint32_t x = counting::ProbeSeed(hash);
  for (int i = 0; i < num_probes; ++i, x = counting::NextProbe(x)) {
    const uint32_t counter = counting::CounterIndex(x);
    fn(block.words[counting::WordOf(counter)], counting::ShiftOf(counter));
  }
}

// The 4-bit counter at `shift` of `word`.
uint64_t CounterAt(const std::atomic<uint64_t>& word, uint32_t shift) {
  return (word.load(std::memory_order_relaxed) >> shift) & counting::kCounterMask;
}

ModelGrid& Grid() {
  static ModelGrid grid;  // thread-safe initialisation (C++11 function-local static)
  return grid;
}

}  // namespace

void CountingBloomFilter::BlocksFree::operator()(Block* blocks) const noexcept {
  internal::FreeLarge(blocks);
}

CountingBloomFilter::CountingBloomFilter(int num_probes) : num_probes_(num_probes) {}

absl::StatusOr<std::unique_ptr<CountingBloomFilter>> CountingBloomFilter::CreateWithGeometry(
    uint64_t num_blocks, int num_probes) {
  if (num_blocks == 0 || num_blocks > kMaxBlocks) {
    return absl::InvalidArgumentError("counting bloom: num_blocks out of [1, 2^34]");
  }
  if (num_probes < 1 || num_probes > kMaxProbes) {
    return absl::InvalidArgumentError("counting bloom: num_probes out of [1, 16]");
  }
  std::unique_ptr<CountingBloomFilter> filter(new (std::nothrow) CountingBloomFilter(num_probes));
  if (filter == nullptr) return absl::ResourceExhaustedError("counting bloom: out of memory");
  try {
    filter->blocks_.reset(internal::NewLargeArray<Block>(num_blocks));  // all 0
    filter->num_blocks_ = num_blocks;
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("counting bloom: out of memory");
  }
  return filter;
}

CountingBloomFilter::Geometry CountingBloomFilter::GeometryFor(uint64_t expected_keys,
                                                               double counters_per_key) {
  const double c = ClampCountersPerKey(counters_per_key);
  const double counters = std::ceil(static_cast<double>(expected_keys) * c);
  const double blocks = std::max(1.0, std::ceil(counters / kCountersPerBlock));
  Geometry g;
  g.num_probes = Grid().Probes(c);
  if (blocks <= static_cast<double>(kMaxBlocks)) g.num_blocks = static_cast<uint64_t>(blocks);
  return g;
}

absl::StatusOr<std::unique_ptr<CountingBloomFilter>> CountingBloomFilter::Create(
    uint64_t expected_keys, double counters_per_key) {
  const Geometry g = GeometryFor(expected_keys, counters_per_key);
  if (g.num_blocks == 0) return absl::ResourceExhaustedError("counting bloom: too many keys");
  return CreateWithGeometry(g.num_blocks, g.num_probes);
}

double CountingBloomFilter::ModelFpr(double counters_per_key) {
  const double c = ClampCountersPerKey(counters_per_key);
  return BlockedBloomFpr(c, ProbesFor(c), kCountersPerBlock);
}

double CountingBloomFilter::CountersPerKeyForFpr(double target_fpr) {
  const double p = std::isnan(target_fpr) ? 0.01 : std::clamp(target_fpr, 1e-6, 0.5);
  return Grid().FirstAtMost(p);
}

absl::StatusOr<std::unique_ptr<CountingBloomFilter>> CountingBloomFilter::CreateForFpr(
    uint64_t expected_keys, double target_fpr) {
  return Create(expected_keys, CountersPerKeyForFpr(target_fpr));
}

void CountingBloomFilter::Update(uint64_t hash, int delta) {
  Block& block = blocks_[counting::BlockIndex(hash, num_blocks_)];
  ForEachCounter(block, hash, num_probes_, [&](std::atomic<uint64_t>& word, uint32_t shift) {
    uint64_t old_word = word.load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t count = (old_word >> shift) & counting::kCounterMask;
      if (count == kMaxCount) break;  // saturated: sticky, see header
      if (delta < 0 && count == 0) {  // erase of a key never inserted
        underflows_.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      const uint64_t new_count = delta > 0 ? count + 1 : count - 1;
      const uint64_t new_word =
          (old_word & ~(counting::kCounterMask << shift)) | (new_count << shift);
      if (word.compare_exchange_weak(old_word, new_word, std::memory_order_relaxed)) {
        if (new_count == kMaxCount) saturated_.fetch_add(1, std::memory_order_relaxed);
        break;
      }
    }
  });
}

void CountingBloomFilter::StepKeys(int delta) {
  uint64_t keys = keys_.load(std::memory_order_relaxed);
  while (delta > 0 ? keys < UINT64_MAX : keys > 0) {
    if (keys_.compare_exchange_weak(keys, delta > 0 ? keys + 1 : keys - 1,
                                    std::memory_order_relaxed)) {
      return;
    }
  }
}

void CountingBloomFilter::InsertHash(uint64_t hash) {
  Update(hash, +1);
  StepKeys(+1);
}

void CountingBloomFilter::Insert(std::string_view key) { InsertHash(HashKey(key)); }

absl::Status CountingBloomFilter::EraseHash(uint64_t hash) {
  if (!MayContainHash(hash)) {
    return absl::NotFoundError("counting bloom: erase of a key that is certainly absent");
  }
  Update(hash, -1);
  StepKeys(-1);  // an erase without its insert is a caller bug: keys_ stays at 0
  return absl::OkStatus();
}

absl::Status CountingBloomFilter::Erase(std::string_view key) { return EraseHash(HashKey(key)); }

void CountingBloomFilter::PrefetchHash(uint64_t hash) const {
  __builtin_prefetch(&blocks_[counting::BlockIndex(hash, num_blocks_)]);
}

bool CountingBloomFilter::MayContainHash(uint64_t hash) const {
  const Block& block = blocks_[counting::BlockIndex(hash, num_blocks_)];
  bool all = true;
  ForEachCounter(block, hash, num_probes_, [&](const std::atomic<uint64_t>& word, uint32_t shift) {
    all &= CounterAt(word, shift) != 0;
  });
  return all;
}

bool CountingBloomFilter::MayContain(std::string_view key) const {
  return MayContainHash(HashKey(key));
}

uint32_t CountingBloomFilter::CountUpperBound(std::string_view key) const {
  const uint64_t hash = HashKey(key);
  const Block& block = blocks_[counting::BlockIndex(hash, num_blocks_)];
  uint32_t least = kMaxCount;
  ForEachCounter(block, hash, num_probes_, [&](const std::atomic<uint64_t>& word, uint32_t shift) {
    least = std::min(least, static_cast<uint32_t>(CounterAt(word, shift)));
  });
  return least;
}

void CountingBloomFilter::MayContainHashes(absl::Span<const uint64_t> hashes,
                                           absl::Span<bool> out) const {
  constexpr size_t kWindow = 32;
  const size_t n = std::min(hashes.size(), out.size());
  for (size_t i = 0; i < std::min(n, kWindow); ++i) {
    __builtin_prefetch(&blocks_[counting::BlockIndex(hashes[i], num_blocks_)]);
  }
  for (size_t i = 0; i < n; ++i) {
    if (i + kWindow < n) {
      __builtin_prefetch(&blocks_[counting::BlockIndex(hashes[i + kWindow], num_blocks_)]);
    }
    out[i] = MayContainHash(hashes[i]);
  }
}

void CountingBloomFilter::MayContainKeys(absl::Span<const std::string_view> keys,
                                         absl::Span<bool> out) const {
  internal::ForEachHashSlice(keys, [&](absl::Span<const uint64_t> hashes, size_t first) {
    MayContainHashes(hashes, out.subspan(first, hashes.size()));
  });
}

CountingBloomStats CountingBloomFilter::stats() const {
  CountingBloomStats s;
  s.keys = keys_.load(std::memory_order_relaxed);
  s.saturated_counters = saturated_.load(std::memory_order_relaxed);
  s.underflows = underflows_.load(std::memory_order_relaxed);
  s.memory_bytes = memory_bytes();
  if (s.keys > 0) {
    const double c = static_cast<double>(num_blocks_) * kCountersPerBlock / s.keys;
    s.estimated_fpr = BlockedBloomFpr(c, num_probes_, kCountersPerBlock);
  }
  return s;
}

void CountingBloomFilter::AppendCounters(std::string* out) const {
  internal::AppendAtomicWords(absl::MakeConstSpan(blocks_.get(), num_blocks_), out);
}

absl::StatusOr<std::unique_ptr<CountingBloomFilter>> CountingBloomFilter::FromCounters(
    uint64_t num_blocks, int num_probes, uint64_t num_keys, std::string_view counters) {
  if (num_blocks == 0 || num_blocks > kMaxBlocks || counters.size() / kBlockBytes != num_blocks ||
      counters.size() % kBlockBytes != 0) {
    return absl::InvalidArgumentError("counting bloom: counters do not match the geometry");
  }
  auto filter = CreateWithGeometry(num_blocks, num_probes);
  if (!filter.ok()) return filter.status();
  uint64_t saturated = 0;
  absl::Span<Block> blocks = absl::MakeSpan((*filter)->blocks_.get(), num_blocks);
  internal::LoadAtomicWords(counters.data(), &blocks, [&](uint64_t w) {
    // A nibble is saturated when all four of its bits are set (15).
    saturated += static_cast<uint64_t>(
        __builtin_popcountll(w & (w >> 1) & (w >> 2) & (w >> 3) & 0x1111111111111111ull));
  });
  (*filter)->saturated_.store(saturated, std::memory_order_relaxed);
  (*filter)->keys_.store(num_keys, std::memory_order_relaxed);
  return filter;
}

}  // namespace blockbloom
