#include "blockbloom/leveldb_filter_policy.h"

#include "policy/blocked_policy.h"
#include "targets.h"

namespace blockbloom {
// Each policy's KeyMayMatch is compiled for the CPU's best target
// (policy/blocked_policy.h); the dispatch happens here, once.
const leveldb::FilterPolicy* NewBlockedBloomFilterPolicy(double bits_per_key) {
  return internal::NewBlockedPolicyForTarget(simd::internal::BestTarget(), bits_per_key,
                                             kBlockedBloomPolicyName, false);
}

const leveldb::FilterPolicy* NewMigratingFilterPolicy(double bits_per_key) {
  return internal::NewBlockedPolicyForTarget(simd::internal::BestTarget(), bits_per_key,
                                             internal::kBuiltinPolicyName, true);
}

}  // namespace blockbloom
