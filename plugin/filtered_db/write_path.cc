// FilteredDB's writes: Put, Delete and Write apply one protocol to a batch's
// net effect per key (presence check, inserts before the LevelDB write,
// erases after it; docs/FILTERED_DB.md, "The ordering argument").
#include "filtered_db/filtered_db_impl.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "leveldb/write_batch.h"

namespace blockbloom {

using namespace filtered_db;  // NOLINT: this library's own internals

namespace {

// A batch's effect per user key: the last operation wins (a batch is applied
// atomically, so its intermediate states are never visible).
class NetEffect : public leveldb::WriteBatch::Handler {
 public:
  void Put(const leveldb::Slice& key, const leveldb::Slice& /*value*/) override {
    last_[key.ToString()] = true;
  }
  void Delete(const leveldb::Slice& key) override { last_[key.ToString()] = false; }
  // key -> present after the batch.
  const std::unordered_map<std::string, bool>& last() const { return last_; }

 private:
  std::unordered_map<std::string, bool> last_;
};

}  // namespace

leveldb::Status FilteredDB::Impl::IsLiveLocked(const leveldb::Slice& key, uint64_t hash,
                                               bool* live) {
  if (current != nullptr && !current->MayContain(hash)) {
    *live = false;  // the index never misses a live key
    return leveldb::Status::OK();
  }
  std::string value;
  const leveldb::Status s = db->Get(leveldb::ReadOptions(), key, &value);
  if (s.ok()) {
    *live = true;
    return s;
  }
  if (s.IsNotFound()) {
    *live = false;
    return leveldb::Status::OK();
  }
  return s;
}

leveldb::Status FilteredDB::Impl::ApplyLocked(const leveldb::WriteOptions& write_options,
                                              leveldb::WriteBatch* batch, const KeyOp* ops,
                                              size_t n,
                                              std::vector<std::unique_ptr<KeyIndex>>* garbage) {
  // The ops added and removed (indexes into ops): on the stack for the
  // common one-key write.
  size_t added_one[1], removed_one[1];
  std::vector<size_t> added_many, removed_many;
  size_t* added = added_one;
  size_t* removed = removed_one;
  if (n > 1) {
    added_many.resize(n);
    removed_many.resize(n);
    added = added_many.data();
    removed = removed_many.data();
  }
  size_t num_added = 0, num_removed = 0;

  if (!retired.empty()) FreeRetiredLocked(garbage);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t h = ops[i].hash;
    bool live = false;
    if (!IsLiveLocked(ops[i].key, h, &live).ok()) {
      // LevelDB cannot read the key (a read error, a damaged block), but its
      // write needs no read: neither may ours, or the key could never be
      // overwritten or deleted through FilteredDB. Take the safe side: a key
      // present after the write is inserted (if it was live already, it is
      // now counted twice, and stays claimed after its next delete until a
      // rebuild: over-claiming); a key absent after it is not erased (it
      // stays claimed). No key is erased that was not inserted.
      if (ops[i].present_after) added[num_added++] = i;
      continue;
    }
    if (ops[i].present_after && !live) added[num_added++] = i;
    if (!ops[i].present_after && live) removed[num_removed++] = i;
  }

  // 1. Insert new keys BEFORE the write: from here on the index claims them.
  if (current != nullptr && num_added != 0) {
    for (size_t i = 0; i < num_added; ++i) {
      if (!current->Insert(ops[added[i]].hash).ok()) {
        // It cannot hold this key: pass through until the larger index is
        // published (the growth rebuild logs this write like any other).
        ++insert_refusals;
        const uint64_t capacity = current->capacity();
        PublishLocked(nullptr, garbage);
        // At least one size up (the rule's size for the keys, within the
        // budget): other buckets, other collisions. A rebuild refused again
        // below its capacity doubles its table; one overfilled by writers
        // is sized again for the keys (Rebuild).
        StartGrowthLocked(capacity + 1);
        break;
      }
    }
    // After a failed growth the next attempt waits (growth_retry_inserts).
    if (current != nullptr && current->inserted_since_build() >= growth_retry_inserts) {
      if (current->keys() > current->capacity()) {
        StartGrowthLocked(current->capacity() + 1);
      } else if (current->inserted_since_build() > 2 * current->capacity()) {
        // Churn: the front filter holds many deleted keys. Fresh, sized for
        // the live keys.
        StartGrowthLocked(1);
      }
    }
  } else if (current == nullptr && num_added != 0) {
    // Pass-through after a refusal whose growth failed: the next growth
    // waits for as many new keys again (saturated_retry_inserts), then
    // builds an index sized for the keys.
    saturated_inserts += num_added;
    if (saturated_retry_inserts != 0 && saturated_inserts >= saturated_retry_inserts &&
        !growth_running) {
      saturated_retry_inserts = 0;
      StartGrowthLocked(1);
    }
  }
  // The log is replayed into the index a rebuild builds: hashes under its seed.
  if (logging) {
    for (size_t i = 0; i < num_added; ++i) {
      log.push_back({Hash(ops[added[i]].key, log_seed), true});
    }
  }

