#include "policy/policy_base.h"

#include "blocked/key_probe.h"
#include "common/live_set.h"
#include "format/leveldb_bloom.h"

namespace blockbloom {
namespace internal {
namespace {
// The live blockbloom policies, so GetFilterPolicyStats can tell one from any
// other FilterPolicy without dynamic_cast: upstream LevelDB builds with
// -fno-rtti, and a dynamic_cast on its built-in policy would then crash.
// Never destroyed: a policy may be freed during static destruction.
LiveSet<leveldb::FilterPolicy>& LivePolicies() {
  static auto* live = new LiveSet<leveldb::FilterPolicy>();
  return *live;
}
}  // namespace

PolicyBase::PolicyBase(bool reads_builtin) : reads_builtin_(reads_builtin) {
  LivePolicies().Add(this);
}

PolicyBase::~PolicyBase() { LivePolicies().Remove(this); }

FilterPolicyStats PolicyBase::StatsOf(const leveldb::FilterPolicy* policy) {
  FilterPolicyStats out;
  if (policy == nullptr) return out;
  // Registered as the FilterPolicy subobject of a live PolicyBase.
  LivePolicies().IfLive(policy, [&] { out = static_cast<const PolicyBase*>(policy)->stats(); });
  return out;
}

__attribute__((flatten)) bool PolicyBase::KeyMayMatch(const leveldb::Slice& key,
                                                      const leveldb::Slice& filter) const {
  // Blocked filters (every filter our policies write): hash, parse and probe
  // in one call on the CPU's best target (blocked/key_probe.h).
  return Answer(blocked::EncodedKeyMayMatch(key.data(), key.size(), filter.data(), filter.size()),
                key, filter);
}

bool PolicyBase::ReadOther(const leveldb::Slice& key, std::string_view filter) const {
  // LevelDB's built-in format first, without format::Recognize: the
  // migrating policies read it on every Get of a table written before them.
  if (format::IsLevelDbBuiltin(filter)) {
    return !reads_builtin_ || format::LevelDbBloomMayMatch(View(key), filter);
  }
  // Every other encoding (Recognize gives the built-in kind, the one with no
  // reader, only to what IsLevelDbBuiltin accepts).
  return format::Recognize(filter).read(filter, InlineHashKey(View(key)));
}

}  // namespace internal

FilterPolicyStats GetFilterPolicyStats(const leveldb::FilterPolicy* policy) {
  return internal::PolicyBase::StatsOf(policy);
}

}  // namespace blockbloom
