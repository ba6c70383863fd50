// FilteredDB: a leveldb::DB with a delete-aware in-memory key index in front
// of Get. A Get of a key the index rules out returns NotFound in nanoseconds,
// without a memtable search or any table-cache, index-block or filter probe.
// It IS a leveldb::DB: code written against leveldb::DB* runs unchanged after
// swapping the Open call.
//
//   blockbloom::FilteredDBOptions fdb_options;      // d-left, 0.2% FPR
//   leveldb::DB* db = nullptr;
//   leveldb::Status s = blockbloom::OpenFilteredDB(fdb_options, options, "/tmp/db", &db);
//   db->Put(leveldb::WriteOptions(), "apple", "red");
//   db->Get(leveldb::ReadOptions(), "pear", &value);   // NotFound from the index
//   delete db;                                         // saves the index
//
// Contract. Every answer is exactly LevelDB's: the index only ever turns a
// Get of an absent key into an early NotFound. It holds the set of LIVE user
// keys (a counting or d-left counting Bloom filter, blockbloom/
// counting_bloom.h and blockbloom/dleft_counting_bloom.h): a Put of a new key
// inserts it, an overwrite does not count it twice, a Delete of a present key
// erases it once, a Delete of an absent key changes nothing -- so the index
// never erases a key it did not insert, which is the precondition of both
// filters' Erase. A key whose presence LevelDB cannot read (a read error, a
// damaged block) neither fails the write nor is erased: it is inserted if
// present after the write, and may then be counted twice, which only
// over-claims it until the next rebuild. WriteBatches are applied the same
// way, by net effect. There is no other write path: the wrapped leveldb::DB
// is never handed out.
//
// Ordering (docs/FILTERED_DB.md has the argument): the index may claim a key
// that is not in the database, never the opposite, at every instant. New keys
// are inserted into the index BEFORE the LevelDB write; deleted keys are
// erased only AFTER LevelDB applied the delete. "Check presence, update the
// index, write" runs under one writer mutex (LevelDB serializes writers
// internally anyway). A failed write leaves its inserts in the index:
// over-claiming is safe, and the next rebuild makes the index exact again.
// Such a write may still come back from LevelDB's log when the database is
// reopened, so no index of that session is saved: the next Open scans.
//
// Readers take no lock and write no shared cache line: each thread leases its
// own cache-line-sized reader slot (64 of them; threads beyond share one),
// announces itself there around its index probe (a retired index is freed
// once every slot has been seen idle after it was unpublished), and counts
// its statistics there; index_stats() sums the slots. On Linux the announce
// is a plain store: the thread retiring an index pays for the ordering with
// one membarrier(2) call instead (docs/FILTERED_DB.md, "Readers").
//
// Snapshots. A Get with ReadOptions::snapshot set always goes to LevelDB: a
// key deleted since the snapshot is gone from the index but visible at the
// snapshot.
//
// Persistence. With FilteredDBOptions::persist_index (the default) the index
// is saved in <name>/BLOCKBLOOM-INDEX when the FilteredDB is deleted (after
// LevelDB has closed) and by SaveIndex(). Open uses that file only when the
// database directory is provably as it was at the save -- same files, same
// sizes, inodes and mtimes, same bytes of CURRENT, MANIFEST and logs -- and
// otherwise rebuilds by scanning (docs/FILTERED_DB.md, "Persisted index",
// gives the rule and its argument; docs/FORMAT.md the layout). The file is
// removed once LevelDB has opened, so it is used at most once (an open
// LevelDB refuses leaves it). FilteredDB holds
// LevelDB's own lock on <name>/LOCK from before reading the file until after
// saving it, lending it to LevelDB for the session (no unlocked moment at
// LevelDB's open or close), so no other process, and no other thread's
// LevelDB, can open the database in between; the save also checks that
// nobody wrote since LevelDB's close (CURRENT and the logs unchanged), in
// case someone else's failed open in this process dropped the lock
// (docs/FILTERED_DB.md, point 4). Opening a database this process already
// holds fails and leaves the holder locked (a FilteredDB holder is found
// under any name of the directory, a plain LevelDB one under its own). Only with
// leveldb::Env::Default() (another Env always scans, and nothing is saved).
//
// Front filter. The counting filter sits behind an insert-only blocked Bloom
// filter of the keys inserted since the last rebuild (a superset of the live
// keys): most absent keys are ruled out from one cache line. A reader thread
// whose recent front-filter passes were almost all live keys (fewer than 1 in
// 8 absent) skips the counting filter's probe until that changes; answers
// are LevelDB's either way (docs/FILTERED_DB.md).
//
// Sizing. The index is sized for the live keys: at most 4 bytes per live key
// plus 256 KiB of memory, and of index file (d-left, the default), when it
// is built. It grows to the largest size that budget allows (sizes are at
// most 1/8 apart; a growth is ~1.39x at large n); after deletes it may hold
// up to twice the budget of the keys left before it shrinks
// (docs/FILTERED_DB.md, "Sizing"); FilteredDBOptions::expected_keys is only
// a hint.
//
// Growth and RebuildIndex(). When the live keys outgrow the index's capacity
// (or a d-left insert is refused), or deletes leave it more than twice its
// budget, a background thread builds a new index sized for the live keys
// from a LevelDB snapshot scan while writers continue; writes made since the
// snapshot are logged and replayed into the new index, which is then
// published atomically. Meanwhile the old index keeps serving (a key it can no
// longer hold switches it to pass-through until the new one is published).
// A growth that fails (out of memory) leaves the index in use serving, or
// the pass-through a refusal left, and writers start the next one once as
// many keys again were added (attempts double apart). If a scan fails, or
// refusals outlast every attempt, every Get passes through to LevelDB
// ("saturated") until RebuildIndex() or the next Open.
//
// Thread-safety: as leveldb::DB -- any method may be called from any number
// of threads, except that the destructor must not race with any other call,
// and iterators and snapshots must be released before it. Tested under
// ThreadSanitizer. Processes: a FilteredDB belongs to the process that
// opened it. A process forked from that one must not use it (as with
// LevelDB); deleting it there closes LevelDB as a plain LevelDB would and
// saves nothing (its index is a copy from the fork), and SaveIndex() there
// is InvalidArgument.
#ifndef BLOCKBLOOM_FILTERED_DB_H_
#define BLOCKBLOOM_FILTERED_DB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "leveldb/db.h"
#include "leveldb/options.h"
#include "leveldb/status.h"
#include "leveldb/write_batch.h"

