#include "blockbloom/compact_filter_policy.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/hash.h"
#include "blocked/format.h"
#include "compact/builder.h"
#include "compact/format.h"
#include "leveldb/slice.h"

namespace blockbloom {
namespace {

std::string_view View(const leveldb::Slice& s) { return {s.data(), s.size()}; }

// Appends a compact filter for keys[0, n) to *dst: the same bytes
// CompactFilter::BuildFromKeys(...).Serialize() gives.
void AppendCompactFilter(const leveldb::Slice* keys, int n, double bits_per_key,
                         std::string* dst) {
  const size_t count = n > 0 ? static_cast<size_t>(n) : 0;
  std::vector<uint64_t> hashes(count);
  for (size_t i = 0; i < count; ++i) hashes[i] = HashKey(View(keys[i]));
  compact::AppendFilterConsuming(&hashes, bits_per_key, dst);
}

class CompactPolicy final : public leveldb::FilterPolicy {
 public:
  explicit CompactPolicy(double bits_per_key) : bits_per_key_(ClampBitsPerKey(bits_per_key)) {}

  const char* Name() const override { return kCompactPolicyName; }

  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    AppendCompactFilter(keys, n, bits_per_key_, dst);
  }

  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    return compact::EncodedMayContainHash(View(filter), HashKey(View(key)));
  }

 private:
  const double bits_per_key_;
};

class MigratingCompactPolicy final : public leveldb::FilterPolicy {
 public:
  explicit MigratingCompactPolicy(double bits_per_key)
      : bits_per_key_(ClampBitsPerKey(bits_per_key)),
        // Built-in filters are answered by LevelDB's own code, exactly as
        // stock LevelDB answers them. Its bits_per_key only matters for
        // CreateFilter, which is never called on it.
        builtin_(leveldb::NewBloomFilterPolicy(10)) {}

  const char* Name() const override { return builtin_->Name(); }

  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    AppendCompactFilter(keys, n, bits_per_key_, dst);
  }

  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    const std::string_view bytes = View(filter);
    if (compact::HasCompactMarker(bytes)) {
      return compact::EncodedMayContainHash(bytes, HashKey(View(key)));
    }
    if (blocked::HasBlockedMarker(bytes)) {
      return blocked::EncodedMayContainHash(bytes, HashKey(View(key)));
    }
    // Built-in format (last byte <= 30), or unknown: LevelDB's own answer
    // (which is "may match" for anything it cannot read).
    return builtin_->KeyMayMatch(key, filter);
  }

 private:
  const double bits_per_key_;
  const std::unique_ptr<const leveldb::FilterPolicy> builtin_;
};

}  // namespace

const leveldb::FilterPolicy* NewCompactFilterPolicy(double bits_per_key) {
  return new CompactPolicy(bits_per_key);
}

const leveldb::FilterPolicy* NewMigratingCompactFilterPolicy(double bits_per_key) {
  return new MigratingCompactPolicy(bits_per_key);
}

}  // namespace blockbloom
