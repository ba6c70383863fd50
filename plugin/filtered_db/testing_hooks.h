// Test-only switches of FilteredDB's internals (tests/filtered_db_tsan_test.cc).
// Not part of the public API.
#ifndef BLOCKBLOOM_FILTERED_DB_TESTING_HOOKS_H_
#define BLOCKBLOOM_FILTERED_DB_TESTING_HOOKS_H_

namespace blockbloom {
namespace filtered_db {

// FilteredDBs opened after ForceSeqCstReadersForTesting(true) announce their
// readers with a seq_cst store (the fallback for systems without
// membarrier(2), docs/FILTERED_DB.md "Readers") even where membarrier works,
// so both reclamation protocols run under ThreadSanitizer. Thread-safe.
void ForceSeqCstReadersForTesting(bool force);

}  // namespace filtered_db
}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTERED_DB_TESTING_HOOKS_H_
