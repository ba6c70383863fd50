#include "blockbloom/compact_filter_policy.h"

#include <cmath>
#include <string>
#include <vector>

#include "blocked/format.h"
#include "common/xxh3_inline.h"
#include "compact/builder.h"
#include "leveldb/slice.h"
#include "policy/filter_sizing.h"
#include "policy/policy_base.h"

namespace blockbloom {
namespace {

// The compact policy and the compact migrating policy: the same filters
// (the layout of FilterSizing::Compact, policy/filter_sizing.h), the same
// reader; only the name differs.
class CompactPolicy final : public internal::PolicyBase {
 public:
  CompactPolicy(double bits_per_key, const char* name, bool migrating)
      : PolicyBase(migrating), name_(name), sizing_(bits_per_key) {}

  const char* Name() const override { return name_; }

  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    const size_t count = n > 0 ? static_cast<size_t>(n) : 0;
    // The hashes go to a per-thread buffer (a table build asks for one
    // filter per 2 KiB of data blocks: no heap allocation each time),
    // unless there are so many that a thread should not keep the memory.
    constexpr size_t kKeptHashes = 4096;
    thread_local std::vector<uint64_t> kept;
    std::vector<uint64_t> once;
    std::vector<uint64_t>& hashes = count <= kKeptHashes ? kept : once;
    hashes.resize(count);
    for (size_t i = 0; i < count; ++i) hashes[i] = internal::InlineHashKey(internal::View(keys[i]));
    const internal::CompactLayout layout = sizing_.Compact(count);
    if (layout.version1) {
      compact::AppendFilterV1Consuming(&hashes, sizing_.bits_per_key(), dst);
      return;
    }
    // R, else R - 1 while it still beats the Bloom filter (a system no seed
    // solves: rare, see policy/filter_sizing.h), else the Bloom filter.
    compact::BuildInfo info;
    for (int r = layout.fingerprint_bits;
         r >= 1 && r + 1 >= layout.fingerprint_bits && std::ldexp(1.0, -r) < layout.bloom_fpr;
         --r) {
      if (compact::AppendFilterV2(hashes, r, layout.total_bytes, dst, &info)) return;
    }
    const internal::BloomLayout& bloom = layout.bloom;
    blocked::AppendFilterBits(bloom.bytes, bloom.num_probes, bloom.geometry, dst,
                              [&](uint8_t* bits, blocked::Geometry geometry) {
                                blocked::AddHashes(hashes.data(), count, bloom.bytes,
                                                   bloom.num_probes, geometry, bits);
                              });
  }

 private:
  const char* const name_;
  const internal::FilterSizing sizing_;
};

}  // namespace

const leveldb::FilterPolicy* NewCompactFilterPolicy(double bits_per_key) {
  return new CompactPolicy(bits_per_key, kCompactPolicyName, false);
}

const leveldb::FilterPolicy* NewMigratingCompactFilterPolicy(double bits_per_key) {
  return new CompactPolicy(bits_per_key, internal::kBuiltinPolicyName, true);
}

}  // namespace blockbloom
