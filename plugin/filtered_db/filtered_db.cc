#include "blockbloom/filtered_db.h"

#include "blockbloom/filter_stats.h"

#include <fcntl.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/membarrier.h>
#include <sys/syscall.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <bitset>
#include <cassert>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/xxh3_inline.h"
#include "filtered_db/index_file.h"
#include "filtered_db/key_index.h"
#include "filtered_db/testing_hooks.h"
#include "leveldb/env.h"

namespace blockbloom {
namespace {

// blockbloom::HashKey, inlined: every Get and write hashes its key once, here.
inline uint64_t Hash(const leveldb::Slice& key) {
  return internal::InlineHashBytes(key.data(), key.size());
}

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
// The rebuild's write log is replayed without the writer mutex until at most
// this many entries are left; the rest is replayed under it, then published.
constexpr size_t kFinalReplayEntries = 4096;

// Reader slots. A thread leases one of kOwnedSlots slots on its first Get
// (process-wide, returned when the thread exits) and is then the only writer
// of that slot in every FilteredDB: its Gets use plain stores. Threads that
// find every slot leased share slot kSharedSlot, with read-modify-writes.
constexpr unsigned kOwnedSlots = 64;
constexpr unsigned kSharedSlot = kOwnedSlots;
constexpr unsigned kReaderSlots = kOwnedSlots + 1;

std::atomic<uint64_t> g_leased_slots{0};  // bit i: slot i leased by a live thread

struct SlotLease {
  unsigned slot = kSharedSlot;
  SlotLease() {
    uint64_t leased = g_leased_slots.load(std::memory_order_relaxed);
    while (~leased != 0) {
      const unsigned i = static_cast<unsigned>(__builtin_ctzll(~leased));
      if (g_leased_slots.compare_exchange_weak(leased, leased | (uint64_t{1} << i),
                                               std::memory_order_acq_rel)) {
        slot = i;
        return;
      }
    }
  }
  ~SlotLease() {
    if (slot != kSharedSlot) {
      g_leased_slots.fetch_and(~(uint64_t{1} << slot), std::memory_order_acq_rel);
    }
  }
};

unsigned ThreadSlot() {
  thread_local const SlotLease lease;
  return lease.slot;
}

// One cache line per slot, written only by the thread that leased it (or, for
// kSharedSlot, by the threads sharing it).
struct alignas(64) ReaderSlot {
  std::atomic<uint64_t> active{0};  // readers inside an index probe
  std::atomic<uint64_t> ruled_out{0};
  std::atomic<uint64_t> passes{0};
  std::atomic<uint64_t> passes_not_found{0};
  std::atomic<uint64_t> counting_skipped{0};
  // Whether this slot's Gets consult the counting filter after the front
  // filter passed a key (see CountingPolicy). Owned slots only; relaxed
  // loads and stores by the slot's one thread.
  std::atomic<uint32_t> skip_counting{0};
  std::atomic<uint32_t> window_passes{0};
  std::atomic<uint32_t> window_absent{0};
};

// When to consult the counting filter. The front filter passes every live key
// and a few absent ones (its false positives, and keys deleted since the last
// rebuild). For the latter the counting filter saves a LevelDB Get (~1 us);
// for a live key its probe (a d-left filter's four buckets, each a likely
// cache miss) is pure cost, and is most of the index's cost on a present-key
// Get. So each reader thread watches, over windows of kWindow front-filter
// passes, the fraction that turned out absent: ruled out by the counting
// filter while it consults it, NotFound from LevelDB while it skips it. Below
// 1/kSkipBelow it skips the counting filter for the next window; from
// 1/kSkipBelow up it consults it again. The cost of skipping is thus bounded
// by about one LevelDB Get per kSkipBelow passes (plus one window's worth when
// the mix changes), and Gets of deleted or mostly absent keys keep being
// ruled out by the counting filter. Answers never depend on it: a pass always
// goes to LevelDB. (The same trade as RocksDB's optimize_filters_for_hits,
// decided online.)
constexpr uint32_t kWindow = 64;
constexpr uint32_t kSkipBelow = 8;

// Called by the owner of `slot` after one front-filter pass; `absent` is
// whether the key turned out absent (counting filter or LevelDB).
inline void CountPass(ReaderSlot& slot, bool absent) {
  const uint32_t passes = slot.window_passes.load(std::memory_order_relaxed) + 1;
  const uint32_t absents = slot.window_absent.load(std::memory_order_relaxed) + (absent ? 1 : 0);
  if (passes < kWindow) {
    slot.window_passes.store(passes, std::memory_order_relaxed);
    slot.window_absent.store(absents, std::memory_order_relaxed);
    return;
  }
  slot.skip_counting.store(absents * kSkipBelow < kWindow ? 1 : 0, std::memory_order_relaxed);
  slot.window_passes.store(0, std::memory_order_relaxed);
  slot.window_absent.store(0, std::memory_order_relaxed);
}

// +1 by the slot's only writer (a plain load and store) or by any thread (RMW).
inline void Bump(std::atomic<uint64_t>& counter, bool owned) {
  if (owned) {
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  } else {
    counter.fetch_add(1, std::memory_order_relaxed);
  }
}

// Asymmetric fences (Linux membarrier(2), MEMBARRIER_CMD_PRIVATE_EXPEDITED;
// the technique of folly's hazard pointers, "asymmetric heavy/light
// barriers"). A reader announcing itself must order its announce store before
// its load of the index pointer (StoreLoad): with a seq_cst store that is a
// locked instruction (~20 cycles) on every Get, and it also keeps the CPU from
// overlapping one Get's cache miss with the next Get. Instead the rare side --
// the writer that wants to free a retired index -- calls HeavyBarrier() once
// after unpublishing it: the kernel makes every running thread of the process
// execute a full memory barrier (a thread not running has one at its context
// switch) before the call returns. Readers then need only a compiler barrier
// (LightBarrier). The argument is in FreeRetiredLocked.
bool RegisterHeavyBarrier() {
#ifdef __linux__
  static const bool registered =
      syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  return registered;
#else
  return false;
#endif
}

// REQUIRES: RegisterHeavyBarrier() returned true. False if the call failed.
bool HeavyBarrier() {
#ifdef __linux__
  return syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
  return false;
#endif
}

inline void LightBarrier() { std::atomic_signal_fence(std::memory_order_seq_cst); }

std::atomic<bool> g_force_seq_cst_readers{false};  // ForceSeqCstReadersForTesting
std::atomic<void (*)(const std::string&)> g_open_window_hook{nullptr};     // testing_hooks.h
std::atomic<void (*)(const std::string&)> g_close_window_hook{nullptr};    // testing_hooks.h
std::atomic<void (*)(const std::string&)> g_growth_rebuilt_hook{nullptr};  // testing_hooks.h

bool UseLightReaders() {
  return !g_force_seq_cst_readers.load(std::memory_order_relaxed) && RegisterHeavyBarrier();
}

// Locking <db>/LOCK. POSIX record locks belong to the process, not to a
// descriptor: a process's own locks never conflict with each other, and
// closing ANY descriptor of the file drops ALL of the process's locks on it.
// So a second LevelDB of this process would open under the first one's lock,
// and closing a descriptor of LOCK would leave another LevelDB of the process
// open without a lock (another process could then open the database too: two
// writers). LevelDB guards against the first with its Env's in-process table
// of locked file names, but not against the second: PosixEnv::LockFile,
// asked for a name its table holds, closes the descriptor it just opened
// (LevelDB 1.23 util/env_posix.cc), which drops the holder's lock.
//
// Hence FilteredDB's rules: its only lock is LevelDB's own (Env::LockFile:
// table entry and POSIX lock together), which it never lets go of while its
// index is validated, in use or saved; it closes no descriptor of LOCK
// itself; and it asks LevelDB for the lock only when no FilteredDB of this
// process holds the database (LockedDirs), repairing the damage when a plain
// LevelDB of the process does (RestoreLockAfterInProcessRefusal).

// The database directories a FilteredDB of this process holds (DbLock), by
// the name LevelDB's table has them under.
std::mutex& LockedDirsMu() {
  static std::mutex mu;
  return mu;
}
std::set<std::string>& LockedDirs() {
  static auto* dirs = new std::set<std::string>();  // never destroyed: used at exit
  return *dirs;
}

// Whether LevelDB runs on Env::Default(), the real file system: the only one
// where FilteredDB keeps index files and locks <db>/LOCK itself.
bool UsesDefaultEnv(const leveldb::Options& options) {
  return options.env == nullptr || options.env == leveldb::Env::Default();
}

// How LevelDB 1.23's PosixEnv words the in-process refusal of a lock.
bool IsInProcessRefusal(const leveldb::Status& s) {
  return s.IsIOError() && s.ToString().find("already held by process") != std::string::npos;
}

// `s` is a failed Env::Default()->LockFile of <dir>/LOCK (FilteredDB's, or
// inside LevelDB's Open). If LevelDB refused it because its in-process table
// holds the file, LevelDB's descriptor close just dropped the lock of the
// LevelDB that holds it: take the lock again for the process, through a
// descriptor that is never closed (closing it would drop the lock again,
// whoever holds it by then), so no other process can open the database under
// the holder. The holder's close releases it as before (its UnlockFile
// unlocks the process's lock). Cost: one descriptor for the process's life
// per such refused open (opening a database this process has open is a
// misuse; FilteredDBs are refused before LevelDB is asked, see DbLock). If
// another process took the lock in the moment between, nothing can be done;
// if the holder closed in that moment, the process keeps a lock nobody
// releases until a LevelDB of this process opens and closes the database
// (or the process exits): other processes are refused, never let in.
void RestoreLockAfterInProcessRefusal(const std::string& dir, const leveldb::Status& s) {
  if (!IsInProcessRefusal(s)) return;
  const int fd = ::open((dir + "/LOCK").c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  struct flock f = {};
  f.l_type = F_WRLCK;
  f.l_whence = SEEK_SET;
  (void)::fcntl(fd, F_SETLK, &f);                  // fails only if another process holds it now
  static std::mutex kept_mu;                       // (callers may hold LockedDirsMu)
  static auto* kept_fds = new std::vector<int>();  // never freed, never closed
  std::lock_guard<std::mutex> lock(kept_mu);
  kept_fds->push_back(fd);
}

// FilteredDB's hold on a database: LevelDB's lock on <db>/LOCK, taken before
// the index file is validated and released after it is saved at close. In
// between LevelDB borrows it: LevelDB is opened with env(), which hands it the
// held lock when it asks for <db>/LOCK and takes it back, still held, when
// LevelDB unlocks it at its close. So from Acquire to Release no other opener
// of the database, another process or another thread of this one, gets in
// (an in-process one is refused by LevelDB's table, which has the name all
// along): the index cannot be validated, used or saved while anybody else
// writes. (It once held its own POSIX lock on a raw descriptor beside
// LevelDB's, released at LevelDB's close and re-taken after it: in that window
// a plain LevelDB of this process could open the database, and closing the
// raw descriptor then dropped that LevelDB's lock.)
class DbLock {
 public:
  DbLock() = default;
  DbLock(const DbLock&) = delete;
  DbLock& operator=(const DbLock&) = delete;
  ~DbLock() { Release(); }

  // OK: held. Otherwise what LevelDB's Open would report, and nothing held.
  leveldb::Status Acquire(const std::string& dir) {
    const std::string lock_name = dir + "/LOCK";
    std::lock_guard<std::mutex> lock(LockedDirsMu());
    // Another FilteredDB of this process holds it: refused here, without
    // asking LevelDB (whose refusal would drop the holder's lock).
    if (LockedDirs().count(dir) != 0) {
      return leveldb::Status::IOError("lock " + lock_name, "already held by process");
    }
    leveldb::Status s = leveldb::Env::Default()->LockFile(lock_name, &env_.held);
    if (!s.ok()) {
      env_.held = nullptr;
      RestoreLockAfterInProcessRefusal(dir, s);
      return s;
    }
    env_.lock_name = lock_name;
    dir_ = dir;
    LockedDirs().insert(dir);
    return s;
  }
  // REQUIRES: LevelDB is closed (or never opened) on this directory.
  void Release() {
    if (env_.held == nullptr) return;
    assert(!env_.lent);
    // Under the mutex: an Acquire of this directory by another FilteredDB
    // waits, rather than finding it in LockedDirs a moment after it is free.
    std::lock_guard<std::mutex> lock(LockedDirsMu());
    (void)leveldb::Env::Default()->UnlockFile(env_.held);
    env_.held = nullptr;
    LockedDirs().erase(dir_);
  }
  // Env::Default(), lending the held lock. REQUIRES: held.
  leveldb::Env* env() { return &env_; }

 private:
  // LevelDB asks for the lock once at Open (LockFile of dbname + "/LOCK",
  // exactly the name Acquire locked) and gives it back once at close or
  // after a failed Open; both on the thread that opens or closes the
  // FilteredDB. Any other lock request goes to Env::Default().
  struct LendingEnv : public leveldb::EnvWrapper {
    LendingEnv() : EnvWrapper(leveldb::Env::Default()) {}
    leveldb::Status LockFile(const std::string& name, leveldb::FileLock** lock) override {
      if (held != nullptr && !lent && name == lock_name) {
        lent = true;
        *lock = held;
        return leveldb::Status::OK();
      }
      return target()->LockFile(name, lock);
    }
    leveldb::Status UnlockFile(leveldb::FileLock* lock) override {
      if (lent && lock == held) {
        lent = false;  // back to the DbLock, still locked
        return leveldb::Status::OK();
      }
      return target()->UnlockFile(lock);
    }
    std::string lock_name;
    leveldb::FileLock* held = nullptr;
    bool lent = false;
  };

  LendingEnv env_;
  std::string dir_;
};

// A LevelDB write-ahead log (<number>.log): what every write appends to.
bool IsLogFile(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".log") == 0;
}

// One key of a write, its hash, and whether it is present after the write.
struct KeyOp {
  leveldb::Slice key;
  uint64_t hash;
  bool present_after;
};

struct LogEntry {
  uint64_t hash;
  bool insert;  // false: erase
};

struct Retired {
  std::unique_ptr<KeyIndex> index;
  std::bitset<kReaderSlots> pending;  // slot i not yet seen idle since unpublished
  bool fenced = false;                // light readers: a HeavyBarrier() ran after the unpublish
};

}  // namespace

struct FilteredDB::Impl {
  Impl(const FilteredDBOptions& o, std::string n)
      : options(o), name(std::move(n)), light_readers(UseLightReaders()) {}

