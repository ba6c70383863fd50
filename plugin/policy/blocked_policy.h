// The blocked policy and the blocked migrating policy
// (blockbloom/leveldb_filter_policy.h): the same filters, the same reader;
// only the name differs.
//
// Every object is created as a subclass compiled for one Highway target, the
// single probe's when the policy is created (simd/targets.h, KernelTarget;
// blocked_policy.cc): its KeyMayMatch
// inlines the key's hash, the trailer parse, the in-register probe and the
// count, so LevelDB's virtual call lands in straight-line code for that
// target with no further call. The dispatch is paid once, at creation,
// instead of through a pointer on every probe (PolicyBase::KeyMayMatch).
// The compact policies likewise pick their version-2 probe's target when
// created (compact/key_probe.h). simd::ForceTargetForTesting affects
// policies created after it; every target gives the same answers.
//
// Thread-safety: as PolicyBase (immutable but for relaxed counters).
#ifndef BLOCKBLOOM_PLUGIN_POLICY_BLOCKED_POLICY_H_
#define BLOCKBLOOM_PLUGIN_POLICY_BLOCKED_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"
#include "policy/filter_sizing.h"
#include "policy/policy_base.h"

namespace blockbloom {
namespace internal {

class BlockedPolicy : public PolicyBase {
 public:
  const char* Name() const override;
  // CreateFilter (in the per-target subclass) is AppendBloom.

  // Appends the filter of keys[0, count): the layout of FilterSizing::Bloom
  // (policy/filter_sizing.h), the keys hashed and set in one loop compiled
  // for build_target() (key_probe-inl.h, AddKeys): blocked::AppendFilter's
  // bytes for that layout. Not virtual: the compact policies write their
  // Bloom filters (1-2 keys) through it with a direct call.
  void AppendBloom(const leveldb::Slice* keys, size_t count, std::string* dst) const;

  // The Highway target bit KeyMayMatch was compiled for, and the one
  // CreateFilter sets the bits on.
  int64_t target() const { return target_; }
  int64_t build_target() const { return build_target_; }

 protected:
  // Sets the bits of keys[0, n) in zeroed filter bits (key_probe-inl.h,
  // AddKeys, compiled for build_target()).
  using AddKeysFn = void (*)(const leveldb::Slice* keys, size_t n, uint64_t total_bits,
                             int num_probes, uint8_t* bits, bool flat);

  BlockedPolicy(double bits_per_key, const char* name, bool migrating, int64_t target,
                int64_t build_target);

 private:
  const char* const name_;
  const std::shared_ptr<const FilterSizing> sizing_;  // FilterSizing::For
  const int64_t target_;
  const int64_t build_target_;
  const AddKeysFn add_keys_;
};

// A new BlockedPolicy whose KeyMayMatch is compiled for `target` and whose
// CreateFilter sets bits on `build_target` (0: `target`), each one compiled
// target bit (simd/targets.h), or nullptr if either is not compiled. `name`
// must outlive the policy. REQUIRES: the CPU supports both (they are in
// simd::SupportedTargets()).
const BlockedPolicy* NewBlockedPolicyForTarget(int64_t target, double bits_per_key,
                                               const char* name, bool migrating,
                                               int64_t build_target = 0);

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_PLUGIN_POLICY_BLOCKED_POLICY_H_