  // 2. The write itself.
  const leveldb::Status s = db->Write(write_options, batch);
  if (!s.ok()) {
    // Maybe applied, maybe not: keep the inserts (over-claiming is safe);
    // deleted keys stay claimed too. Not in LevelDB's memory, but maybe in
    // its log (LevelDB: such a write "may or may not show up when the DB is
    // re-opened"), where a rebuild's scan does not look: from now on no
    // index of this session is saved (Save, ~FilteredDB), so the next Open
    // scans what LevelDB recovered.
    ++failed_writes;
    return s;
  }

  // 3. Erase deleted keys only now that LevelDB has applied the deletes.
  for (size_t i = 0; i < num_removed; ++i) {
    // Live => inserted before, so Erase's precondition holds.
    if (current != nullptr) (void)current->Erase(ops[removed[i]].hash);
    if (logging) log.push_back({Hash(ops[removed[i]].key, log_seed), false});
  }
  // Shrink: the index takes more than twice the budget for its live keys
  // (KeyIndex::shrink_below), and the index a rebuild would size for them
  // (KeyIndex::CapacityFor, what the rebuild asks for) is at most half this
  // one: an index the rule sizes above the budget anyway (the counting kind
  // at a low target_fpr, or a large expected_keys) is never rebuilt at the
  // same size, where every delete would start another full scan. Rebuilt in
  // the background like a growth, sized for the keys the scan finds; not
  // while a growth runs (it sizes for them too), nor after a failed rebuild
  // until inserts resume (as for growth).
  if (current != nullptr && num_removed != 0 && !growth_running &&
      current->keys() < current->shrink_below() &&
      current->inserted_since_build() >= growth_retry_inserts &&
      KeyIndex::CapacityFor(options.kind, current->keys(), options.expected_keys,
                            options.target_fpr) <= current->capacity() / 2) {
    StartGrowthLocked(1);
  }
  return s;
}

leveldb::Status FilteredDB::Write(const leveldb::WriteOptions& options,
                                  leveldb::WriteBatch* updates) {
  Impl& m = *impl_;
  if (updates == nullptr) return m.db->Write(options, updates);
  NetEffect effect;
  const leveldb::Status s = updates->Iterate(&effect);
  if (!s.ok()) return s;
  std::vector<KeyOp> ops;
  ops.reserve(effect.last().size());
  for (const auto& [key, present_after] : effect.last()) ops.push_back({key, 0, present_after});
  std::vector<std::unique_ptr<KeyIndex>> garbage;  // declared first: freed after unlock
  std::lock_guard<std::mutex> lock(m.write_mu);
  // Hashed under the current index's seed: only under write_mu is it known.
  if (m.current != nullptr) {
    for (KeyOp& op : ops) {
      op.hash = Hash(op.key, m.current->seed());
      m.current->Prefetch(op.hash);
    }
  }
  return m.ApplyLocked(options, updates, ops.data(), ops.size(), &garbage);
}

// Put and Delete: the one-key Write. The index's lines for the key are
// requested first, so their cache misses overlap the batch's construction.
leveldb::Status FilteredDB::Put(const leveldb::WriteOptions& options, const leveldb::Slice& key,
                                const leveldb::Slice& value) {
  Impl& m = *impl_;
  KeyOp op{key, 0, true};
  std::vector<std::unique_ptr<KeyIndex>> garbage;  // declared first: freed after unlock
  std::lock_guard<std::mutex> lock(m.write_mu);
  if (m.current != nullptr) {
    op.hash = Hash(key, m.current->seed());
    m.current->Prefetch(op.hash);
  }
  leveldb::WriteBatch batch;
  batch.Put(key, value);
  return m.ApplyLocked(options, &batch, &op, 1, &garbage);
}

leveldb::Status FilteredDB::Delete(const leveldb::WriteOptions& options,
                                   const leveldb::Slice& key) {
  Impl& m = *impl_;
  KeyOp op{key, 0, false};
  std::vector<std::unique_ptr<KeyIndex>> garbage;  // declared first: freed after unlock
  std::lock_guard<std::mutex> lock(m.write_mu);
  if (m.current != nullptr) {
    op.hash = Hash(key, m.current->seed());
    m.current->Prefetch(op.hash);
  }
  leveldb::WriteBatch batch;
  batch.Delete(key);
  return m.ApplyLocked(options, &batch, &op, 1, &garbage);
}

}  // namespace blockbloom