  // All *Locked REQUIRE write_mu held.
  // Retired indexes that no reader can hold any more move to *garbage, for
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
                              leveldb::WriteBatch* batch, const KeyOp* ops, size_t n,
                              std::vector<std::unique_ptr<KeyIndex>>* garbage);
  void StartGrowthLocked(uint64_t min_capacity);
  // A growth failed (or could not start): the next may start once the
  // current index has taken as many inserts again (a failure right after a
  // publish: after 2), so attempts double apart. No-op without an index.
  void DeferGrowthRetryLocked() {
    if (current != nullptr) {
      growth_retry_inserts = 2 * std::max<uint64_t>(current->inserted_since_build(), 1);
    }
  }
  // Builds a new index from a consistent scan plus the write log and publishes
  // it; writers run meanwhile. Serialized by rebuild_mu. OK when stopped.
  leveldb::Status Rebuild(uint64_t min_capacity);
  // *capacity: at least this many keys in, the size actually used out.
  leveldb::Status RebuildAttempt(uint64_t* capacity, bool* refused);
  // Copies the index and lists the directory under write_mu; writes outside.
  // Serialized by save_mu.
  leveldb::Status Save();

  const FilteredDBOptions options;
  // The table filter policy LevelDB was opened with (may be null): its probe
  // counts are reported by GetProperty("blockbloom.filter-policy-stats").
  const leveldb::FilterPolicy* filter_policy = nullptr;
  const std::string name;
  bool persist = false;
  DbLock db_lock;  // held iff persist; declared before db: outlives it (LevelDB uses its env)
  std::string current_at_open;  // CURRENT's bytes right after our LevelDB::Open
  std::unique_ptr<leveldb::DB> db;

