#include "blockbloom/leveldb_filter_policy.h"

#include "policy/blocked_policy.h"
#include "targets.h"

namespace blockbloom {
namespace {

// Each policy's KeyMayMatch is compiled for the single probe's target and
// its CreateFilter sets bits on the build's (simd/targets.h, KernelTarget;
// policy/blocked_policy.h): the dispatch happens here, once.
const leveldb::FilterPolicy* NewPolicy(double bits_per_key, const char* name, bool migrating) {
  return internal::NewBlockedPolicyForTarget(
      simd::internal::KernelTarget(simd::KernelFamily::kSingleProbe), bits_per_key, name, migrating,
      simd::internal::KernelTarget(simd::KernelFamily::kBuild));
}

}  // namespace

const leveldb::FilterPolicy* NewBlockedBloomFilterPolicy(double bits_per_key) {
  return NewPolicy(bits_per_key, kBlockedBloomPolicyName, false);
}

const leveldb::FilterPolicy* NewMigratingFilterPolicy(double bits_per_key) {
  return NewPolicy(bits_per_key, internal::kBuiltinPolicyName, true);
}

}  // namespace blockbloom