namespace blockbloom {

// The values are blockbloom/c.h's blockbloom_index_* (a published C API,
// compiled into bindings as plain integers); the index file records the
// kind with its own byte (docs/FORMAT.md), not with these values.
enum class IndexKind {
  kDleft = 0,     // d-left counting Bloom filter: ~half the memory at equal FPR
  kCounting = 1,  // blocked counting Bloom filter: 4-bit counters, FPR from target_fpr
};

struct FilteredDBOptions {
  // A hint, not a floor. The index is sized for the live keys: at most 4
  // bytes per live key plus 256 KiB of memory and of index file (d-left)
  // when built, growing to the largest size that budget allows as keys are
  // added (sizes at most 1/8 apart) and shrinking once deletes leave it over
  // twice the budget (docs/FILTERED_DB.md, "Sizing"). Within that budget a larger
  // hint gives a young database a larger first index (fewer early growth
  // rebuilds); a program that opens many small databases may set it low
  // (e.g. 1000: an index of a few KiB per database instead of up to 256 KiB).
  uint64_t expected_keys = 1000000;
  // Target FPR of the whole index (front filter and counting filter
  // together) at capacity; it chooses the d-left cells (docs/FILTERED_DB.md,
  // "Sizing"): 12-bit cells (0.168% with the front filter, 2.88 bytes per
  // key of capacity) for every target from 0.168%, the default included;
  // 16-bit cells (8.4e-5, 3.42 bytes per key) below it. 8.4e-5 is the
  // lowest target the d-left index's memory budget allows: any value is
  // accepted, lower ones (0 and negative ones too) are clamped to it, higher
  // ones to 1, and NaN means the default. The counting kind takes lower
  // targets, sized for the keys beyond the budget (at most 64 counters, 32
  // bytes, per key).
  double target_fpr = 0.002;
  // kDleft or kCounting; any other value (an integer cast to IndexKind)
  // fails Open with InvalidArgument and opens nothing, as blockbloom/c.h
  // does.
  IndexKind kind = IndexKind::kDleft;
  // Save the index at close / SaveIndex() and load it at Open when valid
  // (for the same kind and target_fpr's geometry, the directory unchanged).
  bool persist_index = true;
  // The index knows a key by its bytes, so it may rule out a key only where
  // LevelDB's comparator calls two keys equal exactly when their bytes are.
  // leveldb::BytewiseComparator() (LevelDB's default) does; with any other
  // options.comparator, Open fails with InvalidArgument unless this is set,
  // the caller's promise that the comparator orders keys differently but
  // never calls keys of different bytes equal (a reversed or length-first
  // order keeps the promise; a case-insensitive one breaks it: the index
  // would answer NotFound for "apple" after a Put of "Apple"). The same rule
  // as LevelDB's own filter policies, which hash the bytes too.
  bool comparator_equality_is_bytewise = false;
  // Called during every rebuild scan (Open, growth, RebuildIndex) each
  // `progress_interval` keys and once at the end, with the keys scanned so
  // far. Runs on the scanning thread (a background thread during growth);
  // writers are not blocked. It must not call RebuildIndex() or
  // WaitForGrowth() (the rebuild calling it holds the rebuild lock, and may
  // be the growth being waited for: a deadlock). If it throws, the rebuild
  // fails as when out of memory: Open and RebuildIndex() return an IOError,
  // a growth keeps the current index; the exception goes no further.
  std::function<void(uint64_t keys_scanned)> progress;
  uint64_t progress_interval = 65536;
};

// How Open obtained its index.
enum class IndexSource { kScan, kFile };

struct FilteredDBStats {
  bool index_active = false;  // false: saturated / pass-through
  IndexSource opened_from = IndexSource::kScan;
  uint64_t keys = 0;          // live keys the index holds
  uint64_t capacity = 0;      // keys before the next growth rebuild
  uint64_t memory_bytes = 0;  // current index (plus retired ones not yet freed)
  // The pair's model FPR (front filter at its load times the counting filter's).
  double estimated_fpr = 0.0;
  // Per-Get counters (summed over the per-thread slots; each is exact once
  // the counted Gets have returned).
  uint64_t gets_checked = 0;    // Gets that consulted the index
  uint64_t gets_ruled_out = 0;  // answered NotFound by the index alone
  uint64_t filter_passes = 0;   // index said "may be present"
  // ... and LevelDB said NotFound: the index's false positives, and absent
  // keys sent on without the counting filter's probe (see below).
  uint64_t passes_not_found = 0;
  // Passes of the front filter sent to LevelDB without the counting filter's
  // probe (included in filter_passes): that reader thread had seen fewer than
  // 1 in 8 of its recent passes turn out absent (docs/FILTERED_DB.md).
  uint64_t counting_probes_skipped = 0;
  uint64_t rebuilds = 0;         // completed scans (Open, growth, RebuildIndex)
  uint64_t insert_refusals = 0;  // d-left full bucket / overflow
  uint64_t failed_writes = 0;    // LevelDB writes that failed after index inserts
  uint64_t index_saves = 0;      // index files written
};

class KeyIndex;  // the index (private to the library)

class FilteredDB final : public leveldb::DB {
 public:
  // Opens (or creates, per `options`) the LevelDB database at `name` and
  // loads the saved index when valid, else builds it with a full scan. A
  // database LevelDB opens but cannot scan in full for damage (a damaged
  // table: Corruption, or a table cut short, which LevelDB's reader reports
  // as an IOError of EINVAL) opens saturated, every Get passing through, as
  // plain LevelDB serves it; another error of the scan fails the Open. On
  // error *db is left null.
  static leveldb::Status Open(const FilteredDBOptions& fdb_options, const leveldb::Options& options,
                              const std::string& name, std::unique_ptr<FilteredDB>* db);