  // One Save at a time, from the copy of the index to the rename of its file
  // (every save writes through the same temporary file name); taken before
  // write_mu.
  std::mutex save_mu;
  std::mutex rebuild_mu;                  // one rebuild at a time; taken before write_mu
  std::mutex write_mu;                    // writers, publication, the write log, counters below
  std::unique_ptr<KeyIndex> current;      // null = saturated / pass-through
  std::vector<Retired> retired;           // unpublished, maybe still being read
  std::atomic<KeyIndex*> index{nullptr};  // what readers use: current.get()
  std::array<ReaderSlot, kReaderSlots> slots;
  // Owned-slot readers announce with a relaxed store and a compiler barrier
  // (membarrier available), else with a seq_cst store. Fixed at construction.
  const bool light_readers;

  bool logging = false;         // a rebuild's snapshot is taken: log writes
  std::vector<LogEntry> log;    // writes since that snapshot, in order
  bool growth_running = false;  // the growth thread is (still) working
  // After a failed growth (no memory for the larger index, a throwing
  // progress callback): the current index's inserted_since_build() from
  // which writes may start another. Without it, every write after the
  // failure would start another full scan. 0 when no growth has failed since
  // the index was published.
  uint64_t growth_retry_inserts = 0;
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

void FilteredDB::Impl::PublishLocked(std::unique_ptr<KeyIndex> next,
                                     std::vector<std::unique_ptr<KeyIndex>>* garbage) {
  if (current != nullptr) {
    // Room first: should it throw (out of memory), nothing has changed; a
    // push_back that threw after moving `current` out would free the index
    // readers still reach through `index`.
    retired.reserve(retired.size() + 1);
    retired.push_back({std::move(current), std::bitset<kReaderSlots>().set(), false});
  }
  current = std::move(next);
  index.store(current.get(), std::memory_order_seq_cst);
  growth_retry_inserts = 0;  // a new index: its own growths start afresh
  FreeRetiredLocked(garbage);
}

void FilteredDB::Impl::FreeRetiredLocked(std::vector<std::unique_ptr<KeyIndex>>* garbage) {
  // A reader announces itself in its slot's `active` (store 1, or increment
  // in the shared slot) before it loads `index` (seq_cst), and clears it
  // (release) after its probe. A retired index was unpublished by a seq_cst
  // store U before this function runs.
  //  - seq_cst announce (shared slot; owned slots without membarrier): if a
  //    reader loaded the old pointer, its load, hence its announce, precedes
  //    U in the single total order, so the seq_cst slot load below sees the
  //    announce or a later value.
  //  - light announce (owned slots, relaxed store + compiler barrier): the
  //    HeavyBarrier B below runs after U. Each reader thread executes a full
  //    barrier F somewhere in its program during B. If its announce precedes
  //    F, the announce is visible to every load after B, as above. If it
  //    follows F, so does its pointer load, which then sees U: that reader
  //    holds the new pointer, not this one.
  // Either way, a 0 seen after that can only be the release clear of a
  // reader that loaded the old pointer (acquire: its probe happens before
  // the free), or a reader that will load a newer pointer. Slots are checked
  // one at a time: each must be seen idle once, not all at the same instant.
  if (light_readers) {
    bool need_barrier = false;
    for (const Retired& r : retired) need_barrier |= !r.fenced;
    // One barrier covers every index unpublished before it. If it fails the
    // retired indexes stay until a later call succeeds (or until close).
    if (need_barrier && !HeavyBarrier()) return;
    for (Retired& r : retired) r.fenced = true;
  }
  for (auto it = retired.begin(); it != retired.end();) {
    for (unsigned i = 0; i < kReaderSlots; ++i) {
      if (it->pending[i] && slots[i].active.load(std::memory_order_seq_cst) == 0) {
        it->pending[i] = false;
      }
    }
    if (it->pending.none()) {
      garbage->push_back(std::move(it->index));
      it = retired.erase(it);
    } else {
      ++it;
    }
  }
}

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

void FilteredDB::Impl::StartGrowthLocked(uint64_t min_capacity) {
  if (stopping.load(std::memory_order_relaxed)) return;
  if (growth_running) {
    // The running growth may have published already (it is on its way out):
    // then a refusal that unpublished its index would otherwise leave the
    // index saturated with no growth to come.
    growth_requested = std::max(growth_requested, min_capacity);
    return;
  }
  // A previous growth thread cleared growth_running (under write_mu, which we
  // hold) as its last step, so it is exiting without taking locks: join is
  // immediate.
  if (growth_thread.joinable()) growth_thread.join();
  // growth_running is set only once the thread exists (it needs write_mu,
  // which we hold, before it can clear it). When no thread can be started
  // (std::system_error, EAGAIN at the process's thread limit; or out of
  // memory) the growth fails like one that cannot allocate its index: the
  // write goes on (no exception leaves it), and the next attempt waits for
  // as many inserts again.
  try {
    growth_thread = std::thread([this, min_capacity] {
      uint64_t capacity = min_capacity;
      for (;;) {
        const leveldb::Status s = Rebuild(capacity);  // saturation is visible in stats
        if (auto* hook = g_growth_rebuilt_hook.load(std::memory_order_relaxed)) hook(name);
        std::lock_guard<std::mutex> lock(write_mu);
        if (!s.ok()) DeferGrowthRetryLocked();
        // Asked again since the last publish (a refusal of the index just
        // published): rebuild again. Ends: a request needs a published
        // index to refuse, and a rebuild that gives up publishes none.
        if (s.ok() && growth_requested != 0 && !stopping.load(std::memory_order_relaxed)) {
          capacity = growth_requested;
          growth_requested = 0;
          continue;
        }
        growth_requested = 0;
        growth_running = false;
        growth_done.notify_all();
        return;
      }
    });
  } catch (...) {
    DeferGrowthRetryLocked();
    return;
  }
  growth_running = true;
}

leveldb::Status FilteredDB::Impl::RebuildAttempt(uint64_t* capacity, bool* refused) {
  *refused = false;
  // The scan's iterator is created under write_mu: it sees exactly the writes
  // made before this point (LevelDB's implicit snapshot at NewIterator), and
  // every write after it is in the log.
  std::unique_ptr<leveldb::Iterator> it;
  {
    std::lock_guard<std::mutex> lock(write_mu);
    logging = true;
    log.clear();
    leveldb::ReadOptions read_options;
    read_options.fill_cache = false;
    it.reset(db->NewIterator(read_options));
  }
  const auto stop_logging = [&] {
    std::lock_guard<std::mutex> lock(write_mu);
    logging = false;
    log.clear();
    log.shrink_to_fit();
  };
  // One scan collects the live keys' hashes (8 bytes per key, freed after),
  // so the index can be sized for what is actually there.
  std::vector<uint64_t> hashes;
  const uint64_t interval = std::max<uint64_t>(options.progress_interval, 1);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    hashes.push_back(Hash(it->key()));
    if (hashes.size() % interval == 0) {
      if (options.progress) options.progress(hashes.size());
      if (stopping.load(std::memory_order_relaxed)) break;
    }
  }
  if (options.progress) options.progress(hashes.size());
  const leveldb::Status s = it->status();
  it.reset();
  if (!s.ok() || stopping.load(std::memory_order_relaxed)) {
    stop_logging();
    if (!s.ok()) {
      // Cannot know the live set: pass everything through.
      std::vector<std::unique_ptr<KeyIndex>> garbage;
      std::lock_guard<std::mutex> lock(write_mu);
      PublishLocked(nullptr, &garbage);
    }
    return s;
  }
  *capacity = std::max<uint64_t>({*capacity,
                                  KeyIndex::CapacityFor(options.kind, hashes.size(),
                                                        options.expected_keys, options.target_fpr),
                                  1});
  auto built = KeyIndex::Create(options.kind, *capacity, options.target_fpr);
  std::unique_ptr<KeyIndex> next;
  if (built.ok()) {
    next = std::move(built).value();
    *capacity = next->capacity();  // a retry after a refusal doubles the table
    for (uint64_t h : hashes) {
      if (!next->Insert(h).ok()) {
        *refused = true;
        break;
      }
    }
  }
  std::vector<uint64_t>().swap(hashes);
  const auto replay = [&](const std::vector<LogEntry>& entries) {
    for (const LogEntry& e : entries) {
      if (e.insert) {
        if (!next->Insert(e.hash).ok()) *refused = true;
      } else {
        (void)next->Erase(e.hash);  // inserted by the scan or an earlier entry
      }
      if (*refused) return;
    }
  };
  // Replay the log in chunks while writers keep appending to it; the last
  // chunk is replayed and the index published under write_mu, atomically with
  // respect to every write.
  std::vector<LogEntry> chunk;
  std::vector<std::unique_ptr<KeyIndex>> garbage;  // freed after write_mu is released
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(write_mu);
      if (next == nullptr || *refused) {
        lock.unlock();
        stop_logging();
        if (*refused) {
          std::lock_guard<std::mutex> relock(write_mu);
          ++insert_refusals;
        }
        return built.ok() ? leveldb::Status::OK()
                          : leveldb::Status::IOError("FilteredDB index", built.status().ToString());
      }
      if (log.size() <= kFinalReplayEntries) {
        replay(log);
        if (!*refused) {
          logging = false;
          log.clear();
          log.shrink_to_fit();
          ++rebuilds;
          growth_requested = 0;  // met by this index
          PublishLocked(std::move(next), &garbage);
          // It was sized at the scan: writers may have added more keys than
          // it holds since. Grow again now rather than at the next write.
          if (current->keys() > current->capacity()) StartGrowthLocked(current->capacity() + 1);
          return leveldb::Status::OK();
        }
        continue;  // handled at the top
      }
      chunk.swap(log);
      log.clear();
    }
    replay(chunk);
    chunk.clear();
  }
}

