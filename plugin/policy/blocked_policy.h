// The blocked policy and the blocked migrating policy
// (blockbloom/leveldb_filter_policy.h): the same filters, the same reader;
// only the name differs.
//
// Every object is created as a subclass compiled for one Highway target, the
// CPU's best when the policy is created (blocked_policy.cc): its KeyMayMatch
// inlines the key's hash, the trailer parse, the in-register probe and the
// count, so LevelDB's virtual call lands in straight-line code for that
// target with no further call. The dispatch is paid once, at creation,
// instead of through a pointer on every probe (PolicyBase::KeyMayMatch, the
// compact policies' path). simd::ForceTargetForTesting affects policies
// created after it.
//
// Thread-safety: as PolicyBase (immutable but for relaxed counters).
#ifndef BLOCKBLOOM_PLUGIN_POLICY_BLOCKED_POLICY_H_
#define BLOCKBLOOM_PLUGIN_POLICY_BLOCKED_POLICY_H_

#include <cstdint>
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
  // CreateFilter (in the per-target subclass): the layout of
  // FilterSizing::Bloom (policy/filter_sizing.h), the keys hashed and set in
  // one loop compiled for the target (key_probe-inl.h, AddKeys):
  // blocked::AppendFilter's bytes for that layout.

  // The Highway target bit KeyMayMatch was compiled for.
  int64_t target() const { return target_; }

 protected:
  BlockedPolicy(double bits_per_key, const char* name, bool migrating, int64_t target);

  const FilterSizing& sizing() const { return sizing_; }

 private:
  const char* const name_;
  const FilterSizing sizing_;
  const int64_t target_;
};

// A new BlockedPolicy whose KeyMayMatch is compiled for `target` (one
// compiled target bit, see simd/targets.h), or nullptr if that target is not
// compiled. `name` must outlive the policy. REQUIRES: the CPU supports
// `target` (it is in simd::SupportedTargets()).
const BlockedPolicy* NewBlockedPolicyForTarget(int64_t target, double bits_per_key,
                                               const char* name, bool migrating);

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_PLUGIN_POLICY_BLOCKED_POLICY_H_
