#include "blockbloom/filtered_db.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "blockbloom/hash.h"
#include "filtered_db/key_index.h"

namespace blockbloom {
namespace {

uint64_t Hash(const leveldb::Slice& key) { return HashKey(std::string_view(key.data(), key.size())); }

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

// Rebuild attempts at doubling capacity before giving up on d-left refusals
// (each doubling adds a fingerprint bit, so repeated failure means adversarial
// keys or a bug, not bad luck).
constexpr int kMaxBuildAttempts = 4;

}  // namespace

FilteredDB::FilteredDB(std::unique_ptr<leveldb::DB> db, const IndexOptions& index_options)
    : db_(std::move(db)), index_options_(index_options) {}

FilteredDB::~FilteredDB() = default;

leveldb::Status FilteredDB::Open(const leveldb::Options& options, const std::string& name,
                                 const IndexOptions& index_options,
                                 std::unique_ptr<FilteredDB>* db) {
  db->reset();
  leveldb::DB* raw = nullptr;
  leveldb::Status s = leveldb::DB::Open(options, name, &raw);
  if (!s.ok()) return s;
  std::unique_ptr<FilteredDB> result(
      new FilteredDB(std::unique_ptr<leveldb::DB>(raw), index_options));
  {
    std::lock_guard<std::mutex> lock(result->write_mu_);
    s = result->RebuildLocked(index_options.expected_keys);
  }
  if (!s.ok()) return s;
  *db = std::move(result);
  return s;
}

void FilteredDB::PublishLocked(std::unique_ptr<KeyIndex> index) {
  if (current_ != nullptr) retired_.push_back(std::move(current_));
  current_ = std::move(index);
  index_.store(current_.get(), std::memory_order_seq_cst);
  FreeRetiredLocked();
}

void FilteredDB::FreeRetiredLocked() {
  // Every retired index was unpublished (seq_cst store) before this load. A
  // reader that could still hold one incremented active_readers_ before
  // loading index_ and decrements after its probe, so reading 0 here, after
  // the store, means none is left; later readers load the new pointer.
  if (!retired_.empty() && active_readers_.load(std::memory_order_seq_cst) == 0) {
    retired_.clear();
  }
}

leveldb::Status FilteredDB::RebuildLocked(uint64_t min_capacity) {
  ++rebuilds_;
  // One scan collects the live keys' hashes (8 bytes per key, freed after),
  // so the index can be sized for what is actually there.
  std::vector<uint64_t> hashes;
  {
    leveldb::ReadOptions read_options;
    read_options.fill_cache = false;
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(read_options));
    const uint64_t interval = std::max<uint64_t>(index_options_.progress_interval, 1);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      hashes.push_back(Hash(it->key()));
      if (index_options_.progress && hashes.size() % interval == 0) {
        index_options_.progress(hashes.size());
      }
    }
    if (index_options_.progress) index_options_.progress(hashes.size());
    if (!it->status().ok()) {
      // Cannot know the live set: pass everything through.
      PublishLocked(nullptr);
      return it->status();
    }
  }
  // Room to grow by half before the next rebuild.
  uint64_t capacity = std::max<uint64_t>({min_capacity, hashes.size() + hashes.size() / 2, 1});
  for (int attempt = 0; attempt < kMaxBuildAttempts; ++attempt, capacity *= 2) {
    auto index = KeyIndex::Create(index_options_.kind, capacity, index_options_.target_fpr);
    if (!index.ok()) break;
    bool complete = true;
    for (uint64_t h : hashes) {
      if (!(*index)->Insert(h).ok()) {
        ++insert_refusals_;
        complete = false;
        break;
      }
    }
    if (complete) {
      PublishLocked(std::move(index).value());
      return leveldb::Status::OK();
    }
  }
  PublishLocked(nullptr);  // saturated: correct, just unfiltered
  return leveldb::Status::OK();
}

leveldb::Status FilteredDB::RebuildIndex() {
  std::lock_guard<std::mutex> lock(write_mu_);
  return RebuildLocked(index_options_.expected_keys);
}

