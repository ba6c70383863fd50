#include "filtered_db/key_index.h"

#include <algorithm>

#include "blockbloom/counting_bloom.h"
#include "blockbloom/dleft_counting_bloom.h"

namespace blockbloom {
namespace {

class CountingIndex final : public KeyIndex {
 public:
  CountingIndex(std::unique_ptr<CountingBloomFilter> filter, uint64_t capacity)
      : filter_(std::move(filter)), capacity_(capacity) {}
  absl::Status Insert(uint64_t hash) override {
    filter_->InsertHash(hash);
    return absl::OkStatus();
  }
  absl::Status Erase(uint64_t hash) override { return filter_->EraseHash(hash); }
  bool MayContain(uint64_t hash) const override { return filter_->MayContainHash(hash); }
  uint64_t keys() const override { return filter_->num_keys(); }
  uint64_t capacity() const override { return capacity_; }
  uint64_t memory_bytes() const override { return filter_->memory_bytes(); }
  double estimated_fpr() const override { return filter_->stats().estimated_fpr; }

 private:
  std::unique_ptr<CountingBloomFilter> filter_;
  uint64_t capacity_;
};

class DleftIndex final : public KeyIndex {
 public:
  explicit DleftIndex(std::unique_ptr<DleftCountingBloomFilter> filter)
      : filter_(std::move(filter)) {}
  absl::Status Insert(uint64_t hash) override { return filter_->InsertHash(hash); }
  absl::Status Erase(uint64_t hash) override { return filter_->EraseHash(hash); }
  bool MayContain(uint64_t hash) const override { return filter_->MayContainHash(hash); }
  uint64_t keys() const override { return filter_->num_keys(); }
  uint64_t capacity() const override { return filter_->design_capacity(); }
  uint64_t memory_bytes() const override { return filter_->memory_bytes(); }
  double estimated_fpr() const override { return filter_->stats().estimated_fpr; }

 private:
  std::unique_ptr<DleftCountingBloomFilter> filter_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<KeyIndex>> KeyIndex::Create(IndexKind kind, uint64_t capacity,
                                                           double target_fpr) {
  capacity = std::max<uint64_t>(capacity, 1);
  if (kind == IndexKind::kCounting) {
    auto filter = CountingBloomFilter::CreateForFpr(capacity, target_fpr);
    if (!filter.ok()) return filter.status();
    return std::unique_ptr<KeyIndex>(new CountingIndex(std::move(filter).value(), capacity));
  }
  auto filter = DleftCountingBloomFilter::Create(capacity, target_fpr);
  if (!filter.ok()) return filter.status();
  return std::unique_ptr<KeyIndex>(new DleftIndex(std::move(filter).value()));
}

}  // namespace blockbloom
