// FilteredDB's reader slots (docs/FILTERED_DB.md, "Readers"): the per-thread
// cache line a Get announces itself and counts its statistics in, the window
// that decides whether it consults the counting filter, and the barriers that
// order a reader's announce before its load of the index pointer. The
// reclamation of retired indexes that relies on them is reader_slots.cc's
// (FilteredDB::Impl::PublishLocked, FreeRetiredLocked).
// Thread-safety: a slot is written by the thread that leased it (plain
// stores) or, the shared slot, by any thread (read-modify-writes); any thread
// may read every slot.
#ifndef BLOCKBLOOM_FILTERED_DB_READER_SLOTS_H_
#define BLOCKBLOOM_FILTERED_DB_READER_SLOTS_H_

#include <atomic>
#include <cstdint>

#include "common/thread_slot.h"

namespace blockbloom {
namespace filtered_db {

// Reader slots, indexed by the calling thread's slot (common/thread_slot.h):
// a thread leases one of kOwnedSlots slots on its first Get (process-wide,
// returned when the thread exits) and is then the only writer of that slot
// in every FilteredDB: its Gets use plain stores. Threads that find every
// slot leased share slot kSharedSlot, with read-modify-writes.
constexpr unsigned kOwnedSlots = internal::kOwnedThreadSlots;
constexpr unsigned kSharedSlot = internal::kSharedThreadSlot;
constexpr unsigned kReaderSlots = internal::kThreadSlots;
using internal::ThreadSlot;

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
bool RegisterHeavyBarrier();
// REQUIRES: RegisterHeavyBarrier() returned true. False if the call failed.
bool HeavyBarrier();

inline void LightBarrier() { std::atomic_signal_fence(std::memory_order_seq_cst); }

// Whether FilteredDBs opened now announce readers with a plain store (the
// membarrier(2) path is available and not disabled by
// ForceSeqCstReadersForTesting).
bool UseLightReaders();

}  // namespace filtered_db
}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTERED_DB_READER_SLOTS_H_