leveldb::Status FilteredDB::Impl::Rebuild(uint64_t min_capacity) {
  std::lock_guard<std::mutex> rebuild_lock(rebuild_mu);
  uint64_t capacity = min_capacity;
  for (int attempt = 0; attempt < kMaxBuildAttempts; ++attempt, capacity *= 2) {
    bool refused = false;
    leveldb::Status s;
    try {
      s = RebuildAttempt(&capacity, &refused);
    } catch (...) {
      // Out of memory (the scan's hashes, the new index) or an exception
      // from the progress callback: this rebuild fails like one whose index
      // cannot be allocated. The current index (or pass-through) stays, and
      // is exact: writers kept updating it. On the growth thread an
      // exception would terminate the process.
      std::lock_guard<std::mutex> lock(write_mu);
      logging = false;
      std::vector<LogEntry>().swap(log);
      return leveldb::Status::IOError("FilteredDB index",
                                      "rebuild failed: out of memory or progress threw");
    }
    if (!s.ok() || !refused || stopping.load(std::memory_order_relaxed)) return s;
  }
  std::vector<std::unique_ptr<KeyIndex>> garbage;
  std::lock_guard<std::mutex> lock(write_mu);
  PublishLocked(nullptr, &garbage);  // saturated: correct, just unfiltered
  return leveldb::Status::OK();
}