leveldb::Status FilteredDB::IsLiveLocked(const std::string& key, bool* live) {
  if (current_ != nullptr && !current_->MayContain(HashKey(key))) {
    *live = false;  // the index never misses a live key
    return leveldb::Status::OK();
  }
  std::string value;
  const leveldb::Status s = db_->Get(leveldb::ReadOptions(), key, &value);
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

leveldb::Status FilteredDB::Write(const leveldb::WriteOptions& options,
                                  leveldb::WriteBatch* updates) {
  if (updates == nullptr) return db_->Write(options, updates);
  NetEffect effect;
  leveldb::Status s = updates->Iterate(&effect);
  if (!s.ok()) return s;

  std::lock_guard<std::mutex> lock(write_mu_);
  FreeRetiredLocked();
  std::vector<uint64_t> added, removed;
  for (const auto& [key, present_after] : effect.last()) {
    bool live = false;
    s = IsLiveLocked(key, &live);
    if (!s.ok()) return s;  // nothing written, nothing changed
    if (present_after && !live) added.push_back(HashKey(key));
    if (!present_after && live) removed.push_back(HashKey(key));
  }

  // 1. Insert new keys BEFORE the write: from here on the index claims them.
  if (current_ != nullptr && !added.empty()) {
    bool ok = current_->keys() + added.size() <= current_->capacity();
    for (size_t i = 0; ok && i < added.size(); ++i) {
      if (!current_->Insert(added[i]).ok()) {
        ++insert_refusals_;
        ok = false;
      }
    }
    if (!ok) {
      // Outgrown or refused: rebuild bigger from the database (which does not
      // hold the new keys yet), then insert them. Readers keep the old index
      // meanwhile; it already claims every live key.
      s = RebuildLocked(2 * std::max(current_->capacity(), current_->keys() + added.size()));
      if (!s.ok()) return s;  // saturated now; nothing written
      for (size_t i = 0; current_ != nullptr && i < added.size(); ++i) {
        if (!current_->Insert(added[i]).ok()) {
          ++insert_refusals_;
          PublishLocked(nullptr);  // saturated until RebuildIndex()/reopen
        }
      }
    }
  }

  // 2. The write itself.
  s = db_->Write(options, updates);
  if (!s.ok()) {
    // Maybe applied, maybe not: keep the inserts (over-claiming is safe);
    // deleted keys stay claimed too.
    ++failed_writes_;
    return s;
  }

  // 3. Erase deleted keys only now that LevelDB has applied the deletes.
  if (current_ != nullptr) {
    for (uint64_t h : removed) {
      // Inserted before (live => in the index), so Erase's precondition holds.
      (void)current_->Erase(h);
    }
  }
  return s;
}

leveldb::Status FilteredDB::Put(const leveldb::WriteOptions& options, const leveldb::Slice& key,
                                const leveldb::Slice& value) {
  leveldb::WriteBatch batch;
  batch.Put(key, value);
  return Write(options, &batch);
}

leveldb::Status FilteredDB::Delete(const leveldb::WriteOptions& options,
                                   const leveldb::Slice& key) {
  leveldb::WriteBatch batch;
  batch.Delete(key);
  return Write(options, &batch);
}

leveldb::Status FilteredDB::Get(const leveldb::ReadOptions& options, const leveldb::Slice& key,
                                std::string* value) {
  if (options.snapshot == nullptr) {
    const uint64_t hash = Hash(key);
    active_readers_.fetch_add(1, std::memory_order_seq_cst);
    const KeyIndex* index = index_.load(std::memory_order_seq_cst);
    const bool absent = index != nullptr && !index->MayContain(hash);
    active_readers_.fetch_sub(1, std::memory_order_seq_cst);
    if (absent) {
      gets_ruled_out_.fetch_add(1, std::memory_order_relaxed);
      return leveldb::Status::NotFound(leveldb::Slice());
    }
  }
  return db_->Get(options, key, value);
}

leveldb::Iterator* FilteredDB::NewIterator(const leveldb::ReadOptions& options) {
  return db_->NewIterator(options);
}

const leveldb::Snapshot* FilteredDB::GetSnapshot() { return db_->GetSnapshot(); }

void FilteredDB::ReleaseSnapshot(const leveldb::Snapshot* snapshot) {
  db_->ReleaseSnapshot(snapshot);
}

FilteredDBStats FilteredDB::index_stats() const {
  std::lock_guard<std::mutex> lock(write_mu_);
  FilteredDBStats s;
  s.index_active = current_ != nullptr;
  if (current_ != nullptr) {
    s.keys = current_->keys();
    s.capacity = current_->capacity();
    s.memory_bytes = current_->memory_bytes();
    s.estimated_fpr = current_->estimated_fpr();
  }
  for (const auto& old : retired_) s.memory_bytes += old->memory_bytes();
  s.gets_ruled_out = gets_ruled_out_.load(std::memory_order_relaxed);
  s.rebuilds = rebuilds_;
  s.insert_refusals = insert_refusals_;
  s.failed_writes = failed_writes_;
  return s;
}

bool FilteredDB::GetProperty(const leveldb::Slice& property, std::string* value) {
  const leveldb::Slice prefix("blockbloom.");
  if (!property.starts_with(prefix)) return db_->GetProperty(property, value);
  const FilteredDBStats s = index_stats();
  char buf[512];
  if (property == "blockbloom.index-stats") {
    std::snprintf(buf, sizeof(buf),
                  "index-active: %d\nkeys: %" PRIu64 "\ncapacity: %" PRIu64
                  "\nmemory-bytes: %" PRIu64 "\nbytes-per-key: %.2f\nestimated-fpr: %.6g\n"
                  "gets-ruled-out: %" PRIu64 "\nrebuilds: %" PRIu64
                  "\ninsert-refusals: %" PRIu64 "\nfailed-writes: %" PRIu64 "\n",
                  s.index_active ? 1 : 0, s.keys, s.capacity, s.memory_bytes,
                  s.keys ? static_cast<double>(s.memory_bytes) / s.keys : 0.0, s.estimated_fpr,
                  s.gets_ruled_out, s.rebuilds, s.insert_refusals, s.failed_writes);
  } else if (property == "blockbloom.index-keys") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.keys);
  } else if (property == "blockbloom.index-memory-bytes") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.memory_bytes);
  } else if (property == "blockbloom.index-estimated-fpr") {
    std::snprintf(buf, sizeof(buf), "%.6g", s.estimated_fpr);
  } else if (property == "blockbloom.index-gets-ruled-out") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.gets_ruled_out);
  } else {
    return false;
  }
  *value = buf;
  return true;
}

}  // namespace blockbloom
