#include "filtered_db/key_index.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <random>
#include <vector>

#include "blockbloom/counting_bloom.h"
#include "blockbloom/dleft_counting_bloom.h"
#include "blockbloom/math.h"
#include "common/coding.h"
#include "filtered_db/testing_hooks.h"
#include "range_reduction.h"

namespace blockbloom {
namespace {

std::atomic<uint64_t> g_budget_slack{KeyIndex::kDefaultBudgetSlackBytes};
std::atomic<bool> g_seed_fixed{false};
std::atomic<uint64_t> g_fixed_seed{0};

// FilteredDBOptions::target_fpr's default; also what a NaN asks for.
constexpr double kDefaultTargetFpr = 0.002;

// Payload layout (docs/FORMAT.md, "FilteredDB index file"), little-endian:
//   u8 kind (0 counting, 1 d-left) | u64 capacity | u64 keys |
//   counting: u64 num_blocks | u8 num_probes | counters
//   d-left:   u8 log2_buckets | u8 segments | u8 cell_bits (16 or 12) | tables
using internal::GetByte;
using internal::GetFixed64;
using internal::PutFixed64;

}  // namespace

void FrontFilter::Serialize(std::string* out) const {
  PutFixed64(out, blocks_.size());
  PutFixed64(out, inserted());
  internal::AppendAtomicWords(blocks_, out);
}

double FrontFilter::estimated_fpr() const {
  const uint64_t n = inserted();
  if (n == 0) return 0.0;
  return BlockedBloomFpr(512.0 * static_cast<double>(num_blocks()) / static_cast<double>(n),
                         kProbes);
}

std::unique_ptr<FrontFilter> FrontFilter::Deserialize(std::string_view* in) {
  uint64_t num_blocks = 0, inserted = 0;
  if (!GetFixed64(in, &num_blocks) || !GetFixed64(in, &inserted) || num_blocks == 0 ||
      in->size() / sizeof(Block) < num_blocks) {
    return nullptr;
  }
  auto f = std::make_unique<FrontFilter>(num_blocks);
  internal::LoadAtomicWords(in->data(), &f->blocks_, [](uint64_t) {});
  in->remove_prefix(num_blocks * sizeof(Block));
  f->inserted_.store(inserted, std::memory_order_relaxed);
  return f;
}

namespace {

class CountingIndex final : public KeyIndex::Counting {
 public:
  CountingIndex(std::unique_ptr<CountingBloomFilter> filter, uint64_t capacity)
      : filter_(std::move(filter)), capacity_(capacity) {}
  absl::Status Insert(uint64_t hash) override {
    filter_->InsertHash(hash);
    return absl::OkStatus();
  }
  absl::Status Erase(uint64_t hash) override { return filter_->EraseHash(hash); }
  bool MayContain(uint64_t hash) const override { return filter_->MayContainHash(hash); }
  void Prefetch(uint64_t hash) const override { filter_->PrefetchHash(hash); }
  IndexKind kind() const override { return IndexKind::kCounting; }
  uint64_t keys() const override { return filter_->num_keys(); }
  uint64_t capacity() const override { return capacity_; }
  uint64_t memory_bytes() const override { return filter_->memory_bytes(); }
  double estimated_fpr() const override { return filter_->stats().estimated_fpr; }
  bool BuiltFor(double target_fpr) const override;
  void Serialize(std::string* out) const override {
    out->push_back(0);
    PutFixed64(out, capacity_);
    PutFixed64(out, filter_->num_keys());
    PutFixed64(out, filter_->num_blocks());
    out->push_back(static_cast<char>(filter_->num_probes()));
    filter_->AppendCounters(out);
  }

