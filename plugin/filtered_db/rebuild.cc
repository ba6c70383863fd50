// FilteredDB's rebuilds: growth and shrink in the background, RebuildIndex()
// and Open's scan; all one procedure, a snapshot scan plus a replayed write
// log, published without stalling writers (docs/FILTERED_DB.md, "Growth
// and RebuildIndex()").
#include "filtered_db/filtered_db_impl.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "filtered_db/testing_hooks.h"
#include "leveldb/iterator.h"

namespace blockbloom {

using namespace filtered_db;  // NOLINT: this library's own internals

namespace {

// Rebuild attempts at doubling capacity before giving up on d-left refusals
// within capacity (each doubling adds a fingerprint bit, so repeated failure
// means adversarial keys or a bug, not bad luck).
constexpr int kMaxBuildAttempts = 4;
// Rebuild attempts sized anew for the live keys after writers overfilled the
// index being built (Refusal::kOverfilled), before such a refusal is met by
// doubling instead: each new scan takes the keys written so far, so only
// writers that keep adding a third of the database during every rebuild's
// build and replay get this far, and doubling then gets ahead of them.
constexpr int kMaxOverfilledAttempts = 8;
// The rebuild's write log is replayed without the writer mutex until at most
// this many entries are left; the rest is replayed under it, then published.
constexpr size_t kFinalReplayEntries = 4096;

}  // namespace

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

leveldb::Status FilteredDB::Impl::RebuildAttempt(uint64_t* capacity, Refusal* refused) {
  *refused = Refusal::kNone;
  // The scan's iterator is created under write_mu: it sees exactly the writes
  // made before this point (LevelDB's implicit snapshot at NewIterator), and
  // every write after it is in the log.
  std::unique_ptr<leveldb::Iterator> it;
  // The new index's seed, drawn for each attempt: a collision that refused
  // one attempt is not met again by the next.
  const uint64_t seed = KeyIndex::NewSeed();
  {
    std::lock_guard<std::mutex> lock(write_mu);
    logging = true;
    log_seed = seed;
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
    hashes.push_back(Hash(it->key(), seed));
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
      // Cannot know the live set: pass everything through, until
      // RebuildIndex() or the next Open (writers do not retry a scan that
      // LevelDB could not read).
      std::vector<std::unique_ptr<KeyIndex>> garbage;
      std::lock_guard<std::mutex> lock(write_mu);
      PublishLocked(nullptr, &garbage);
      scan_failed = true;
    }
    return s;
  }
  *capacity = std::max<uint64_t>({*capacity,
                                  KeyIndex::CapacityFor(options.kind, hashes.size(),
                                                        options.expected_keys, options.target_fpr),
                                  1});
  auto built = KeyIndex::Create(options.kind, *capacity, options.target_fpr, seed);
  std::unique_ptr<KeyIndex> next;
  if (built.ok()) {
    next = std::move(built).value();
    *capacity = next->capacity();  // a retry after a collision doubles the table
    for (uint64_t h : hashes) {
      if (!next->Insert(h).ok()) {
        *refused = Refusal::kCollision;  // it was sized for these keys
        break;
      }
    }
  }
  std::vector<uint64_t>().swap(hashes);
  if (auto* hook = g_rebuild_replay_hook.load(std::memory_order_relaxed)) hook(name);
  const auto replay = [&](const std::vector<LogEntry>& entries) {
    for (const LogEntry& e : entries) {
      if (e.insert) {
        if (!next->Insert(e.hash).ok()) {
          *refused = next->keys() >= next->capacity() ? Refusal::kOverfilled : Refusal::kCollision;
          return;
        }
      } else {
        (void)next->Erase(e.hash);  // inserted by the scan or an earlier entry
      }
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
      if (next == nullptr || *refused != Refusal::kNone) {
        lock.unlock();
        stop_logging();
        if (*refused != Refusal::kNone) {
          std::lock_guard<std::mutex> relock(write_mu);
          ++insert_refusals;
        }
        return built.ok() ? leveldb::Status::OK()
                          : leveldb::Status::IOError("FilteredDB index", built.status().ToString());
      }
      if (log.size() <= kFinalReplayEntries) {
        replay(log);
        if (*refused == Refusal::kNone) {
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
  // After a refusal the next attempt is sized by its cause (Refusal):
  //  - overfilled: by the rule for the keys the next scan finds
  //    (min_capacity, or what collisions asked for), never from the refused
  //    size. Twice an index sized for n keys and refused at ~1.3n would be
  //    up to 8n bytes for 1.3n keys, and its publish meets every pending
  //    growth request, so nothing would correct it (filtered_db_test,
  //    WritersThatOutrunAGrowthLeaveTheIndexWithinTheBudget).
  //  - a collision below capacity: twice the refused size, up to
  //    kMaxBuildAttempts times.
  uint64_t capacity = min_capacity;
  uint64_t floor = min_capacity;  // raised by collisions
  int collisions = 0, overfills = 0;
  while (collisions < kMaxBuildAttempts) {
    Refusal refused = Refusal::kNone;
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
    if (!s.ok() || refused == Refusal::kNone || stopping.load(std::memory_order_relaxed)) {
      return s;
    }
    if (refused == Refusal::kOverfilled && overfills < kMaxOverfilledAttempts) {
      ++overfills;
      capacity = floor;
      continue;
    }
    ++collisions;
    capacity *= 2;
    floor = capacity;
  }
  std::vector<std::unique_ptr<KeyIndex>> garbage;
  std::lock_guard<std::mutex> lock(write_mu);
  PublishLocked(nullptr, &garbage);  // saturated: correct, just unfiltered
  return leveldb::Status::OK();
}

leveldb::Status FilteredDB::RebuildIndex() { return impl_->Rebuild(1); }

void FilteredDB::WaitForGrowth() {
  std::unique_lock<std::mutex> lock(impl_->write_mu);
  impl_->growth_done.wait(lock, [&] { return !impl_->growth_running; });
}

namespace filtered_db {

void SetGrowthRebuiltHookForTesting(void (*hook)(const std::string& db_name)) {
  g_growth_rebuilt_hook.store(hook, std::memory_order_relaxed);
}

void SetRebuildReplayHookForTesting(void (*hook)(const std::string& db_name)) {
  g_rebuild_replay_hook.store(hook, std::memory_order_relaxed);
}

}  // namespace filtered_db
}  // namespace blockbloom
