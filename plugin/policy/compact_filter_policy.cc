#include "blockbloom/compact_filter_policy.h"

#include <memory>
#include <string>
#include <vector>

#include "common/xxh3_inline.h"
#include "compact/key_probe.h"
#include "leveldb/slice.h"
#include "policy/blocked_policy.h"
#include "policy/filter_sizing.h"
#include "policy/policy_base.h"
#include "targets.h"

namespace blockbloom {
namespace {

// The compact policy and the compact migrating policy: the same filters
// (the layout of FilterSizing::Compact, policy/filter_sizing.h), the same
// reader; only the name differs.
class CompactPolicy final : public internal::PolicyBase {
 public:
  CompactPolicy(double bits_per_key, const char* name, bool migrating)
      : PolicyBase(migrating),
        name_(name),
        sizing_(bits_per_key),
        bloom_(internal::NewBlockedPolicyForTarget(
            simd::internal::KernelTarget(simd::KernelFamily::kSingleProbe), bits_per_key, name,
            migrating, simd::internal::KernelTarget(simd::KernelFamily::kBuild))),
        v2_key_may_match_(compact::V2KeyMayMatchForTarget(
            simd::internal::KernelTarget(simd::KernelFamily::kSingleProbe))) {
    std::vector<uint64_t> none;
    internal::AppendCompactLayout(sizing_.Compact(0), &none, sizing_.bits_per_key(), &empty_);
  }

  const char* Name() const override { return name_; }

  // Version 2, what this policy writes for 3 to 65,536 keys, goes straight
  // to its reader compiled for the single probe's target
  // (compact/key_probe.h): the same answers as PolicyBase::KeyMayMatch, which
  // first tries the blocked format's probe and then recognises the format.
  // Everything else (the Bloom filters of 1-2 keys, version 1, LevelDB's
  // built-in for the migrating policy) goes through PolicyBase.
  // The marker is tested here too, so the other filters pay no extra call.
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    if (compact::MayBeV2Filter(filter.data(), filter.size())) {
      return Answer(v2_key_may_match_(key.data(), key.size(), filter.data(), filter.size()), key,
                    filter);
    }
    return PolicyBase::KeyMayMatch(key, filter);
  }

  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    const size_t count = n > 0 ? static_cast<size_t>(n) : 0;
    if (count == 0) {
      // LevelDB asks for a filter per 2 KiB of data-block offsets, so with
      // values of a few KiB about half are empty: their bytes (the empty
      // set's version-1 encoding) are built once, by the constructor.
      dst->append(empty_);
      return;
    }
    // The hashes go to a per-thread buffer (a table build asks for one
    // filter per 2 KiB of data blocks: no heap allocation each time),
    // unless there are so many that a thread should not keep the memory.
    constexpr size_t kKeptHashes = 4096;
    thread_local std::vector<uint64_t> kept;
    std::vector<uint64_t> once;
    const internal::CompactLayout layout = sizing_.Compact(count);
    if (!layout.version1 && layout.fingerprint_bits == 0 && bloom_ != nullptr) {
      // The Bloom filter: no fingerprint width beats it, or its FPR is
      // negligible (1-2 keys in 64 bits at every bits/key; see
      // FilterSizing::kNegligibleFpr): its layout is the
      // blocked policy's for as many keys (FilterSizing::Bloom), hashed and
      // set in one loop compiled for the target. The same bytes as
      // AppendCompactLayout's Bloom filter; compact_bench BM_BuildVs at 1
      // key, 10 bits/key: 28.7 -> 19.0 ns (the blocked policy: 16.4).
      bloom_->CreateFilter(keys, n, dst);
      return;
    }
    std::vector<uint64_t>& hashes = count <= kKeptHashes ? kept : once;
    hashes.resize(count);
    for (size_t i = 0; i < count; ++i) hashes[i] = internal::InlineHashKey(internal::View(keys[i]));
    internal::AppendCompactLayout(layout, &hashes, sizing_.bits_per_key(), dst);
  }

 private:
  const char* const name_;
  const internal::FilterSizing sizing_;
  // The Bloom filters' builder (nullptr if its target is not compiled).
  const std::unique_ptr<const internal::BlockedPolicy> bloom_;
  std::string empty_;  // the filter of no keys
  // The version-2 probe on the single probe's target.
  const compact::V2KeyMayMatchFn v2_key_may_match_;
};

}  // namespace

const leveldb::FilterPolicy* NewCompactFilterPolicy(double bits_per_key) {
  return new CompactPolicy(bits_per_key, kCompactPolicyName, false);
}

const leveldb::FilterPolicy* NewMigratingCompactFilterPolicy(double bits_per_key) {
  return new CompactPolicy(bits_per_key, internal::kBuiltinPolicyName, true);
}

}  // namespace blockbloom