 private:
  std::unique_ptr<CountingBloomFilter> filter_;
  uint64_t capacity_;
};

class DleftIndex final : public KeyIndex::Counting {
 public:
  DleftIndex(std::unique_ptr<DleftCountingBloomFilter> filter, uint64_t capacity)
      : filter_(std::move(filter)), capacity_(capacity) {}
  absl::Status Insert(uint64_t hash) override { return filter_->InsertHash(hash); }
  absl::Status Erase(uint64_t hash) override { return filter_->EraseHash(hash); }
  bool MayContain(uint64_t hash) const override { return filter_->MayContainHash(hash); }
  void Prefetch(uint64_t hash) const override { filter_->PrefetchHash(hash); }
  IndexKind kind() const override { return IndexKind::kDleft; }
  uint64_t keys() const override { return filter_->num_keys(); }
  uint64_t capacity() const override { return capacity_; }
  uint64_t memory_bytes() const override { return filter_->memory_bytes(); }
  double estimated_fpr() const override { return filter_->stats().estimated_fpr; }
  bool BuiltFor(double target_fpr) const override;
  void Serialize(std::string* out) const override {
    out->push_back(1);
    PutFixed64(out, capacity());
    PutFixed64(out, filter_->num_keys());
    out->push_back(static_cast<char>(filter_->log2_buckets()));
    out->push_back(static_cast<char>(filter_->segments()));
    out->push_back(static_cast<char>(filter_->cell_bits()));
    filter_->AppendTables(out);
  }

