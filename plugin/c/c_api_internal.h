// Internals of the C API (blockbloom/c.h) that its tests check.
#ifndef BLOCKBLOOM_PLUGIN_C_C_API_INTERNAL_H_
#define BLOCKBLOOM_PLUGIN_C_C_API_INTERNAL_H_

#include <cstddef>

#include "leveldb/c.h"
#include "leveldb/db.h"
#include "leveldb/options.h"

namespace blockbloom {
namespace capi_internal {

// The filter the C API stores when building a filter fails (out of memory):
// two bytes ending in 0xFF. No policy recognises 0xFF as a marker (blocked
// filters end in 0xBB, compact ones in 0xCF) and LevelDB's built-in reader
// answers "may match" for a last byte above 30, so every policy, C or C++,
// reads it as "may match": the failure costs reads, never a missed key.
inline constexpr char kMayMatchFilter[2] = {'\0', '\xFF'};
inline constexpr size_t kMayMatchFilterBytes = sizeof(kMayMatchFilter);

}  // namespace capi_internal
}  // namespace blockbloom

// LevelDB's C handles, for blockbloom_filtered_db_open (blockbloom/c.h).
//
// leveldb/c.h keeps leveldb_t and leveldb_options_t opaque; LevelDB's
// db/c.cc defines them. blockbloom_filtered_db_open returns a leveldb_t it
// allocated itself, so that every leveldb_* function (put, get, write,
// iterators, snapshots, property_value, close, ...) works on a FilteredDB
// unchanged; and it reads the leveldb::Options out of a leveldb_options_t.
// Both need c.cc's definitions, which LevelDB 1.23 writes (at global scope,
// inside extern "C", after `using leveldb::DB;` and `using
// leveldb::Options;`) as exactly the two definitions below. C++ allows a
// class to be defined in several translation units when the definitions
// are the same token sequence naming the same entities (the one-definition
// rule, [basic.def.odr]), so these are the same types as c.cc's, not
// look-alikes: the token sequence and the using-declarations are kept
// identical on purpose. Do not reformat them into `leveldb::DB* rep;`.
//
// What this relies on, and how it is checked:
//  - c.cc's leveldb_t is { DB* rep; } and leveldb_close is `delete db->rep;
//    delete db;` (so a leveldb_t we `new` is freed there with the matching
//    global operator delete, and rep, a FilteredDB wrapper, by its virtual
//    destructor). True of every LevelDB release since the C API appeared
//    (2011) through 1.23 (Debian bookworm's libleveldb1d 1.23-4: its
//    leveldb_close, leveldb_put and leveldb_property_value load rep from
//    offset 0 of the handle).
//  - c.cc's leveldb_options_t is { Options rep; } (Debian's
//    leveldb_options_create allocates sizeof(leveldb::Options) bytes and
//    constructs Options at offset 0).
//  - CheckLevelDBHandleLayout() (c_api.cc) checks both at run time, once per
//    process, before the first FilteredDB is handed out, against the
//    libleveldb actually loaded; blockbloom_filtered_db_open reports
//    NotSupported through errptr if it fails. tests/c_api_test_filtered_db.c
//    pins the whole round trip, including handles from leveldb_open read
//    through these definitions; under ASan (which replaces operator
//    new/delete for uninstrumented libleveldb too) a leveldb_close that
//    deleted anything but what we allocated would be reported.
using leveldb::DB;
using leveldb::Options;

extern "C" {

struct leveldb_t {
  DB* rep;
};
struct leveldb_options_t {
  Options rep;
};

}  // extern "C"

namespace blockbloom {
namespace capi_internal {

// True if the loaded libleveldb's C API lays out leveldb_t and
// leveldb_options_t as above: options set through leveldb_options_set_*
// read back through Options, and a leveldb_t built here answers
// leveldb_property_value from its rep and is freed by leveldb_close. Runs
// the probe once per process (thread-safe); later calls return the cached
// answer.
bool CheckLevelDBHandleLayout();

// The FilteredDB behind a handle from blockbloom_filtered_db_open, or null
// for any other leveldb_t (one from leveldb_open) and for a closed one.
// Thread-safe; the handle must not be closed concurrently.
bool IsFilteredDBHandle(const leveldb_t* db);

}  // namespace capi_internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_PLUGIN_C_C_API_INTERNAL_H_
