// FilteredDB: a leveldb::DB with a delete-aware in-memory key index in front
// of Get. A Get of a key the index rules out returns NotFound in nanoseconds,
// without a memtable search or any table-cache, index-block or filter probe.
//
//   blockbloom::IndexOptions index;               // d-left, 1M keys, 1% FPR
//   std::unique_ptr<blockbloom::FilteredDB> db;
//   leveldb::Status s = blockbloom::FilteredDB::Open(options, "/tmp/db", index, &db);
//   db->Put(leveldb::WriteOptions(), "apple", "red");
//   db->Get(leveldb::ReadOptions(), "pear", &value);   // NotFound from the index
//
// Contract. Every answer is exactly LevelDB's: the index only ever turns a
// Get of an absent key into an early NotFound. It holds the set of LIVE user
// keys (a counting or d-left counting Bloom filter, blockbloom/
// counting_bloom.h and blockbloom/dleft_counting_bloom.h): a Put of a new key
// inserts it, an overwrite does not count it twice, a Delete of a present key
// erases it once, a Delete of an absent key changes nothing -- so the index
// never erases a key it did not insert, which is the precondition of both
// filters' Erase. WriteBatches are applied the same way, by net effect.
//
// Ordering (docs/INDEX.md has the argument): the index may claim a key that
// is not in the database, never the opposite, at every instant. New keys are
// inserted into the index BEFORE the LevelDB write; deleted keys are erased
// only AFTER the delete has been applied by LevelDB. "Check presence, update
// the index, write" runs under one writer mutex (LevelDB serializes writers
// internally anyway), so concurrent writers cannot interleave it. Readers take
// no lock. A failed write leaves its inserts in the index: over-claiming is
// safe, and the next rebuild makes the index exact again.
//
// Snapshots. A Get with ReadOptions::snapshot set always goes to LevelDB: a
// key deleted since the snapshot is gone from the index but visible at the
// snapshot.
//
// Persistence. The index is in memory only; nothing is written to disk. Open
// rebuilds it with a full scan of the database (IndexOptions::progress
// reports it), so after a crash it reflects exactly what LevelDB recovered.
//
// Growth. When the live keys outgrow the index's capacity (or a d-left
// insert is refused: full bucket, counter overflow), the index is rebuilt
// from a scan into one of twice the capacity, while writers wait and readers
// keep using the old, still-correct index; then the new one is published
// atomically. If a rebuild fails, the index is dropped and every Get passes
// through to LevelDB ("saturated") until RebuildIndex() or the next Open.
//
// Writes made through base() bypass the index and void the contract; reads
// through base() are fine.
//
// Thread-safety: as leveldb::DB -- any method may be called from any number
// of threads, except that the destructor must not race with any other call,
// and iterators and snapshots must be released before it.
// tests/filtered_db_tsan_test.cc hammers it with readers and writers under
// ThreadSanitizer.
#ifndef BLOCKBLOOM_FILTERED_DB_H_
#define BLOCKBLOOM_FILTERED_DB_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "leveldb/db.h"
#include "leveldb/options.h"
#include "leveldb/status.h"
#include "leveldb/write_batch.h"