  FilteredDB(const FilteredDB&) = delete;
  FilteredDB& operator=(const FilteredDB&) = delete;
  // Stops any background rebuild, closes LevelDB, then (persist_index) saves
  // the index. A failed save leaves no current index file: an older one from
  // SaveIndex() may remain, but it no longer matches the directory and is
  // never used (the next Open scans). Call SaveIndex() first to see errors.
  ~FilteredDB() override;

  // leveldb::DB, same arguments and results.
  leveldb::Status Put(const leveldb::WriteOptions& options, const leveldb::Slice& key,
                      const leveldb::Slice& value) override;
  leveldb::Status Delete(const leveldb::WriteOptions& options, const leveldb::Slice& key) override;
  leveldb::Status Write(const leveldb::WriteOptions& options,
                        leveldb::WriteBatch* updates) override;
  leveldb::Status Get(const leveldb::ReadOptions& options, const leveldb::Slice& key,
                      std::string* value) override;
  leveldb::Iterator* NewIterator(const leveldb::ReadOptions& options) override;
  const leveldb::Snapshot* GetSnapshot() override;
  void ReleaseSnapshot(const leveldb::Snapshot* snapshot) override;
  // LevelDB's properties, plus:
  //   "blockbloom.stats"               all of FilteredDBStats, "name: value" per line,
  //                                    and bytes-per-live-key (index memory / keys)
  //   "blockbloom.index-keys"          live keys in the index
  //   "blockbloom.index-memory-bytes"  index memory
  //   "blockbloom.index-estimated-fpr"
  //   "blockbloom.index-gets-ruled-out"
  //   "blockbloom.index-filter-passes"
  //   "blockbloom.index-passes-not-found"
  //   "blockbloom.index-measured-fpr"  passes_not_found / (ruled out + passes_not_found):
  //                                    the share of absent keys' Gets that reached
  //                                    LevelDB. While no counting probe is skipped
  //                                    it is the index's live FPR; skipped probes
  //                                    (counting_probes_skipped) send on absent
  //                                    keys the counting filter would rule out,
  //                                    deleted ones among them (at most about 1 in
  //                                    8 passes), and it is then higher than
  //                                    index-estimated-fpr.
  //   "blockbloom.filter-policy-stats" the table filter policy's probes,
  //                                    negatives and positives, one per line
  //                                    (blockbloom/filter_stats.h); absent
  //                                    unless LevelDB was opened with one of
  //                                    blockbloom's policies
  // ("blockbloom.index-stats" is an alias of "blockbloom.stats".)
  bool GetProperty(const leveldb::Slice& property, std::string* value) override;
  void GetApproximateSizes(const leveldb::Range* range, int n, uint64_t* sizes) override;
  void CompactRange(const leveldb::Slice* begin, const leveldb::Slice* end) override;

