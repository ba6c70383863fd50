#include "policy/policy_base.h"

#include "blocked/key_probe.h"
#include "common/live_set.h"
#include "format/leveldb_bloom.h"

#include <mutex>
#include <vector>

namespace blockbloom {
namespace internal {
namespace {

// Slots 0..kSharedSlot-1 are owned by live threads; free ones are reused.
struct SlotPool {
  std::mutex mu;
  std::vector<int> free_slots;
  int next = 0;
};
SlotPool& Pool() {
  static SlotPool* pool = new SlotPool();  // never destroyed: threads may exit late
  return *pool;
}

// Returns the thread's slot to the pool when the thread exits.
struct SlotHolder {
  int slot = -1;
  ~SlotHolder() {
    if (slot < 0 || slot == kSharedSlot) return;
    SlotPool& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.free_slots.push_back(slot);
    tls_probe_slot = -1;
  }
};
thread_local SlotHolder slot_holder;

}  // namespace

int AcquireProbeSlot() {
  SlotPool& pool = Pool();
  int slot;
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    if (!pool.free_slots.empty()) {
      slot = pool.free_slots.back();
      pool.free_slots.pop_back();
    } else if (pool.next < kSharedSlot) {
      slot = pool.next++;
    } else {
      slot = kSharedSlot;
    }
  }
  slot_holder.slot = slot;
  tls_probe_slot = slot;
  return slot;
}

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
  const format::Recognized r = format::Recognize(filter);
  if (r.kind == format::FilterKind::kLevelDbBuiltin) {
    return !reads_builtin_ || format::LevelDbBloomMayMatch(View(key), filter);
  }
  return r.read(filter, InlineHashKey(View(key)));
}

}  // namespace internal

FilterPolicyStats GetFilterPolicyStats(const leveldb::FilterPolicy* policy) {
  return internal::PolicyBase::StatsOf(policy);
}

}  // namespace blockbloom