namespace blockbloom {

enum class IndexKind {
  kCounting,  // blocked counting Bloom filter: 4-bit counters, FPR from target_fpr
  kDleft,     // d-left counting Bloom filter: ~half the memory at equal FPR
};

struct IndexOptions {
  // Capacity of the first index; it grows (doubling) when the keys outgrow it.
  uint64_t expected_keys = 1000000;
  // Target FPR at capacity. d-left at its design load gives ~0.15% whatever
  // this asks, and less when asked for less (blockbloom/dleft_counting_bloom.h).
  double target_fpr = 0.01;
  IndexKind kind = IndexKind::kDleft;
  // Called during every rebuild scan (Open, growth) each `progress_interval`
  // keys and once at the end, with the number of keys scanned so far. Runs on
  // the thread that triggered the rebuild, with writers blocked.
  std::function<void(uint64_t keys_scanned)> progress;
  uint64_t progress_interval = 65536;
};

struct FilteredDBStats {
  bool index_active = false;        // false: saturated, every Get passes through
  uint64_t keys = 0;                // live keys the index holds
  uint64_t capacity = 0;            // keys before the next growth rebuild
  uint64_t memory_bytes = 0;        // current index (plus retired ones not yet freed)
  double estimated_fpr = 0.0;
  uint64_t gets_ruled_out = 0;      // Gets answered NotFound by the index alone
  uint64_t rebuilds = 0;            // including the one in Open
  uint64_t insert_refusals = 0;     // d-left full bucket / overflow (each caused a rebuild)
  uint64_t failed_writes = 0;       // LevelDB writes that failed after index inserts
};

class KeyIndex;  // plugin/filtered_db/key_index.h

class FilteredDB {
 public:
  // Opens (or creates, per options) the LevelDB database at `name` and builds
  // the index with a full scan. On error *db is left null.
  static leveldb::Status Open(const leveldb::Options& options, const std::string& name,
                              const IndexOptions& index_options,
                              std::unique_ptr<FilteredDB>* db);

  FilteredDB(const FilteredDB&) = delete;
  FilteredDB& operator=(const FilteredDB&) = delete;
  ~FilteredDB();

  // Same arguments and results as leveldb::DB's.
  leveldb::Status Put(const leveldb::WriteOptions& options, const leveldb::Slice& key,
                      const leveldb::Slice& value);
  leveldb::Status Delete(const leveldb::WriteOptions& options, const leveldb::Slice& key);
  leveldb::Status Write(const leveldb::WriteOptions& options, leveldb::WriteBatch* updates);
  leveldb::Status Get(const leveldb::ReadOptions& options, const leveldb::Slice& key,
                      std::string* value);
  // The caller deletes the iterator before the FilteredDB, as with LevelDB.
  leveldb::Iterator* NewIterator(const leveldb::ReadOptions& options);
  const leveldb::Snapshot* GetSnapshot();
  void ReleaseSnapshot(const leveldb::Snapshot* snapshot);
  // LevelDB's properties, plus:
  //   "blockbloom.index-stats"        all of FilteredDBStats, one "name: value" per line
  //   "blockbloom.index-keys"         live keys in the index
  //   "blockbloom.index-memory-bytes" index memory
  //   "blockbloom.index-estimated-fpr"
  //   "blockbloom.index-gets-ruled-out"
  bool GetProperty(const leveldb::Slice& property, std::string* value);

  // Rebuilds the index from a full scan (sized for the keys found, at least
  // IndexOptions::expected_keys); the way out of the saturated state.
  leveldb::Status RebuildIndex();

  FilteredDBStats index_stats() const;
  leveldb::DB* base() { return db_.get(); }

 private:
  FilteredDB(std::unique_ptr<leveldb::DB> db, const IndexOptions& index_options);

  // All REQUIRE write_mu_ held.
  leveldb::Status RebuildLocked(uint64_t min_capacity);
  leveldb::Status IsLiveLocked(const std::string& key, bool* live);
  void PublishLocked(std::unique_ptr<KeyIndex> index);
  void FreeRetiredLocked();

  const std::unique_ptr<leveldb::DB> db_;
  const IndexOptions index_options_;

  mutable std::mutex write_mu_;            // serializes writers, rebuilds, stats
  std::unique_ptr<KeyIndex> current_;      // guarded by write_mu_; null = saturated
  std::vector<std::unique_ptr<KeyIndex>> retired_;  // replaced, maybe still read
  // What readers use: current_.get(), published with seq_cst stores.
  std::atomic<KeyIndex*> index_{nullptr};
  // Readers inside an index probe. A retired index is freed only once this
  // has been seen at 0 after it was unpublished.
  std::atomic<int64_t> active_readers_{0};

  std::atomic<uint64_t> gets_ruled_out_{0};
  uint64_t rebuilds_ = 0;          // guarded by write_mu_
  uint64_t insert_refusals_ = 0;   // guarded by write_mu_
  uint64_t failed_writes_ = 0;     // guarded by write_mu_
};

}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTERED_DB_H_