 private:
  std::unique_ptr<DleftCountingBloomFilter> filter_;
  uint64_t capacity_;  // <= design_capacity(): the load the target allows
};

// Sizing (docs/FILTERED_DB.md, "Sizing").
//
// The pair's FPR at capacity is the product of the front filter's and the
// counting filter's (independent bits of the hash): the counting filter gets
// target / kFrontFilterFpr. For d-left, FPR = n / (T * 2^r) with T buckets
// per subtable and r remainder bits (the header's model: n occupied cells
// among d * T buckets, d candidate buckets, each cell matching with
// probability 2^-r), so T buckets hold min(row, T * 2^r * that FPR) keys,
// row = d * (design keys per bucket).
// The target is clamped into [lowest, 1] first (NaN: the default).
double CountingShare(double target_fpr, double lowest) {
  const double p = std::isnan(target_fpr) ? kDefaultTargetFpr : std::clamp(target_fpr, lowest, 1.0);
  return std::min(1.0, p / KeyIndex::kFrontFilterFpr);
}
// The counting kind's: any target (its counters per key stop at 64,
// CountingBloomFilter::CountersPerKeyForFpr; it is sized for the keys beyond
// the budget anyway).
double CountingTarget(double target_fpr) { return CountingShare(target_fpr, 1e-9); }
// The d-left kind's: targets below KeyIndex::kMinTargetFpr are clamped to
// it, the lowest its memory budget allows.
double DleftTarget(double target_fpr) { return CountingShare(target_fpr, KeyIndex::kMinTargetFpr); }

// The d-left layout for a target: the cell width and the keys per bucket
// row (all d subtables together) at capacity.
struct DleftLayout {
  int cell_bits;
  double keys_per_row;
};

// A bucket is 16 bytes whatever its cells, so bytes per key of capacity are
// 16 * d / row + 0.75 (the front filter), and the cheapest layout whose
// FPR at its design load meets the target wins:
//   12-bit cells (r = 10, row 30): 30 / 2^10 = 2.93%, pair 0.168% with the
//     front filter's 5.75%; 2.13 + 0.75 = 2.88 bytes per key. Meets every
//     target from 0.168%, the default 0.2% included.
//   16-bit cells (r = 14, row 24): 24 / 2^14 = 0.146%, pair 8.4e-5; 2.67 +
//     0.75 = 3.42 bytes per key, for every target below 0.168%. Lower
//     targets are clamped to 8.4e-5 (KeyIndex::kMinTargetFpr): below it the
//     load would have to drop, and the bytes per key rise past the budget
//     (about 224 KB per key at 1e-9).
// Measured (build/release/bench/dleft_width_bench 16, 4M absent hashes):
// 2.89% at 12 bits and 0.145% at 16 bits at the design load, no full bucket
// up to 90% load for either. 14-bit cells (9 per bucket, r = 12: 0.66%,
// 3.12 bytes per key) would serve targets from 0.038% to 0.168% for 9% less
// than 16-bit ones, at the price of a third layout (9 cells straddle the
// bucket's two words); they are not offered. Cells under 12 bits lose: 11
// bits give a pair FPR of 0.36%, so 0.2% needs a larger front filter, and
// more bytes per key than 12-bit cells (docs/FILTERED_DB.md, "Sizing").
// The model at the design load of each width: dleft_counting_bloom_test,
// DesignLoadNeverOverflowsAndFprMatchesModel; the index with default options
// (memory, file and the pair's FPR at 1 to 10^7 keys):
// build/release/bench/filtered_db_bench --mode=sizes, the table in
// docs/FILTERED_DB.md, "Sizing".
DleftLayout DleftLayoutFor(double target_fpr) {
  using D = DleftCountingBloomFilter;
  const double counting = DleftTarget(target_fpr);
  const double narrow_row = D::DesignKeysPerBucketRow(D::kNarrowCellBits);
  if (narrow_row <= std::ldexp(counting, D::kNarrowRemainderBits)) {
    return {D::kNarrowCellBits, narrow_row};
  }
  return {D::kCellBits, std::min<double>(D::DesignKeysPerBucketRow(D::kCellBits),
                                         std::ldexp(counting, D::kRemainderBits))};
}

// The available d-left sizes: T = s * 2^b buckets per subtable with s in
// [8, 16) (and T = 1..7), so each size is at most 1/8 above the previous one.
uint64_t NextBucketCount(uint64_t t) {
  if (t < 8) return t + 1;
  const int b = 63 - __builtin_clzll(t) - 3;
  return t + (uint64_t{1} << b);
}
// T = s * 2^b with s odd (<= 15 for every T above): a power of two is one
// segment, the paper's layout.
void SplitBucketCount(uint64_t t, int* log2_buckets, int* segments) {
  *log2_buckets = __builtin_ctzll(t);
  *segments = static_cast<int>(t >> *log2_buckets);
}
constexpr uint64_t kMaxBucketCount = uint64_t{DleftCountingBloomFilter::kMaxSegments}
                                     << DleftCountingBloomFilter::kMaxLog2Buckets;

uint64_t DleftCapacity(uint64_t t, double keys_per_row) {
  return std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(t) * keys_per_row));
}
uint64_t FrontBytes(uint64_t capacity) { return FrontFilter::BlocksFor(capacity) * 64; }
bool CountingIndex::BuiltFor(double target_fpr) const {
  const CountingBloomFilter::Geometry g = CountingBloomFilter::GeometryFor(
      capacity_, CountingBloomFilter::CountersPerKeyForFpr(CountingTarget(target_fpr)));
  return g.num_blocks == filter_->num_blocks() && g.num_probes == filter_->num_probes();
}
// The target's cells, at their design load: the capacity of these buckets
// at the target's keys per row.
bool DleftIndex::BuiltFor(double target_fpr) const {
  const DleftLayout layout = DleftLayoutFor(target_fpr);
  const uint64_t buckets = static_cast<uint64_t>(filter_->segments()) << filter_->log2_buckets();
  return filter_->cell_bits() == layout.cell_bits &&
         capacity_ == DleftCapacity(buckets, layout.keys_per_row);
}

uint64_t DleftBytes(uint64_t t, double keys_per_row) {
  return t * DleftCountingBloomFilter::kSubtables * DleftCountingBloomFilter::kBucketBytes +
         FrontBytes(DleftCapacity(t, keys_per_row));
}
// The smallest T whose capacity is at least `capacity` (kMaxBucketCount if none).
uint64_t DleftBucketsFor(uint64_t capacity, double keys_per_row) {
  uint64_t t = 1;
  while (t < kMaxBucketCount && DleftCapacity(t, keys_per_row) < capacity) {
    t = NextBucketCount(t);
  }
  return t;
}