leveldb::Status FilteredDB::Impl::Save() {
  if (!persist) return leveldb::Status::NotSupported("FilteredDB: persist_index is off");
  std::lock_guard<std::mutex> save_lock(save_mu);
  filtered_db::IndexFileContents contents;
  {
    std::lock_guard<std::mutex> lock(write_mu);
    if (current == nullptr) {
      return leveldb::Status::InvalidArgument("FilteredDB: index saturated, nothing to save");
    }
    // No write is in flight (they hold write_mu): the index is a superset of
    // the live keys of the database the listing describes.
    current->Serialize(&contents.payload);
    auto listing = filtered_db::ListDbDir(name);
    if (!listing.ok()) return leveldb::Status::IOError(name, listing.status().ToString());
    contents.listing = std::move(listing).value();
  }
  const absl::Status s = filtered_db::WriteIndexFile(name, contents);
  if (!s.ok()) return leveldb::Status::IOError(name, s.ToString());
  std::lock_guard<std::mutex> lock(write_mu);
  ++saves;
  return leveldb::Status::OK();
}

FilteredDB::FilteredDB(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FilteredDB::~FilteredDB() {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lock(m.write_mu);
    m.stopping.store(true, std::memory_order_relaxed);
  }
  if (m.growth_thread.joinable()) m.growth_thread.join();
  std::string payload;
  if (m.persist && m.current != nullptr) m.current->Serialize(&payload);
  // The logs as this session leaves them, listed while LevelDB still holds
  // the database: no write can run now, and closing never appends to a log
  // (a compaction finishing during the close only adds tables, appends to
  // the MANIFEST and deletes obsolete logs).
  std::vector<filtered_db::DirEntry> logs_at_close;
  bool logs_listed = false;
  if (!payload.empty()) {
    auto listing = filtered_db::ListDbDir(m.name);
    if (listing.ok()) {
      for (filtered_db::DirEntry& e : *listing) {
        if (IsLogFile(e.name)) logs_at_close.push_back(std::move(e));
      }
      logs_listed = true;
    }
  }
  // LevelDB closed: no more file changes. It gave the lock back to db_lock
  // (still held: no opener can get in while the index is saved).
  m.db.reset();
  if (auto* hook = g_close_window_hook.load(std::memory_order_relaxed)) hook(m.name);
  if (m.persist && logs_listed) {
    // The lock keeps every opener out, unless it was dropped under us: a
    // failed open of this database elsewhere in this process (LevelDB's
    // in-process refusal closes a descriptor of LOCK, dropping the process's
    // lock; see RestoreLockAfterInProcessRefusal), or an opener that names
    // the directory differently (LevelDB's table goes by the name, and this
    // process's own POSIX locks never conflict). Such an opener's writes
    // would be in the listing but not in the index, so save only if there
    // was none: LevelDB with reuse_logs = false (the default) writes a new
    // CURRENT on every open, and every write goes to a log, which is then new
    // or longer (an opener with reuse_logs = true keeps CURRENT and appends to
    // the last log). So: CURRENT as right after our open, and every log now
    // is one of ours, unchanged. (An opener after this check changes CURRENT
    // or a log after the listing was taken, so the next Open rejects the
    // file.)
    auto listing = filtered_db::ListDbDir(m.name);
    const std::string current_now = filtered_db::ReadCurrent(m.name);
    const auto ours = [&](const filtered_db::DirEntry& e) {
      return !IsLogFile(e.name) ||
             std::find(logs_at_close.begin(), logs_at_close.end(), e) != logs_at_close.end();
    };
    if (listing.ok() && !current_now.empty() && current_now == m.current_at_open &&
        std::all_of(listing->begin(), listing->end(), ours)) {
      filtered_db::IndexFileContents contents{std::move(listing).value(), std::move(payload)};
      (void)filtered_db::WriteIndexFile(m.name, contents);  // failure: no file, next Open scans
    }
  }
  m.db_lock.Release();
}

