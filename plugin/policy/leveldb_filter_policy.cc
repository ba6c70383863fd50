#include "blockbloom/leveldb_filter_policy.h"

#include <string>
#include <string_view>

#include "blockbloom/blocked_bloom.h"
#include "blocked/format.h"
#include "common/hash_slices.h"
#include "leveldb/slice.h"
#include "policy/policy_base.h"

namespace blockbloom {
namespace {

// Appends a blocked filter for keys[0, n) to *dst: version 2 (flat) for
// filters of at most blocked::kFlatMaxBytes bit bytes, version 1 above
// (docs/FORMAT.md), built straight into dst.
void AppendBlockedFilter(const leveldb::Slice* keys, int n, double bits_per_key, int num_probes,
                         std::string* dst) {
  const size_t count = n > 0 ? static_cast<size_t>(n) : 0;
  blocked::AppendFilter(
      count, BlockedBloomBytes(count, bits_per_key), num_probes,
      [&](size_t i) { return internal::View(keys[i]); }, dst);
}

// The blocked policy and the blocked migrating policy: the same filters,
// the same reader; only the name differs.
class BlockedPolicy final : public internal::PolicyBase {
 public:
  BlockedPolicy(double bits_per_key, const char* name, bool migrating)
      : PolicyBase(migrating),
        name_(name),
        bits_per_key_(ClampBitsPerKey(bits_per_key)),
        num_probes_(BlockedBloomProbes(bits_per_key_)) {}

  const char* Name() const override { return name_; }

  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    AppendBlockedFilter(keys, n, bits_per_key_, num_probes_, dst);
  }

 private:
  const char* const name_;
  const double bits_per_key_;
  const int num_probes_;
};

// LevelDB's built-in policy's name (leveldb::NewBloomFilterPolicy).
constexpr char kBuiltinName[] = "leveldb.BuiltinBloomFilter2";

}  // namespace

const leveldb::FilterPolicy* NewBlockedBloomFilterPolicy(double bits_per_key) {
  return new BlockedPolicy(bits_per_key, kBlockedBloomPolicyName, false);
}

const leveldb::FilterPolicy* NewMigratingFilterPolicy(double bits_per_key) {
  return new BlockedPolicy(bits_per_key, kBuiltinName, true);
}

}  // namespace blockbloom
