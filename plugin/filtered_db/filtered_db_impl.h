// FilteredDB::Impl, the state every part of FilteredDB shares, and the
// types they pass each other. Its member functions live by job:
// reader_slots.cc (publication and reclamation of indexes), rebuild.cc
// (growth, shrink and RebuildIndex), persist.cc (the index file),
// write_path.cc (Put, Delete, Write), properties.cc (statistics and
// properties); filtered_db.cc opens, reads and closes. Not installed.
// Thread-safety: as documented on each member (write_mu, rebuild_mu, save_mu).
#ifndef BLOCKBLOOM_FILTERED_DB_FILTERED_DB_IMPL_H_
#define BLOCKBLOOM_FILTERED_DB_FILTERED_DB_IMPL_H_

#include <unistd.h>  // getpid

#include <array>
#include <atomic>
#include <bitset>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "blockbloom/filtered_db.h"
#include "filtered_db/db_lock.h"
#include "filtered_db/index_file.h"
#include "filtered_db/key_index.h"
#include "filtered_db/reader_slots.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"

namespace blockbloom {
namespace filtered_db {

// KeyIndex::HashOf of a LevelDB key: every Get, write and rebuild scan
// hashes its key here, under the seed of the index the hash is for.
inline uint64_t Hash(const leveldb::Slice& key, uint64_t seed) {
  return KeyIndex::HashOf(std::string_view(key.data(), key.size()), seed);
}

// One key of a write, its hash, and whether it is present after the write.
struct KeyOp {
  leveldb::Slice key;
  uint64_t hash;  // KeyIndex::HashOf under the current index's seed (0 without one)
  bool present_after;
};

struct LogEntry {
  uint64_t hash;  // KeyIndex::HashOf under log_seed, the next index's seed
  bool insert;    // false: erase
};

struct Retired {
  std::unique_ptr<KeyIndex> index;
  std::bitset<kReaderSlots> pending;  // slot i not yet seen idle since unpublished
  bool fenced = false;                // light readers: a HeavyBarrier() ran after the unpublish
};

// Testing hooks (testing_hooks.h); null when unset.
inline std::atomic<void (*)(const std::string&)> g_open_window_hook{nullptr};
inline std::atomic<void (*)(const std::string&)> g_close_window_hook{nullptr};
inline std::atomic<void (*)(const std::string&)> g_growth_rebuilt_hook{nullptr};
inline std::atomic<void (*)(const std::string&)> g_rebuild_replay_hook{nullptr};

}  // namespace filtered_db

struct FilteredDB::Impl {
  Impl(const FilteredDBOptions& o, std::string n)
      : options(o), name(std::move(n)), light_readers(filtered_db::UseLightReaders()) {}

  // All *Locked REQUIRE write_mu held.
  // filtered_db::Retired indexes that no reader can hold any more move to *garbage, for
  // the caller to free after releasing write_mu (freeing megabytes is slow).
  void PublishLocked(std::unique_ptr<KeyIndex> next,
                     std::vector<std::unique_ptr<KeyIndex>>* garbage);
  void FreeRetiredLocked(std::vector<std::unique_ptr<KeyIndex>>* garbage);
  // Whether `key` (hash `hash`) is in the database now.
  leveldb::Status IsLiveLocked(const leveldb::Slice& key, uint64_t hash, bool* live);
  // The write protocol for a batch whose net effect per key is ops[0, n)
  // (each key once): presence check, inserts, LevelDB write, erases. Indexes
  // to free go to *garbage (the caller frees them after releasing write_mu).
  leveldb::Status ApplyLocked(const leveldb::WriteOptions& write_options,
                              leveldb::WriteBatch* batch, const filtered_db::KeyOp* ops, size_t n,
                              std::vector<std::unique_ptr<KeyIndex>>* garbage);
  void StartGrowthLocked(uint64_t min_capacity);
  // A growth failed (or could not start): the next may start once the
  // current index has taken as many inserts again (a failure right after a
  // publish: after 2), so attempts double apart. With no index (a refusal
  // unpublished it before the growth failed), the same count of keys made
  // live since then (saturated_inserts).
  void DeferGrowthRetryLocked() {
    if (current != nullptr) {
      growth_retry_inserts = 2 * std::max<uint64_t>(current->inserted_since_build(), 1);
    } else if (!scan_failed) {
      saturated_retry_inserts = 2 * std::max<uint64_t>(saturated_inserts, 1);
    }
  }
  // Builds a new index from a consistent scan plus the write log and publishes
  // it; writers run meanwhile. Serialized by rebuild_mu. OK when stopped.
  leveldb::Status Rebuild(uint64_t min_capacity);
  // Why an attempt's new index refused a key (and so was not published).
  enum class Refusal {
    kNone,
    // Within its capacity: keys colliding at this size (a full bucket or a
    // counter at 3 below the design load). A larger size places them apart.
    kCollision,
    // Beyond its capacity: writers added more keys between the scan and the
    // publish than the size chosen at the scan holds. A new scan sizes for them.
    kOverfilled,
  };
  // *capacity: at least this many keys in, the size actually used out.
  leveldb::Status RebuildAttempt(uint64_t* capacity, Refusal* refused);
  // Copies the index and lists the directory under write_mu; writes outside.
  // Serialized by save_mu.
  leveldb::Status Save();
  // The index of <name>/BLOCKBLOOM-INDEX if the file is valid for the
  // directory as it is now and of options.kind, else null. REQUIRES:
  // persist, the lock held, LevelDB not open yet.
  std::unique_ptr<KeyIndex> LoadIndexFile();
  // Removes the index file once LevelDB has opened (used at most once);
  // false if it could not be removed (then *loaded is not used).
  bool RemoveIndexFileAfterOpen();
  // Appends the directory's log files to *logs; false if it cannot be listed.
  bool ListLogs(std::vector<filtered_db::DirEntry>* logs);
  // The close-time save of `payload`, if nobody wrote since LevelDB's close
  // (CURRENT as at our open; every log one of `logs_at_close`, unchanged).
  // REQUIRES: LevelDB closed, the lock still held.
  void SaveAtClose(std::string payload, const std::vector<filtered_db::DirEntry>& logs_at_close);

