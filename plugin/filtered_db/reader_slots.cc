// The membarrier(2) barriers behind the reader slots (reader_slots.h), and
// the publication and reclamation of indexes that rely on them
// (docs/FILTERED_DB.md, "Readers").
#include "filtered_db/reader_slots.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <vector>

#include "filtered_db/filtered_db_impl.h"
#include "filtered_db/testing_hooks.h"

namespace blockbloom {
namespace filtered_db {
namespace {

std::atomic<bool> g_force_seq_cst_readers{false};  // ForceSeqCstReadersForTesting

}  // namespace

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

bool UseLightReaders() {
  return !g_force_seq_cst_readers.load(std::memory_order_relaxed) && RegisterHeavyBarrier();
}

void ForceSeqCstReadersForTesting(bool force) {
  g_force_seq_cst_readers.store(force, std::memory_order_relaxed);
}

}  // namespace filtered_db

using namespace filtered_db;  // NOLINT: this library's own internals

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
  saturated_inserts = 0;
  saturated_retry_inserts = 0;
  scan_failed = false;
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

}  // namespace blockbloom
