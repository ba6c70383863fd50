#include "blockbloom/counting_bloom.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "blockbloom/hash.h"
#include "blockbloom/math.h"
#include "common/hash_slices.h"
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

}  // namespace

CountingBloomFilter::CountingBloomFilter(uint64_t num_blocks, int num_probes)
    : blocks_(num_blocks), num_probes_(num_probes) {}

absl::StatusOr<std::unique_ptr<CountingBloomFilter>> CountingBloomFilter::CreateWithGeometry(
    uint64_t num_blocks, int num_probes) {
  if (num_blocks == 0 || num_blocks > kMaxBlocks) {
    return absl::InvalidArgumentError("counting bloom: num_blocks out of [1, 2^34]");
  }
  if (num_probes < 1 || num_probes > kMaxProbes) {
    return absl::InvalidArgumentError("counting bloom: num_probes out of [1, 16]");
  }
  std::unique_ptr<CountingBloomFilter> filter(new (std::nothrow)
                                                  CountingBloomFilter(0, num_probes));
  if (filter == nullptr) return absl::ResourceExhaustedError("counting bloom: out of memory");
  try {
    filter->blocks_ = std::vector<Block>(num_blocks);  // value-initialised: all 0
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("counting bloom: out of memory");
  }
  return filter;
}

absl::StatusOr<std::unique_ptr<CountingBloomFilter>> CountingBloomFilter::Create(
    uint64_t expected_keys, double counters_per_key) {
  const double c = ClampCountersPerKey(counters_per_key);
  const double counters = std::ceil(static_cast<double>(expected_keys) * c);
  const double blocks = std::max(1.0, std::ceil(counters / kCountersPerBlock));
  if (!(blocks <= static_cast<double>(kMaxBlocks))) {
    return absl::ResourceExhaustedError("counting bloom: too many keys");
  }
  return CreateWithGeometry(static_cast<uint64_t>(blocks), ProbesFor(c));
}

double CountingBloomFilter::ModelFpr(double counters_per_key) {
  const double c = ClampCountersPerKey(counters_per_key);
  return BlockedBloomFpr(c, ProbesFor(c), kCountersPerBlock);
}

double CountingBloomFilter::CountersPerKeyForFpr(double target_fpr) {
  const double p = std::isnan(target_fpr) ? 0.01 : std::clamp(target_fpr, 1e-6, 0.5);
  for (double c = kMinCountersPerKey; c < kMaxCountersPerKey; c += 0.25) {
    if (ModelFpr(c) <= p) return c;
  }
  return kMaxCountersPerKey;
}

absl::StatusOr<std::unique_ptr<CountingBloomFilter>> CountingBloomFilter::CreateForFpr(
    uint64_t expected_keys, double target_fpr) {
  return Create(expected_keys, CountersPerKeyForFpr(target_fpr));
}

void CountingBloomFilter::Update(uint64_t hash, int delta) {
  Block& block = blocks_[counting::BlockIndex(hash, blocks_.size())];
  uint32_t x = counting::ProbeSeed(hash);
  for (int i = 0; i < num_probes_; ++i, x = counting::NextProbe(x)) {
    const uint32_t counter = counting::CounterIndex(x);
    std::atomic<uint64_t>& word = block.words[counting::WordOf(counter)];
    const uint32_t shift = counting::ShiftOf(counter);
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
  }
}

void CountingBloomFilter::InsertHash(uint64_t hash) {
  Update(hash, +1);
  keys_.fetch_add(1, std::memory_order_relaxed);
}

void CountingBloomFilter::Insert(std::string_view key) { InsertHash(HashKey(key)); }

absl::Status CountingBloomFilter::EraseHash(uint64_t hash) {
  if (!MayContainHash(hash)) {
    return absl::NotFoundError("counting bloom: erase of a key that is certainly absent");
  }
  Update(hash, -1);
  // keys_ never wraps below 0 (an erase without insert is a caller bug).
  uint64_t keys = keys_.load(std::memory_order_relaxed);
  while (keys > 0 &&
         !keys_.compare_exchange_weak(keys, keys - 1, std::memory_order_relaxed)) {
  }
  return absl::OkStatus();
}

absl::Status CountingBloomFilter::Erase(std::string_view key) { return EraseHash(HashKey(key)); }

bool CountingBloomFilter::MayContainHash(uint64_t hash) const {
  const Block& block = blocks_[counting::BlockIndex(hash, blocks_.size())];
  uint32_t x = counting::ProbeSeed(hash);
  bool all = true;
  for (int i = 0; i < num_probes_; ++i, x = counting::NextProbe(x)) {
    const uint32_t counter = counting::CounterIndex(x);
    const uint64_t word =
        block.words[counting::WordOf(counter)].load(std::memory_order_relaxed);
    all &= ((word >> counting::ShiftOf(counter)) & counting::kCounterMask) != 0;
  }
  return all;
}

bool CountingBloomFilter::MayContain(std::string_view key) const {
  return MayContainHash(HashKey(key));
}

uint32_t CountingBloomFilter::CountUpperBound(std::string_view key) const {
  const uint64_t hash = HashKey(key);
  const Block& block = blocks_[counting::BlockIndex(hash, blocks_.size())];
  uint32_t x = counting::ProbeSeed(hash);
  uint32_t least = kMaxCount;
  for (int i = 0; i < num_probes_; ++i, x = counting::NextProbe(x)) {
    const uint32_t counter = counting::CounterIndex(x);
    const uint64_t word =
        block.words[counting::WordOf(counter)].load(std::memory_order_relaxed);
    least = std::min<uint32_t>(
        least, static_cast<uint32_t>((word >> counting::ShiftOf(counter)) & counting::kCounterMask));
  }
  return least;
}

void CountingBloomFilter::MayContainHashes(absl::Span<const uint64_t> hashes,
                                           absl::Span<bool> out) const {
  constexpr size_t kWindow = 32;
  const size_t n = std::min(hashes.size(), out.size());
  for (size_t i = 0; i < std::min(n, kWindow); ++i) {
    __builtin_prefetch(&blocks_[counting::BlockIndex(hashes[i], blocks_.size())]);
  }
  for (size_t i = 0; i < n; ++i) {
    if (i + kWindow < n) {
      __builtin_prefetch(&blocks_[counting::BlockIndex(hashes[i + kWindow], blocks_.size())]);
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
    const double c = static_cast<double>(blocks_.size()) * kCountersPerBlock / s.keys;
    s.estimated_fpr = BlockedBloomFpr(c, num_probes_, kCountersPerBlock);
  }
  return s;
}

}  // namespace blockbloom
