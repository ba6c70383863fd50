#include "filtered_db/key_index.h"

#include <algorithm>
#include <atomic>
#include <cstring>
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

// The read path's first check: an insert-only blocked Bloom filter over
// every key inserted since the index was built (deleted keys stay until the
// next rebuild: a superset of the live keys, so it may rule a key out on its
// own). One 64-byte block per key, k = 7 bits at 10 bits per key (~1% FPR
// while it holds `capacity` keys; Putze et al. WEA 2007 s.3): an absent key
// usually costs one cache line instead of the counting filter's four (d-left)
// buckets. Bits are std::atomic words: one writer at a time (relaxed load and
// store), relaxed loads to query; a query that happens after an insert sees
// its bits (per-word coherence), as for the counting filters.
class FrontFilter {
 public:
  static constexpr int kProbes = 7;
  static constexpr double kBitsPerKey = 10.0;

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
    uint64_t bits = Mix(hash);
    bool all = true;
    for (int i = 0; i < kProbes; ++i, bits >>= 9) {
      const unsigned bit = bits & 511;
      all &= (b.words[bit >> 6].load(std::memory_order_relaxed) >> (bit & 63)) & 1;
    }
    return all;
  }
  uint64_t inserted() const { return inserted_.load(std::memory_order_relaxed); }
  uint64_t num_blocks() const { return blocks_.size(); }
  uint64_t memory_bytes() const { return blocks_.size() * sizeof(Block); }

  void Serialize(std::string* out) const {
    PutU64(out, blocks_.size());
    PutU64(out, inserted());
    internal::AppendAtomicWords(blocks_, out);
  }
  // Reads what Serialize wrote from the front of *in; false on a mismatch.
  static std::unique_ptr<FrontFilter> Deserialize(std::string_view* in) {
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

 private:
  struct alignas(64) Block {
    std::atomic<uint64_t> words[8];
  };
  // Block: the high bits of the hash (multiply-shift range reduction).
  uint64_t BlockOf(uint64_t hash) const { return internal::FastRange64(hash, blocks_.size()); }
  // Bit positions: a remix of the hash (the SplitMix64 finaliser, Steele et
  // al. 2014), independent of the block choice and of the counting filters'
  // use of the same hash.
  static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  std::vector<Block> blocks_;
  std::atomic<uint64_t> inserted_{0};
};

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

class DleftIndex final : public KeyIndex {
 public:
  explicit DleftIndex(std::unique_ptr<DleftCountingBloomFilter> filter)
      : filter_(std::move(filter)) {}
  absl::Status Insert(uint64_t hash) override { return filter_->InsertHash(hash); }
  absl::Status Erase(uint64_t hash) override { return filter_->EraseHash(hash); }
  bool MayContain(uint64_t hash) const override { return filter_->MayContainHash(hash); }
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

// The index FilteredDB uses: the front filter, then the counting filter.
class FrontedIndex final : public KeyIndex {
 public:
  FrontedIndex(std::unique_ptr<KeyIndex> inner, std::unique_ptr<FrontFilter> front)
      : inner_(std::move(inner)), front_(std::move(front)) {}
  absl::Status Insert(uint64_t hash) override {
    front_->Insert(hash);  // even if the counting filter refuses: a superset
    return inner_->Insert(hash);
  }
  absl::Status Erase(uint64_t hash) override { return inner_->Erase(hash); }
  bool MayContain(uint64_t hash) const override {
    return front_->MayContain(hash) && inner_->MayContain(hash);
  }
  IndexKind kind() const override { return inner_->kind(); }
  uint64_t keys() const override { return inner_->keys(); }
  uint64_t capacity() const override { return inner_->capacity(); }
  uint64_t memory_bytes() const override { return inner_->memory_bytes() + front_->memory_bytes(); }
  double estimated_fpr() const override { return inner_->estimated_fpr(); }
  uint64_t inserted_since_build() const override { return front_->inserted(); }
  void Serialize(std::string* out) const override {
    std::string inner;
    inner_->Serialize(&inner);
    PutU64(out, inner.size());
    out->append(inner);
    front_->Serialize(out);
  }

 private:
  std::unique_ptr<KeyIndex> inner_;
  std::unique_ptr<FrontFilter> front_;
};

absl::StatusOr<std::unique_ptr<KeyIndex>> DeserializeInner(std::string_view in) {
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
    return std::unique_ptr<KeyIndex>(new CountingIndex(std::move(filter).value(), capacity));
  }
  if (kind == 1) {
    uint8_t log2 = 0;
    if (!GetU8(&in, &log2)) return bad();
    auto filter = DleftCountingBloomFilter::FromTables(log2, keys, in);
    if (!filter.ok()) return filter.status();
    if ((*filter)->design_capacity() != capacity) return bad();
    return std::unique_ptr<KeyIndex>(new DleftIndex(std::move(filter).value()));
  }
  return bad();
}

}  // namespace

absl::StatusOr<std::unique_ptr<KeyIndex>> KeyIndex::Create(IndexKind kind, uint64_t capacity,
                                                           double target_fpr) {
  capacity = std::max<uint64_t>(capacity, 1);
  std::unique_ptr<KeyIndex> inner;
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
  return std::unique_ptr<KeyIndex>(new FrontedIndex(std::move(inner), std::move(front)));
}

absl::StatusOr<std::unique_ptr<KeyIndex>> KeyIndex::Deserialize(std::string_view in) {
  uint64_t inner_len = 0;
  if (!GetU64(&in, &inner_len) || inner_len > in.size()) {
    return absl::InvalidArgumentError("index payload: malformed");
  }
  auto inner = DeserializeInner(in.substr(0, inner_len));
  if (!inner.ok()) return inner.status();
  in.remove_prefix(inner_len);
  std::unique_ptr<FrontFilter> front = FrontFilter::Deserialize(&in);
  if (front == nullptr || !in.empty() ||
      front->num_blocks() != FrontFilter::BlocksFor((*inner)->capacity())) {
    return absl::InvalidArgumentError("index payload: malformed front filter");
  }
  return std::unique_ptr<KeyIndex>(new FrontedIndex(std::move(inner).value(), std::move(front)));
}

}  // namespace blockbloom