leveldb::Status FilteredDB::Open(const FilteredDBOptions& fdb_options,
                                 const leveldb::Options& options, const std::string& name,
                                 std::unique_ptr<FilteredDB>* db) {
  db->reset();
  auto impl = std::make_unique<Impl>(fdb_options, name);
  impl->filter_policy = options.filter_policy;
  impl->persist = fdb_options.persist_index && UsesDefaultEnv(options);
  std::unique_ptr<KeyIndex> loaded;
  leveldb::Options db_options = options;
  if (impl->persist) {
    (void)leveldb::Env::Default()->CreateDir(name);  // as LevelDB's Open does
    // The lock LevelDB's Open would take (and it fails as that would), taken
    // before the index file is read and lent to LevelDB below (DbLock).
    const leveldb::Status locked = impl->db_lock.Acquire(name);
    if (!locked.ok()) return locked;
    auto file = filtered_db::ReadIndexFile(name);
    if (file.ok()) {
      auto listing = filtered_db::ListDbDir(name);
      if (listing.ok() && *listing == file->listing) {
        auto index = KeyIndex::Deserialize(file->payload);
        if (index.ok() && (*index)->kind() == fdb_options.kind) loaded = std::move(index).value();
      }
    }
    // Used at most once: LevelDB's Open below changes the directory, and a
    // crash from here on must find no index (it would not match anyway).
    if (!filtered_db::RemoveIndexFile(name).ok()) loaded.reset();
    if (auto* hook = g_open_window_hook.load(std::memory_order_relaxed)) hook(name);
    db_options.env = impl->db_lock.env();
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
  if (impl->persist) impl->current_at_open = filtered_db::ReadCurrent(name);
  std::unique_ptr<FilteredDB> result(new FilteredDB(std::move(impl)));
  Impl& m = *result->impl_;
  if (loaded != nullptr) {
    std::vector<std::unique_ptr<KeyIndex>> garbage;
    std::lock_guard<std::mutex> lock(m.write_mu);
    m.opened_from = IndexSource::kFile;
    m.PublishLocked(std::move(loaded), &garbage);
  } else {
    s = m.Rebuild(1);       // sized for the keys found (expected_keys: a hint)
    if (!s.ok()) return s;  // ~FilteredDB closes LevelDB
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
  if (real_file_system) {
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

leveldb::Status FilteredDB::RebuildIndex() { return impl_->Rebuild(1); }

leveldb::Status FilteredDB::SaveIndex() { return impl_->Save(); }

void FilteredDB::WaitForGrowth() {
  std::unique_lock<std::mutex> lock(impl_->write_mu);
  impl_->growth_done.wait(lock, [&] { return !impl_->growth_running; });
}

leveldb::Status FilteredDB::Impl::ApplyLocked(const leveldb::WriteOptions& write_options,
                                              leveldb::WriteBatch* batch, const KeyOp* ops,
                                              size_t n,
                                              std::vector<std::unique_ptr<KeyIndex>>* garbage) {
  // Hash buffers: on the stack for the common one-key write.
  uint64_t added_one[1], removed_one[1];
  std::vector<uint64_t> added_many, removed_many;
  uint64_t* added = added_one;
  uint64_t* removed = removed_one;
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
      if (ops[i].present_after) added[num_added++] = h;
      continue;
    }
    if (ops[i].present_after && !live) added[num_added++] = h;
    if (!ops[i].present_after && live) removed[num_removed++] = h;
  }

  // 1. Insert new keys BEFORE the write: from here on the index claims them.
  if (current != nullptr && num_added != 0) {
    for (size_t i = 0; i < num_added; ++i) {
      if (!current->Insert(added[i]).ok()) {
        // It cannot hold this key: pass through until the larger index is
        // published (the growth rebuild logs this write like any other).
        ++insert_refusals;
        const uint64_t capacity = current->capacity();
        PublishLocked(nullptr, garbage);
        // At least one size up (the rule's size for the keys, within the
        // budget): other buckets, other collisions. A rebuild refused again
        // doubles its table (Rebuild).
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
  }
  if (logging) {
    for (size_t i = 0; i < num_added; ++i) log.push_back({added[i], true});
  }

  // 2. The write itself.
  const leveldb::Status s = db->Write(write_options, batch);
  if (!s.ok()) {
    // Maybe applied, maybe not: keep the inserts (over-claiming is safe);
    // deleted keys stay claimed too.
    ++failed_writes;
    return s;
  }

  // 3. Erase deleted keys only now that LevelDB has applied the deletes.
  for (size_t i = 0; i < num_removed; ++i) {
    // Live => inserted before, so Erase's precondition holds.
    if (current != nullptr) (void)current->Erase(removed[i]);
    if (logging) log.push_back({removed[i], false});
  }
  // Shrink: the index takes more than twice the budget for its live keys
  // (KeyIndex::shrink_below). Rebuilt in the background like a growth, sized
  // for the keys the scan finds; not while a growth runs (it sizes for them
  // too), nor after a failed rebuild until inserts resume (as for growth).
  if (current != nullptr && num_removed != 0 && !growth_running &&
      current->keys() < current->shrink_below() &&
      current->inserted_since_build() >= growth_retry_inserts) {
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
  for (const auto& [key, present_after] : effect.last()) {
    ops.push_back({key, Hash(key), present_after});
  }
  std::vector<std::unique_ptr<KeyIndex>> garbage;  // declared first: freed after unlock
  std::lock_guard<std::mutex> lock(m.write_mu);
  if (m.current != nullptr) {
    for (const KeyOp& op : ops) m.current->Prefetch(op.hash);
  }
  return m.ApplyLocked(options, updates, ops.data(), ops.size(), &garbage);
}

// Put and Delete: the one-key Write. The index's lines for the key are
// requested first, so their cache misses overlap the batch's construction.
leveldb::Status FilteredDB::Put(const leveldb::WriteOptions& options, const leveldb::Slice& key,
                                const leveldb::Slice& value) {
  Impl& m = *impl_;
  const KeyOp op{key, Hash(key), true};
  std::vector<std::unique_ptr<KeyIndex>> garbage;  // declared first: freed after unlock
  std::lock_guard<std::mutex> lock(m.write_mu);
  if (m.current != nullptr) m.current->Prefetch(op.hash);
  leveldb::WriteBatch batch;
  batch.Put(key, value);
  return m.ApplyLocked(options, &batch, &op, 1, &garbage);
}

leveldb::Status FilteredDB::Delete(const leveldb::WriteOptions& options,
                                   const leveldb::Slice& key) {
  Impl& m = *impl_;
  const KeyOp op{key, Hash(key), false};
  std::vector<std::unique_ptr<KeyIndex>> garbage;  // declared first: freed after unlock
  std::lock_guard<std::mutex> lock(m.write_mu);
  if (m.current != nullptr) m.current->Prefetch(op.hash);
  leveldb::WriteBatch batch;
  batch.Delete(key);
  return m.ApplyLocked(options, &batch, &op, 1, &garbage);
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
  const uint64_t hash = Hash(key);
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

FilteredDBStats FilteredDB::index_stats() const {
  Impl& m = *impl_;
  FilteredDBStats s;
  for (const ReaderSlot& slot : m.slots) {
    s.gets_ruled_out += slot.ruled_out.load(std::memory_order_relaxed);
    s.filter_passes += slot.passes.load(std::memory_order_relaxed);
    s.passes_not_found += slot.passes_not_found.load(std::memory_order_relaxed);
    s.counting_probes_skipped += slot.counting_skipped.load(std::memory_order_relaxed);
  }
  s.gets_checked = s.gets_ruled_out + s.filter_passes;
  std::lock_guard<std::mutex> lock(m.write_mu);
  s.index_active = m.current != nullptr;
  s.opened_from = m.opened_from;
  if (m.current != nullptr) {
    s.keys = m.current->keys();
    s.capacity = m.current->capacity();
    s.memory_bytes = m.current->memory_bytes();
    s.estimated_fpr = m.current->estimated_fpr();
  }
  for (const Retired& old : m.retired) s.memory_bytes += old.index->memory_bytes();
  s.rebuilds = m.rebuilds;
  s.insert_refusals = m.insert_refusals;
  s.failed_writes = m.failed_writes;
  s.index_saves = m.saves;
  return s;
}

bool FilteredDB::GetProperty(const leveldb::Slice& property, std::string* value) {
  const leveldb::Slice prefix("blockbloom.");
  if (!property.starts_with(prefix)) return impl_->db->GetProperty(property, value);
  const FilteredDBStats s = index_stats();
  const uint64_t absent = s.gets_ruled_out + s.passes_not_found;
  const double measured_fpr = absent ? static_cast<double>(s.passes_not_found) / absent : 0.0;
  char buf[768];
  if (property == "blockbloom.stats" || property == "blockbloom.index-stats") {
    std::snprintf(buf, sizeof(buf),
                  "index-active: %d\nopened-from: %s\nkeys: %" PRIu64 "\ncapacity: %" PRIu64
                  "\nmemory-bytes: %" PRIu64
                  "\nbytes-per-live-key: %.2f\nestimated-fpr: %.6g\n"
                  "gets-checked: %" PRIu64 "\ngets-ruled-out: %" PRIu64 "\nfilter-passes: %" PRIu64
                  "\npasses-not-found: %" PRIu64 "\ncounting-probes-skipped: %" PRIu64
                  "\nmeasured-fpr: %.6g\nrebuilds: %" PRIu64 "\ninsert-refusals: %" PRIu64
                  "\nfailed-writes: %" PRIu64 "\nindex-saves: %" PRIu64 "\n",
                  s.index_active ? 1 : 0, s.opened_from == IndexSource::kFile ? "file" : "scan",
                  s.keys, s.capacity, s.memory_bytes,
                  s.keys ? static_cast<double>(s.memory_bytes) / s.keys : 0.0, s.estimated_fpr,
                  s.gets_checked, s.gets_ruled_out, s.filter_passes, s.passes_not_found,
                  s.counting_probes_skipped, measured_fpr, s.rebuilds, s.insert_refusals,
                  s.failed_writes, s.index_saves);
  } else if (property == "blockbloom.filter-policy-stats") {
    // The table filters' own counters (blockbloom/filter_stats.h): with the
    // index's passes-not-found they give the filters' live FPR.
    const FilterPolicyStats p = GetFilterPolicyStats(impl_->filter_policy);
    if (!p.available) return false;
    std::snprintf(buf, sizeof(buf),
                  "probes: %" PRIu64 "\nnegatives: %" PRIu64 "\npositives: %" PRIu64 "\n", p.probes,
                  p.negatives, p.probes - p.negatives);
  } else if (property == "blockbloom.index-keys") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.keys);
  } else if (property == "blockbloom.index-memory-bytes") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.memory_bytes);
  } else if (property == "blockbloom.index-estimated-fpr") {
    std::snprintf(buf, sizeof(buf), "%.6g", s.estimated_fpr);
  } else if (property == "blockbloom.index-gets-ruled-out") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.gets_ruled_out);
  } else if (property == "blockbloom.index-filter-passes") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.filter_passes);
  } else if (property == "blockbloom.index-passes-not-found") {
    std::snprintf(buf, sizeof(buf), "%" PRIu64, s.passes_not_found);
  } else if (property == "blockbloom.index-measured-fpr") {
    std::snprintf(buf, sizeof(buf), "%.6g", measured_fpr);
  } else {
    return false;
  }
  *value = buf;
  return true;
}

namespace filtered_db {

void ForceSeqCstReadersForTesting(bool force) {
  g_force_seq_cst_readers.store(force, std::memory_order_relaxed);
}

void SetOpenWindowHookForTesting(void (*hook)(const std::string& db_name)) {
  g_open_window_hook.store(hook, std::memory_order_relaxed);
}

void SetCloseWindowHookForTesting(void (*hook)(const std::string& db_name)) {
  g_close_window_hook.store(hook, std::memory_order_relaxed);
}

void SetGrowthRebuiltHookForTesting(void (*hook)(const std::string& db_name)) {
  g_growth_rebuilt_hook.store(hook, std::memory_order_relaxed);
}

}  // namespace filtered_db
}  // namespace blockbloom