  const FilteredDBOptions options;
  // The process that opened the database. A process forked from it holds a
  // copy of this object (and of LevelDB's) but neither the lock nor the
  // threads: ~FilteredDB there saves nothing, and Save refuses.
  const pid_t opener = ::getpid();
  // The table filter policy LevelDB was opened with (may be null): its probe
  // counts are reported by GetProperty("blockbloom.filter-policy-stats").
  const leveldb::FilterPolicy* filter_policy = nullptr;
  const std::string name;
  bool persist = false;
  // Holds <name>/LOCK iff persist, else (Env::Default()) only reserves the
  // directory among this process's FilteredDBs; declared before db: outlives
  // it (LevelDB uses its env).
  filtered_db::DbLock db_lock;
  std::string current_at_open;  // CURRENT's bytes right after our LevelDB::Open
  std::unique_ptr<leveldb::DB> db;

  // One Save at a time, from the copy of the index to the rename of its file
  // (every save writes through the same temporary file name); taken before
  // write_mu.
  std::mutex save_mu;
  std::mutex rebuild_mu;                      // one rebuild at a time; taken before write_mu
  std::mutex write_mu;                        // writers, publication, the write log, counters below
  std::unique_ptr<KeyIndex> current;          // null = saturated / pass-through
  std::vector<filtered_db::Retired> retired;  // unpublished, maybe still being read
  std::atomic<KeyIndex*> index{nullptr};      // what readers use: current.get()
  std::array<filtered_db::ReaderSlot, filtered_db::kReaderSlots> slots;
  // Owned-slot readers announce with a relaxed store and a compiler barrier
  // (membarrier available), else with a seq_cst store. Fixed at construction.
  const bool light_readers;

  bool logging = false;                    // a rebuild's snapshot is taken: log writes
  uint64_t log_seed = 0;                   // the seed of the index that rebuild builds
  std::vector<filtered_db::LogEntry> log;  // writes since that snapshot, in order
  bool growth_running = false;             // the growth thread is (still) working
  // After a failed growth (no memory for the larger index, a throwing
  // progress callback): the current index's inserted_since_build() from
  // which writes may start another. Without it, every write after the
  // failure would start another full scan. 0 when no growth has failed since
  // the index was published.
  uint64_t growth_retry_inserts = 0;
  // Pass-through (no index) since the last publish: keys made live since,
  // and, after a failed growth, the count from which writes start the next
  // (DeferGrowthRetryLocked); 0 when none is pending.
  uint64_t saturated_inserts = 0;
  uint64_t saturated_retry_inserts = 0;
  // The last publish was of no index because LevelDB's scan failed: no
  // retry by writers (RebuildIndex() or the next Open).
  bool scan_failed = false;
  // A growth asked for (its min_capacity) while the growth thread was
  // running, after that thread's last publish: the thread runs another
  // rebuild before it stops. 0 when none. A request before the publish is
  // met by it (cleared there): the published index is newer than the write.
  uint64_t growth_requested = 0;
  std::condition_variable growth_done;  // signalled when growth_running drops
  std::thread growth_thread;
  std::atomic<bool> stopping{false};

  IndexSource opened_from = IndexSource::kScan;
  uint64_t rebuilds = 0;
  uint64_t insert_refusals = 0;
  uint64_t failed_writes = 0;
  uint64_t saves = 0;
};

}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTERED_DB_FILTERED_DB_IMPL_H_
