// Test-only switches of FilteredDB's internals (tests/filtered_db_tsan_test.cc,
// tests/filtered_db_crash_test.cc, tests/filtered_db_fault_test.cc).
// Not part of the public API.
#ifndef BLOCKBLOOM_FILTERED_DB_TESTING_HOOKS_H_
#define BLOCKBLOOM_FILTERED_DB_TESTING_HOOKS_H_

#include <cstdint>
#include <string>

namespace blockbloom {
namespace filtered_db {

// FilteredDBs opened after ForceSeqCstReadersForTesting(true) announce their
// readers with a seq_cst store (the fallback for systems without
// membarrier(2), docs/FILTERED_DB.md "Readers") even where membarrier works,
// so both reclamation protocols run under ThreadSanitizer. Thread-safe.
void ForceSeqCstReadersForTesting(bool force);

// Runs hook(db_name) inside every later FilteredDB destructor, between
// LevelDB's close (which hands the lock on <db>/LOCK back to FilteredDB, still
// held) and the close-time save: the window in which an opener the lock did
// not stop would make the saved index stale (tests/filtered_db_crash_test.cc). Null removes it. Not
// synchronized with running destructors: set it while no FilteredDB closes.
void SetCloseWindowHookForTesting(void (*hook)(const std::string& db_name));

// Runs hook(db_name) inside every later FilteredDB::Open that persists its
// index, after FilteredDB took the lock on <db>/LOCK and validated (and
// removed) the index file, just before LevelDB's Open: the window in which
// another opener of the database would make the validated index stale
// (tests/filtered_db_crash_test.cc). Null removes it. Set it while no
// FilteredDB opens.
void SetOpenWindowHookForTesting(void (*hook)(const std::string& db_name));

// Runs hook(db_name) on the growth thread of every FilteredDB after each of
// its rebuilds returns (the new index published, or the rebuild failed) and
// before the thread takes the writer mutex to finish: the window in which a
// write can make the growth thread stop too early
// (tests/filtered_db_fault_test.cc). Writes may be made from the hook. Null
// removes it. Set it while no growth runs.
void SetGrowthRebuiltHookForTesting(void (*hook)(const std::string& db_name));

// Runs hook(db_name) inside every later rebuild (growth, shrink,
// RebuildIndex(), Open's scan) once the scanned keys are in the new index and
// before the write log is replayed into it, with no FilteredDB lock held: the
// window in which writers that outrun the rebuild overfill the index it is
// building (tests/filtered_db_test.cc). Writes may be made from the hook.
// Null removes it. Set it while no rebuild runs.
void SetRebuildReplayHookForTesting(void (*hook)(const std::string& db_name));

// The fixed part of the index's memory budget (KeyIndex::BudgetBytes: 4 bytes
// per live key plus this; 256 KiB by default) for indexes sized or built
// after the call, so tests see growth and shrink at a few thousand keys.
// Thread-safe; set it back to KeyIndex::kDefaultBudgetSlackBytes after.
void SetIndexBudgetSlackForTesting(uint64_t bytes);

// Every index built after the call takes `seed` (KeyIndex::HashOf) instead of
// a random one while `fixed`, so tests can choose keys that collide in it.
// Thread-safe.
void SetIndexSeedForTesting(bool fixed, uint64_t seed);

}  // namespace filtered_db
}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTERED_DB_TESTING_HOOKS_H_
