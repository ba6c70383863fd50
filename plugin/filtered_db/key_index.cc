#include "filtered_db/key_index.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "blockbloom/counting_bloom.h"
#include "blockbloom/dleft_counting_bloom.h"
#include "common/coding.h"
#include "range_reduction.h"

namespace blockbloom {
namespace {

// Payload layout (docs/FORMAT.md, "FilteredDB index file"), little-endian:
//   u8 kind (0 counting, 1 d-left) | u64 capacity | u64 keys |
//   counting: u64 num_blocks | u8 num_probes | counters
//   d-left:   u8 log2_buckets | tables
void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i, v >>= 8) out->push_back(static_cast<char>(v & 0xff));
}
bool GetU64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = 0;
  for (int i = 7; i >= 0; --i) *v = (*v << 8) | static_cast<unsigned char>((*in)[i]);
  in->remove_prefix(8);
  return true;
}
bool GetU8(std::string_view* in, uint8_t* v) {
  if (in->empty()) return false;
  *v = static_cast<unsigned char>((*in)[0]);
  in->remove_prefix(1);
  return true;
}

}  // namespace

void FrontFilter::Serialize(std::string* out) const {
  PutU64(out, blocks_.size());
  PutU64(out, inserted());
  internal::AppendAtomicWords(blocks_, out);
}

std::unique_ptr<FrontFilter> FrontFilter::Deserialize(std::string_view* in) {
  uint64_t num_blocks = 0, inserted = 0;
  if (!GetU64(in, &num_blocks) || !GetU64(in, &inserted) || num_blocks == 0 ||
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
  void Serialize(std::string* out) const override {
    out->push_back(0);
    PutU64(out, capacity_);
    PutU64(out, filter_->num_keys());
    PutU64(out, filter_->num_blocks());
    out->push_back(static_cast<char>(filter_->num_probes()));
    filter_->AppendCounters(out);
  }

 private:
  std::unique_ptr<CountingBloomFilter> filter_;
  uint64_t capacity_;
};

class DleftIndex final : public KeyIndex::Counting {
 public:
  explicit DleftIndex(std::unique_ptr<DleftCountingBloomFilter> filter)
      : filter_(std::move(filter)) {}
  absl::Status Insert(uint64_t hash) override { return filter_->InsertHash(hash); }
  absl::Status Erase(uint64_t hash) override { return filter_->EraseHash(hash); }
  bool MayContain(uint64_t hash) const override { return filter_->MayContainHash(hash); }
  void Prefetch(uint64_t hash) const override { filter_->PrefetchHash(hash); }
  IndexKind kind() const override { return IndexKind::kDleft; }
  uint64_t keys() const override { return filter_->num_keys(); }
  uint64_t capacity() const override { return filter_->design_capacity(); }
  uint64_t memory_bytes() const override { return filter_->memory_bytes(); }
  double estimated_fpr() const override { return filter_->stats().estimated_fpr; }
  void Serialize(std::string* out) const override {
    out->push_back(1);
    PutU64(out, capacity());
    PutU64(out, filter_->num_keys());
    out->push_back(static_cast<char>(filter_->log2_buckets()));
    filter_->AppendTables(out);
  }

 private:
  std::unique_ptr<DleftCountingBloomFilter> filter_;
};

absl::StatusOr<std::unique_ptr<KeyIndex::Counting>> DeserializeInner(std::string_view in) {
  const auto bad = [] { return absl::InvalidArgumentError("index payload: malformed"); };
  uint8_t kind = 0;
  uint64_t capacity = 0, keys = 0;
  if (!GetU8(&in, &kind) || !GetU64(&in, &capacity) || !GetU64(&in, &keys)) return bad();
  if (kind == 0) {
    uint64_t num_blocks = 0;
    uint8_t probes = 0;
    if (!GetU64(&in, &num_blocks) || !GetU8(&in, &probes) || capacity == 0) return bad();
    auto filter = CountingBloomFilter::FromCounters(num_blocks, probes, keys, in);
    if (!filter.ok()) return filter.status();
    return std::unique_ptr<KeyIndex::Counting>(
        new CountingIndex(std::move(filter).value(), capacity));
  }
  if (kind == 1) {
    uint8_t log2 = 0;
    if (!GetU8(&in, &log2)) return bad();
    auto filter = DleftCountingBloomFilter::FromTables(log2, keys, in);
    if (!filter.ok()) return filter.status();
    if ((*filter)->design_capacity() != capacity) return bad();
    return std::unique_ptr<KeyIndex::Counting>(new DleftIndex(std::move(filter).value()));
  }
  return bad();
}

}  // namespace

absl::StatusOr<std::unique_ptr<KeyIndex>> KeyIndex::Create(IndexKind kind, uint64_t capacity,
                                                           double target_fpr) {
  capacity = std::max<uint64_t>(capacity, 1);
  std::unique_ptr<KeyIndex::Counting> inner;
  if (kind == IndexKind::kCounting) {
    auto filter = CountingBloomFilter::CreateForFpr(capacity, target_fpr);
    if (!filter.ok()) return filter.status();
    inner.reset(new CountingIndex(std::move(filter).value(), capacity));
  } else {
    auto filter = DleftCountingBloomFilter::Create(capacity, target_fpr);
    if (!filter.ok()) return filter.status();
    inner.reset(new DleftIndex(std::move(filter).value()));
  }
  std::unique_ptr<FrontFilter> front;
  try {
    front = std::make_unique<FrontFilter>(FrontFilter::BlocksFor(inner->capacity()));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("FilteredDB index: out of memory");
  } catch (const std::length_error&) {
    return absl::ResourceExhaustedError("FilteredDB index: too large");
  }
  return std::make_unique<KeyIndex>(std::move(inner), std::move(front));
}

void KeyIndex::Serialize(std::string* out) const {
  std::string inner;
  counting_->Serialize(&inner);
  PutU64(out, inner.size());
  out->append(inner);
  front_->Serialize(out);
}

absl::StatusOr<std::unique_ptr<KeyIndex>> KeyIndex::Deserialize(std::string_view in) {
  uint64_t inner_len = 0;
  if (!GetU64(&in, &inner_len) || inner_len > in.size()) {
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
  if (front == nullptr || !in.empty() ||
      front->num_blocks() != FrontFilter::BlocksFor((*inner)->capacity())) {
    return absl::InvalidArgumentError("index payload: malformed front filter");
  }
  return std::make_unique<KeyIndex>(std::move(inner).value(), std::move(front));
}

}  // namespace blockbloom