absl::StatusOr<std::unique_ptr<KeyIndex::Counting>> DeserializeInner(std::string_view in) {
  const auto bad = [] { return absl::InvalidArgumentError("index payload: malformed"); };
  uint8_t kind = 0;
  uint64_t capacity = 0, keys = 0;
  if (!GetByte(&in, &kind) || !GetFixed64(&in, &capacity) || !GetFixed64(&in, &keys)) return bad();
  if (kind == 0) {
    uint64_t num_blocks = 0;
    uint8_t probes = 0;
    if (!GetFixed64(&in, &num_blocks) || !GetByte(&in, &probes) || capacity == 0) return bad();
    auto filter = CountingBloomFilter::FromCounters(num_blocks, probes, keys, in);
    if (!filter.ok()) return filter.status();
    return std::unique_ptr<KeyIndex::Counting>(
        new CountingIndex(std::move(filter).value(), capacity));
  }
  if (kind == 1) {
    uint8_t log2 = 0, segments = 0, cell_bits = 0;
    if (!GetByte(&in, &log2) || !GetByte(&in, &segments) || !GetByte(&in, &cell_bits)) return bad();
    auto filter = DleftCountingBloomFilter::FromTables(log2, keys, in, segments, cell_bits);
    if (!filter.ok()) return filter.status();
    if (capacity == 0 || capacity > (*filter)->design_capacity()) return bad();
    return std::unique_ptr<KeyIndex::Counting>(new DleftIndex(std::move(filter).value(), capacity));
  }
  return bad();
}

}  // namespace

namespace filtered_db {
void SetIndexBudgetSlackForTesting(uint64_t bytes) {
  g_budget_slack.store(bytes, std::memory_order_relaxed);
}
void SetIndexSeedForTesting(bool fixed, uint64_t seed) {
  g_fixed_seed.store(seed);
  g_seed_fixed.store(fixed, std::memory_order_release);
}
}  // namespace filtered_db

uint64_t KeyIndex::BudgetBytes(uint64_t live_keys) {
  const uint64_t slack = g_budget_slack.load(std::memory_order_relaxed);
  return live_keys > (UINT64_MAX - slack) / kBudgetBytesPerKey
             ? UINT64_MAX
             : kBudgetBytesPerKey * live_keys + slack;
}

uint64_t KeyIndex::CapacityFor(IndexKind kind, uint64_t live_keys, uint64_t hint,
                               double target_fpr) {
  const uint64_t n = std::min<uint64_t>(live_keys, UINT64_MAX / 8);
  const uint64_t least = n + n / 32 + 1;
  const uint64_t most = std::max<uint64_t>(4 * n, hint);
  const uint64_t budget = BudgetBytes(n);
  if (kind == IndexKind::kCounting) {
    // 4-bit counters: c counters per key cost c / 2 bytes, the front filter
    // 6 / 8.
    const double bytes_per_key =
        CountingBloomFilter::CountersPerKeyForFpr(CountingTarget(target_fpr)) / 2 +
        FrontFilter::kBitsPerKey / 8;
    // Less two blocks: both filters round up to whole 64-byte blocks.
    const double in_budget =
        std::floor(static_cast<double>(budget > 128 ? budget - 128 : 0) / bytes_per_key);
    const uint64_t c = in_budget >= 1e18 ? most : std::min(most, static_cast<uint64_t>(in_budget));
    return std::max(least, c);
  }
  const double row = DleftLayoutFor(target_fpr).keys_per_row;
  const uint64_t smallest = DleftBucketsFor(least, row);
  uint64_t t = smallest;
  for (uint64_t next = NextBucketCount(t); next <= kMaxBucketCount; next = NextBucketCount(next)) {
    if (DleftCapacity(next, row) > most || DleftBytes(next, row) > budget) break;
    t = next;
  }
  // Nothing larger fits: ask for `least` (Create builds the same size), so a
  // caller that doubles after a refusal doubles from the keys' need.
  return t == smallest ? least : DleftCapacity(t, row);
}

