#include "blockbloom/leveldb_filter_policy.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "blockbloom/blocked_bloom.h"
#include "common/xxh3_inline.h"
#include "blocked/format.h"
#include "blocked_bloom_simd.h"
#include "leveldb/slice.h"

namespace blockbloom {
namespace {

std::string_view View(const leveldb::Slice& s) { return {s.data(), s.size()}; }

// Appends a blocked filter for keys[0, n) to *dst. Builds straight into dst
// (the kernels need no alignment and never touch a byte past the filter),
// hashing in slices small enough for the hashes to stay in L1.
void AppendBlockedFilter(const leveldb::Slice* keys, int n, double bits_per_key,
                         int num_probes, std::string* dst) {
  const size_t count = n > 0 ? static_cast<size_t>(n) : 0;
  const uint64_t num_bytes = BlockedBloomBytes(count, bits_per_key);
  const size_t start = dst->size();
  dst->resize(start + static_cast<size_t>(num_bytes), '\0');
  uint8_t* bits = reinterpret_cast<uint8_t*>(&(*dst)[start]);
  constexpr size_t kSlice = 256;
  uint64_t hashes[kSlice];
  for (size_t first = 0; first < count; first += kSlice) {
    const size_t len = std::min(kSlice, count - first);
    for (size_t i = 0; i < len; ++i) hashes[i] = internal::InlineHashKey(View(keys[first + i]));
    simd::AddHashes(hashes, len, num_bytes * 8, num_probes, bits);
  }
  blocked::AppendTrailer(num_probes, dst);
}

class BlockedBloomPolicy final : public leveldb::FilterPolicy {
 public:
  explicit BlockedBloomPolicy(double bits_per_key)
      : bits_per_key_(ClampBitsPerKey(bits_per_key)),
        num_probes_(BlockedBloomProbes(bits_per_key_)) {}

  const char* Name() const override { return kBlockedBloomPolicyName; }

  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    AppendBlockedFilter(keys, n, bits_per_key_, num_probes_, dst);
  }

  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    return blocked::EncodedMayContainHash(View(filter), internal::InlineHashKey(View(key)));
  }

 private:
  const double bits_per_key_;
  const int num_probes_;
};

class MigratingPolicy final : public leveldb::FilterPolicy {
 public:
  explicit MigratingPolicy(double bits_per_key)
      : bits_per_key_(ClampBitsPerKey(bits_per_key)),
        num_probes_(BlockedBloomProbes(bits_per_key_)),
        // Reads of built-in filters are delegated to LevelDB's own code, so
        // they are answered exactly as stock LevelDB answers them. Its
        // bits_per_key only matters for CreateFilter, which we never call.
        builtin_(leveldb::NewBloomFilterPolicy(10)) {}

  const char* Name() const override { return builtin_->Name(); }

  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    AppendBlockedFilter(keys, n, bits_per_key_, num_probes_, dst);
  }

  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    if (blocked::HasBlockedMarker(View(filter))) {
      return blocked::EncodedMayContainHash(View(filter), internal::InlineHashKey(View(key)));
    }
    return builtin_->KeyMayMatch(key, filter);
  }

 private:
  const double bits_per_key_;
  const int num_probes_;
  const std::unique_ptr<const leveldb::FilterPolicy> builtin_;
};

}  // namespace

const leveldb::FilterPolicy* NewBlockedBloomFilterPolicy(double bits_per_key) {
  return new BlockedBloomPolicy(bits_per_key);
}

const leveldb::FilterPolicy* NewMigratingFilterPolicy(double bits_per_key) {
  return new MigratingPolicy(bits_per_key);
}

}  // namespace blockbloom
