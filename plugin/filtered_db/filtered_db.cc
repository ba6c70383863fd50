// FilteredDB's lifecycle and reads: Open (the index file or a scan), the
// destructor (stop growth, close LevelDB, save), Get through the index, and
// the leveldb::DB calls that pass straight through. The other jobs are in
// their own files (filtered_db_impl.h lists them).
#include "blockbloom/filtered_db.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#include "filtered_db/filtered_db_impl.h"
#include "filtered_db/testing_hooks.h"
#include "leveldb/comparator.h"
#include "leveldb/env.h"

namespace blockbloom {

using namespace filtered_db;  // NOLINT: this library's own internals

namespace {

// Whether LevelDB's error says a table is damaged, not that reading failed:
// Corruption, or an IOError of EINVAL, which LevelDB 1.23's memory-mapped
// table reader gives for a read past the end of a table cut short (its
// message ends with strerror(EINVAL), formatted in this process's locale,
// as the comparison's is).
bool IsTableDamage(const leveldb::Status& s) {
  if (s.IsCorruption()) return true;
  if (!s.IsIOError()) return false;
  const std::string text = s.ToString();
  const std::string einval = std::string(": ") + std::strerror(EINVAL);
  return text.size() >= einval.size() &&
         text.compare(text.size() - einval.size(), einval.size(), einval) == 0;
}

}  // namespace

FilteredDB::FilteredDB(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FilteredDB::~FilteredDB() {
  Impl& m = *impl_;
  if (m.opener != ::getpid()) {
    // In a process forked from the opener. This index is a copy from the
    // fork, older than the database the opener goes on writing: saving it
    // (listing the directory as it is now) would write a file the next Open
    // trusts, missing the opener's later writes. So nothing is saved.
    // The opener's growth thread is not here: its std::thread is left
    // unjoined (destroying a joinable one would end the process), and no
    // mutex it might have held at the fork is taken. LevelDB is closed as a
    // plain LevelDB of this process would be (its locks here are this
    // process's own, so the opener keeps its own), and the directory is
    // released here, so this process can open it again later.
    new std::thread(std::move(m.growth_thread));  // never joined or freed
    m.db.reset();
    m.db_lock.Release();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(m.write_mu);
    m.stopping.store(true, std::memory_order_relaxed);
  }
  if (m.growth_thread.joinable()) m.growth_thread.join();
  std::string payload;
  // Not after a failed write (write_path.cc): the next Open scans.
  if (m.persist && m.current != nullptr && m.failed_writes == 0) m.current->Serialize(&payload);
  // The logs as this session leaves them, listed while LevelDB still holds
  // the database: no write can run now, and closing never appends to a log
  // (a compaction finishing during the close only adds tables, appends to
  // the MANIFEST and deletes obsolete logs).
  std::vector<filtered_db::DirEntry> logs_at_close;
  const bool logs_listed = !payload.empty() && m.ListLogs(&logs_at_close);
  // LevelDB closed: no more file changes. It gave the lock back to db_lock
  // (still held: no opener can get in while the index is saved).
  m.db.reset();
  if (auto* hook = g_close_window_hook.load(std::memory_order_relaxed)) hook(m.name);
  if (m.persist && logs_listed) m.SaveAtClose(std::move(payload), logs_at_close);
  m.db_lock.Release();
}

leveldb::Status FilteredDB::Open(const FilteredDBOptions& fdb_options,
                                 const leveldb::Options& options, const std::string& name,
                                 std::unique_ptr<FilteredDB>* db) {
  db->reset();
  if (fdb_options.kind != IndexKind::kDleft && fdb_options.kind != IndexKind::kCounting) {
    return leveldb::Status::InvalidArgument("FilteredDB::Open",
                                            "kind must be IndexKind::kDleft or kCounting");
  }
  if (options.comparator != leveldb::BytewiseComparator() &&
      !fdb_options.comparator_equality_is_bytewise) {
    return leveldb::Status::InvalidArgument(
        "FilteredDB::Open",
        "a comparator other than leveldb::BytewiseComparator() needs "
        "FilteredDBOptions::comparator_equality_is_bytewise (the index knows keys by their bytes)");
  }
  auto impl = std::make_unique<Impl>(fdb_options, name);
  impl->filter_policy = options.filter_policy;
  impl->persist = fdb_options.persist_index && UsesDefaultEnv(options);
  std::unique_ptr<KeyIndex> loaded;
  leveldb::Options db_options = options;
  // The directory exists before it is locked or reserved, as LevelDB's Open
  // makes it: its device and inode name it (DbLock).
  if (UsesDefaultEnv(options)) (void)leveldb::Env::Default()->CreateDir(name);
  if (impl->persist) {
    // The lock LevelDB's Open would take (and it fails as that would), taken
    // before the index file is read and lent to LevelDB below (DbLock).
    const leveldb::Status locked = impl->db_lock.Acquire(name);
    if (!locked.ok()) return locked;
    loaded = impl->LoadIndexFile();
    if (auto* hook = g_open_window_hook.load(std::memory_order_relaxed)) hook(name);
    db_options.env = impl->db_lock.env();
  } else if (UsesDefaultEnv(options)) {
    // LevelDB takes <name>/LOCK itself; this process's FilteredDBs still
    // know the directory as held, so an open of it under another name is
    // refused (LevelDB's own table goes by the name).
    const leveldb::Status reserved = impl->db_lock.Reserve(name);
    if (!reserved.ok()) return reserved;
  }
  leveldb::DB* raw = nullptr;
  leveldb::Status s = leveldb::DB::Open(db_options, name, &raw);
  if (!s.ok()) {
    // persist: LevelDB gave the lock back at its failure; we let it go.
    impl->db_lock.Release();
    if (!impl->persist && UsesDefaultEnv(options)) {
      RestoreLockAfterInProcessRefusal(name, s);  // a LevelDB of this process holds it
    }
    return s;
  }
  impl->db.reset(raw);
  if (impl->persist) {
    if (!impl->RemoveIndexFileAfterOpen()) loaded.reset();
    impl->current_at_open = filtered_db::ReadCurrent(name);
  }
  std::unique_ptr<FilteredDB> result(new FilteredDB(std::move(impl)));
  Impl& m = *result->impl_;
  if (loaded != nullptr) {
    std::vector<std::unique_ptr<KeyIndex>> garbage;
    std::lock_guard<std::mutex> lock(m.write_mu);
    m.opened_from = IndexSource::kFile;
    m.PublishLocked(std::move(loaded), &garbage);
  } else {
    s = m.Rebuild(1);  // sized for the keys found (expected_keys: a hint)
    if (!s.ok()) {
      // LevelDB opened a database it cannot read in full (a damaged table:
      // IsTableDamage): open as LevelDB did, every Get passing through
      // (RebuildIndex() returns the scan's error until it can read it all).
      // Other errors (an I/O error, too many open files) fail the Open, as
      // before: they may pass, and a silent pass-through would hide them.
      bool unreadable;
      {
        std::lock_guard<std::mutex> lock(m.write_mu);
        unreadable = m.scan_failed;
      }
      if (!unreadable || !IsTableDamage(s)) return s;  // ~FilteredDB closes LevelDB
      s = leveldb::Status::OK();
    }
  }
  *db = std::move(result);
  return s;
}

leveldb::Status OpenFilteredDB(const FilteredDBOptions& fdb_options,
                               const leveldb::Options& options, const std::string& name,
                               leveldb::DB** dbptr) {
  *dbptr = nullptr;
  std::unique_ptr<FilteredDB> db;
  const leveldb::Status s = FilteredDB::Open(fdb_options, options, name, &db);
  if (s.ok()) *dbptr = db.release();
  return s;
}

leveldb::Status DestroyFilteredDB(const std::string& name, const leveldb::Options& options) {
  // Index files exist only beside databases in Env::Default()'s file system
  // (Open persists nothing with another Env): with another Env, `name` is
  // not a path of this file system, and a file there belongs to someone else.
  const bool real_file_system = UsesDefaultEnv(options);
  // A FilteredDB of this process holds it, under this or another name:
  // refused before anything is removed (LevelDB's own refusal goes by the
  // name, and its refused lock would drop the holder's).
  if (real_file_system) {
    const leveldb::Status held = filtered_db::DbLock::RefuseIfHeld(name);
    if (!held.ok()) return held;
    // An index file left behind would keep the directory: report it (absent
    // files and a missing directory are not errors).
    const absl::Status removed = filtered_db::RemoveIndexFile(name);
    if (!removed.ok()) return leveldb::Status::IOError(name, removed.ToString());
  }
  const leveldb::Status s = leveldb::DestroyDB(name, options);
  // A database this process holds open: DestroyDB's refused LockFile closed
  // a descriptor of LOCK, dropping the holder's lock. Take it back.
  if (real_file_system) RestoreLockAfterInProcessRefusal(name, s);
  return s;
}

// The index's NotFound: a copy of one built once (leveldb::Status's copy is
// one allocation and one memcpy; building it anew also measures and copies
// the empty message). Never destroyed: Gets may run during exit.
inline leveldb::Status NotFoundStatus() {
  static const leveldb::Status* const not_found =
      new leveldb::Status(leveldb::Status::NotFound(leveldb::Slice()));
  return *not_found;
}

// The Get of a key the index did not rule out (or with no index): LevelDB's
// answer, counted. Out of line, so that Get's fast path stays small.
__attribute__((noinline)) static leveldb::Status PassThrough(leveldb::DB* db,
                                                             const leveldb::ReadOptions& options,
                                                             const leveldb::Slice& key,
                                                             std::string* value, ReaderSlot* slot,
                                                             bool owned, bool skipped_counting) {
  const leveldb::Status s = db->Get(options, key, value);
  if (slot != nullptr) {
    Bump(slot->passes, owned);
    if (s.IsNotFound()) Bump(slot->passes_not_found, owned);
    if (skipped_counting) {
      Bump(slot->counting_skipped, owned);
      CountPass(*slot, s.IsNotFound());
    }
  }
  return s;
}

leveldb::Status FilteredDB::Get(const leveldb::ReadOptions& options, const leveldb::Slice& key,
                                std::string* value) {
  Impl& m = *impl_;
  if (options.snapshot != nullptr) {
    return PassThrough(m.db.get(), options, key, value, nullptr, false, false);
  }
  const unsigned slot_index = ThreadSlot();
  const bool owned = slot_index != kSharedSlot;
  ReaderSlot& slot = m.slots[slot_index];
  // Announce, then load the pointer (see FreeRetiredLocked).
  if (owned && m.light_readers) {
    slot.active.store(1, std::memory_order_relaxed);
    LightBarrier();
  } else if (owned) {
    slot.active.store(1, std::memory_order_seq_cst);
  } else {
    slot.active.fetch_add(1, std::memory_order_seq_cst);
  }
  const KeyIndex* index = m.index.load(std::memory_order_seq_cst);
  // Hashed under the seed of the index it probes.
  const uint64_t hash = index != nullptr ? Hash(key, index->seed()) : 0;
  bool absent = false;
  bool skipped_counting = false;
  if (index != nullptr && !index->FrontMayContain(hash)) {
    absent = true;
  } else if (index != nullptr) {
    // The shared slot always consults (its window would need RMWs).
    skipped_counting = owned && slot.skip_counting.load(std::memory_order_relaxed) != 0;
    if (!skipped_counting) {
      absent = !index->CountingMayContain(hash);
      if (owned) CountPass(slot, absent);
    }
  }
  if (owned) {
    slot.active.store(0, std::memory_order_release);
  } else {
    slot.active.fetch_sub(1, std::memory_order_release);
  }
  if (absent) {
    Bump(slot.ruled_out, owned);
    return NotFoundStatus();
  }
  // No index (saturated): not counted, as before.
  return PassThrough(m.db.get(), options, key, value, index != nullptr ? &slot : nullptr, owned,
                     skipped_counting);
}

leveldb::Iterator* FilteredDB::NewIterator(const leveldb::ReadOptions& options) {
  return impl_->db->NewIterator(options);
}

const leveldb::Snapshot* FilteredDB::GetSnapshot() { return impl_->db->GetSnapshot(); }

void FilteredDB::ReleaseSnapshot(const leveldb::Snapshot* snapshot) {
  impl_->db->ReleaseSnapshot(snapshot);
}

void FilteredDB::GetApproximateSizes(const leveldb::Range* range, int n, uint64_t* sizes) {
  impl_->db->GetApproximateSizes(range, n, sizes);
}

void FilteredDB::CompactRange(const leveldb::Slice* begin, const leveldb::Slice* end) {
  impl_->db->CompactRange(begin, end);
}

namespace filtered_db {

void SetOpenWindowHookForTesting(void (*hook)(const std::string& db_name)) {
  g_open_window_hook.store(hook, std::memory_order_relaxed);
}

void SetCloseWindowHookForTesting(void (*hook)(const std::string& db_name)) {
  g_close_window_hook.store(hook, std::memory_order_relaxed);
}

}  // namespace filtered_db
}  // namespace blockbloom