  // Rebuilds the index from a snapshot scan (sized for the keys found, as a
  // growth is; expected_keys only a hint) while writers continue; returns
  // when the new index is published. The way out of the saturated state.
  // On a failed scan, LevelDB's error (every Get then passes through); when
  // the index cannot be built (out of memory), an IOError and the index in
  // use stays.
  leveldb::Status RebuildIndex();
  // Writes the index file now. Writers wait while the index is copied and
  // the directory listed (CURRENT, MANIFEST and logs are hashed: about a
  // millisecond per few MB), not while the file is written and synced. The
  // file is used by the next Open only if the directory is then exactly as
  // listed now -- e.g. after a crash with no write since. Concurrent calls
  // run one after another (each saves the index as of its turn). InvalidArgument
  // while the index is saturated (pass-through), NotSupported when
  // persistence is off, IOError on file-system errors and after any write of
  // this session failed (it may come back when LevelDB reopens).
  leveldb::Status SaveIndex();

  // Returns once no growth rebuild is running (one may start again with the
  // next write). For tests and orderly shutdowns; never needed for correctness.
  void WaitForGrowth();

  FilteredDBStats index_stats() const;

 private:
  struct Impl;
  explicit FilteredDB(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Opens a FilteredDB as a plain leveldb::DB; the caller deletes *dbptr (which
// saves the index). On error *dbptr is null.
leveldb::Status OpenFilteredDB(const FilteredDBOptions& fdb_options,
                               const leveldb::Options& options, const std::string& name,
                               leveldb::DB** dbptr);

// leveldb::DestroyDB plus FilteredDB's index files, so the directory goes too.
// IOError (and LevelDB's files untouched) if an index file exists and cannot
// be removed; OK when there is nothing to remove. With an options.env other
// than Env::Default() (where FilteredDB saves no index), only
// leveldb::DestroyDB: nothing on the real file system is touched. A
// database this process holds open is not destroyed (LevelDB's lock error),
// and its holder keeps its lock (LevelDB 1.23's refused LockFile drops it;
// FilteredDB takes it back for the process).
leveldb::Status DestroyFilteredDB(const std::string& name, const leveldb::Options& options);

}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTERED_DB_H_
