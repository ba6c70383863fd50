#include "blockbloom/compact_filter_policy.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
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
        sizing_(internal::FilterSizing::For(bits_per_key)),
        bloom_(internal::NewBlockedPolicyForTarget(
            simd::internal::KernelTarget(simd::KernelFamily::kSingleProbe), bits_per_key, name,
            migrating, simd::internal::KernelTarget(simd::KernelFamily::kBuild))),
        v2_key_may_match_(compact::V2KeyMayMatchForTarget(
            simd::internal::KernelTarget(simd::KernelFamily::kSingleProbe))) {
    std::vector<uint64_t> none;
    internal::AppendCompactLayout(sizing_->Compact(0), &none, sizing_->bits_per_key(), &empty_);
    for (size_t n = 1; n <= kStackKeys; ++n) {
      if (bloom_ != nullptr && WritesBloom(sizing_->Compact(n))) {
        bloom_counts_ |= uint64_t{1} << (n - 1);
      }
    }
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
      // LevelDB's filter block never asks for a filter of no keys (it skips
      // them); other callers may: the empty set's version-1 encoding, built
      // once by the constructor.
      dst->append(empty_);
      return;
    }
    // The Bloom filter: no fingerprint width beats it, or its FPR is
    // negligible (1-2 keys in 64 bits at every bits/key; see
    // FilterSizing::kNegligibleFpr): its layout is the blocked policy's for
    // as many keys (FilterSizing::Bloom), hashed and set in one loop
    // compiled for the target, the same bytes as AppendCompactLayout's Bloom
    // filter. Up to kStackKeys keys one bit of bloom_counts_ says so, before
    // any layout or buffer is touched (testing the layout's fields instead,
    // one copy of it for every count, took the compact build at 1-2 keys
    // from 1.06-1.10x the blocked policy's time to 1.06-1.17x; BM_BuildVs, 8
    // alternated runs), and bloom_ takes it by a direct call:
    // compact over the built-in at 1 key 1.16 -> 1.03 (4 bits/key), 0.77 ->
    // 0.66 (10), 0.74 -> 0.60 (20); at 2 keys 1.39 -> 1.30, 0.88 -> 0.83,
    // 0.61 -> 0.54 (compact_bench BM_BuildVs, medians of 4 alternated runs,
    // AMD EPYC Zen 3), where it took the layout, the per-thread buffer's
    // guard and bloom_'s virtual CreateFilter first.
    if (count <= kStackKeys) {
      if ((bloom_counts_ >> (count - 1) & 1) != 0) {
        bloom_->AppendBloom(keys, count, dst);
        return;
      }
      // Version 2 (version 1 is only for the empty set and more than
      // compact::kV2MaxKeys keys): the hashes on the stack.
      uint64_t hashes[kStackKeys];
      for (size_t i = 0; i < count; ++i) {
        hashes[i] = internal::InlineHashKey(internal::View(keys[i]));
      }
      internal::AppendCompactLayout(sizing_->Compact(count), absl::MakeConstSpan(hashes, count),
                                    dst);
      return;
    }
    const internal::CompactLayout layout = sizing_->Compact(count);
    if (WritesBloom(layout) && bloom_ != nullptr) {
      bloom_->AppendBloom(keys, count, dst);
      return;
    }
    // The hashes go to a per-thread buffer (a table build asks for one
    // filter per 2 KiB of data blocks: no heap allocation each time),
    // unless there are so many that a thread should not keep the memory.
    constexpr size_t kKeptHashes = 4096;
    thread_local std::vector<uint64_t> kept;
    std::vector<uint64_t> once;
    std::vector<uint64_t>& hashes = count <= kKeptHashes ? kept : once;
    hashes.resize(count);
    for (size_t i = 0; i < count; ++i) hashes[i] = internal::InlineHashKey(internal::View(keys[i]));
    internal::AppendCompactLayout(layout, &hashes, sizing_->bits_per_key(), dst);
  }

 private:
  const char* const name_;
  const std::shared_ptr<const internal::FilterSizing> sizing_;  // FilterSizing::For
  // Filters of up to this many keys are decided by bloom_counts_ and hashed
  // on the stack (512 bytes).
  static constexpr size_t kStackKeys = 64;
  static bool WritesBloom(const internal::CompactLayout& layout) {
    return !layout.version1 && layout.fingerprint_bits == 0;
  }

  // The Bloom filters' builder (nullptr if its target is not compiled).
  const std::unique_ptr<const internal::BlockedPolicy> bloom_;
  // Bit n - 1: the layout of n <= kStackKeys keys is the Bloom filter, and
  // bloom_ writes it (0 if bloom_ is nullptr: AppendCompactLayout does).
  uint64_t bloom_counts_ = 0;
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