absl::StatusOr<std::unique_ptr<KeyIndex>> KeyIndex::Create(IndexKind kind, uint64_t capacity,
                                                           double target_fpr, uint64_t seed) {
  capacity = std::max<uint64_t>(capacity, 1);
  std::unique_ptr<KeyIndex::Counting> inner;
  if (kind == IndexKind::kCounting) {
    auto filter = CountingBloomFilter::CreateForFpr(capacity, CountingTarget(target_fpr));
    if (!filter.ok()) return filter.status();
    inner.reset(new CountingIndex(std::move(filter).value(), capacity));
  } else {
    const DleftLayout layout = DleftLayoutFor(target_fpr);
    const double row = layout.keys_per_row;
    const uint64_t t = DleftBucketsFor(capacity, row);
    if (DleftCapacity(t, row) < capacity) {
      return absl::ResourceExhaustedError("FilteredDB index: too large");
    }
    int log2_buckets = 0, segments = 0;
    SplitBucketCount(t, &log2_buckets, &segments);
    auto filter =
        DleftCountingBloomFilter::CreateWithGeometry(log2_buckets, segments, layout.cell_bits);
    if (!filter.ok()) return filter.status();
    inner.reset(new DleftIndex(std::move(filter).value(), DleftCapacity(t, row)));
  }
  std::unique_ptr<FrontFilter> front;
  try {
    front = std::make_unique<FrontFilter>(FrontFilter::BlocksFor(inner->capacity()));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("FilteredDB index: out of memory");
  } catch (const std::length_error&) {
    return absl::ResourceExhaustedError("FilteredDB index: too large");
  }
  return std::make_unique<KeyIndex>(std::move(inner), std::move(front), seed);
}

uint64_t KeyIndex::NewSeed() {
  if (g_seed_fixed.load(std::memory_order_acquire)) return g_fixed_seed.load();
  try {
    std::random_device device;
    return uint64_t{device()} << 32 ^ device();
  } catch (const std::exception&) {
    // No entropy source: the clock and an address, still unknown offline.
    static std::atomic<uint64_t> counter{0};
    const uint64_t t =
        static_cast<uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
    return t ^ reinterpret_cast<uintptr_t>(&counter) * 0x9E3779B97F4A7C15ull ^
           counter.fetch_add(1) * 0xC2B2AE3D27D4EB4Full;
  }
}

void KeyIndex::Serialize(std::string* out) const {
  std::string inner;
  counting_->Serialize(&inner);
  PutFixed64(out, inner.size());
  out->append(inner);
  front_->Serialize(out);
  PutFixed64(out, seed_);
}

absl::StatusOr<std::unique_ptr<KeyIndex>> KeyIndex::Deserialize(std::string_view in) {
  uint64_t inner_len = 0;
  if (!GetFixed64(&in, &inner_len) || inner_len > in.size()) {
    return absl::InvalidArgumentError("index payload: malformed");
  }
  auto inner = DeserializeInner(in.substr(0, inner_len));
  if (!inner.ok()) return inner.status();
  in.remove_prefix(inner_len);
  std::unique_ptr<FrontFilter> front;
  try {
    front = FrontFilter::Deserialize(&in);
  } catch (const std::bad_alloc&) {  // as Create: a Status, never an exception out of Open
    return absl::ResourceExhaustedError("FilteredDB index: out of memory");
  }
  uint64_t seed = 0;
  if (front == nullptr || !GetFixed64(&in, &seed) || !in.empty() ||
      front->num_blocks() != FrontFilter::BlocksFor((*inner)->capacity())) {
    return absl::InvalidArgumentError("index payload: malformed front filter or seed");
  }
  return std::make_unique<KeyIndex>(std::move(inner).value(), std::move(front), seed);
}

}  // namespace blockbloom
