/* blockbloom's C API: blockbloom's LevelDB filter policies and FilteredDB for
 * programs that reach LevelDB through its C API (leveldb/c.h), as most
 * language bindings (Go, Rust, Python via cffi, ...) do.
 *
 *   #include "leveldb/c.h"
 *   #include "blockbloom/c.h"
 *
 *   leveldb_filterpolicy_t* policy = blockbloom_filterpolicy_create_blocked(10);
 *   leveldb_options_t* options = leveldb_options_create();
 *   leveldb_options_set_filter_policy(options, policy);
 *   leveldb_options_set_create_if_missing(options, 1);
 *   db = leveldb_open(options, "/tmp/db", &err);
 *   ... leveldb_put, leveldb_get, ...
 *   leveldb_close(db);
 *   leveldb_options_destroy(options);
 *   blockbloom_filterpolicy_destroy(policy);    after every DB using it is closed
 *
 * Each policy writes exactly the bytes, and answers exactly as, its C++
 * counterpart (blockbloom/leveldb_filter_policy.h, compact_filter_policy.h):
 * same Name(), same on-disk format (docs/FORMAT.md), so a database written
 * through C can be read from C++ and the other way round. A filter that
 * cannot be parsed (damaged, truncated, from a newer version) answers "may
 * match": it costs a data-block read, never a missed key. One exception, for
 * the migrating policies (which also read LevelDB's built-in filters): a
 * filter truncated so that its last byte is 30 or less reads as a built-in
 * filter, as stock LevelDB itself would read it, and may then miss keys;
 * LevelDB's block checksums (paranoid_checks, ReadOptions::verify_checksums)
 * catch such damage on disk.
 *
 * bits_per_key is clamped into [1, 64]; NaN means 10 (ClampBitsPerKey in
 * blockbloom/blocked_bloom.h): every value is accepted. A create function
 * returns NULL only when out of memory.
 *
 * Ownership: every blockbloom_filterpolicy_create_* returns a new policy the
 * caller owns and frees with blockbloom_filterpolicy_destroy (or LevelDB's
 * own leveldb_filterpolicy_destroy: they are the same). Free it only after
 * every database opened with it is closed, as with
 * leveldb_filterpolicy_create_bloom. Options do not take ownership.
 *
 * Thread-safety: a policy is immutable once created; any number of
 * databases and threads may use one policy at the same time. Destroying it
 * while a database still uses it is undefined, as in LevelDB.
 *
 * Errors: no C++ exception crosses this API. If building a filter fails
 * (out of memory), the table gets a filter that every policy reads as "may
 * match" (a 2-byte filter ending in 0xFF), so the only cost is data-block
 * reads for that table.
 *
 * FilteredDB (C++: blockbloom/filtered_db.h; docs/FILTERED_DB.md) is opened
 * by blockbloom_filtered_db_open, which returns LevelDB's own leveldb_t:
 *
 *   blockbloom_filtered_db_options_t* fdb = blockbloom_filtered_db_options_create();
 *   blockbloom_filtered_db_options_set_expected_keys(fdb, 1000000);
 *   db = blockbloom_filtered_db_open(options, fdb, "/tmp/db", &err);
 *   blockbloom_filtered_db_options_destroy(fdb);     (open keeps no reference)
 *   ... leveldb_put, leveldb_get, leveldb_write, leveldb_create_iterator,
 *       leveldb_create_snapshot, leveldb_property_value, ... unchanged ...
 *   leveldb_close(db);                               (saves the index)
 *
 * so every leveldb_* function that takes a leveldb_t* works on it, and a
 * binding that wraps leveldb_t needs one new constructor and nothing else.
 * The answers are exactly LevelDB's; a Get the index rules out returns
 * "not found" without touching LevelDB. Its statistics are LevelDB
 * properties: leveldb_property_value(db, "blockbloom.stats") gives every
 * counter as "name: value" lines (gets-ruled-out, filter-passes,
 * passes-not-found, measured-fpr, keys, memory-bytes, opened-from, ...);
 * the other names are listed at FilteredDB::GetProperty in
 * blockbloom/filtered_db.h. When `options` hold a policy from
 * blockbloom_filterpolicy_create_*, "blockbloom.filter-policy-stats" gives
 * its probes, negatives and positives (as blockbloom_filterpolicy_stats);
 * with any other policy, or none, that property is NULL. How that works and what it assumes of
 * libleveldb (LevelDB 1.23's leveldb_t layout, checked at run time): see
 * blockbloom_filtered_db_open below.
 *
 * This header compiles as C89, C99 and C++ (it adds nothing to leveldb/c.h's
 * own requirements).
 */
#ifndef BLOCKBLOOM_C_H_
#define BLOCKBLOOM_C_H_

#include "leveldb/c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The blocked Bloom filter policy (C++: blockbloom::NewBlockedBloomFilterPolicy):
 * flat Bloom filters for LevelDB's per-2-KiB filters, 512-bit blocks (one
 * 64-byte cache line per key probe) for filters of millions of keys.
 * Name "blockbloom.BlockedBloom.v1". */
leveldb_filterpolicy_t* blockbloom_filterpolicy_create_blocked(double bits_per_key);

/* The compact filter policy (C++: blockbloom::NewCompactFilterPolicy): each
 * per-block filter of n keys gets the bits LevelDB's built-in filter would
 * spend, plus a 3-byte trailer, as a GF(2) retrieval structure of R-bit
 * fingerprints (format version 2) with FPR 2^-R: 0.195% at 10 bits/key; at
 * 1-3 bits/key, where it does better, a Bloom filter of the same bytes
 * (docs/FORMAT.md, "How the LevelDB policies size a filter"). The lowest FPR
 * per bit; slower to build. Name "blockbloom.Compact.v1". */
leveldb_filterpolicy_t* blockbloom_filterpolicy_create_compact(double bits_per_key);

/* For databases written with LevelDB's built-in Bloom filter
 * (leveldb_filterpolicy_create_bloom). Both answer to the built-in's name,
 * "leveldb.BuiltinBloomFilter2", and answer built-in filters exactly as
 * LevelDB does; new tables get blocked (..._migrating_blocked, C++
 * blockbloom::NewMigratingFilterPolicy) or compact (..._migrating_compact,
 * C++ blockbloom::NewMigratingCompactFilterPolicy) filters, which stock
 * LevelDB reads as "may match". A database can switch to either policy and
 * back to the built-in at any time and no Get ever misses a key. */
leveldb_filterpolicy_t* blockbloom_filterpolicy_create_migrating_blocked(double bits_per_key);
leveldb_filterpolicy_t* blockbloom_filterpolicy_create_migrating_compact(double bits_per_key);

/* Frees a policy from any blockbloom_filterpolicy_create_*. NULL is a no-op.
 * REQUIRES: no open database uses the policy. */
void blockbloom_filterpolicy_destroy(leveldb_filterpolicy_t* policy);

/* The policy's counters since its creation (C++ blockbloom::GetFilterPolicyStats,
 * blockbloom/filter_stats.h): *probes = filter probes (KeyMayMatch calls),
 * *negatives = "no" answers, each a data-block read avoided. Returns 1 for a
 * live policy from blockbloom_filterpolicy_create_*; 0, with both counts 0,
 * for NULL or any other policy (e.g. leveldb_filterpolicy_create_bloom).
 * probes or negatives may be NULL. May run concurrently with Gets using the
 * policy (counts then may miss the latest probes, never exceed probes with
 * negatives); REQUIRES: not concurrently with destroying it. */
unsigned char blockbloom_filterpolicy_stats(const leveldb_filterpolicy_t* policy, uint64_t* probes,
                                            uint64_t* negatives);

/* ---- FilteredDB ----------------------------------------------------------
 *
 * Options for FilteredDB's key index (C++ blockbloom::FilteredDBOptions; the
 * defaults are the same: a d-left index sized for the live keys, at most 4
 * bytes per live key plus 256 KiB when built (up to twice that after deletes,
 * before it shrinks), at a 0.2% target FPR, persisted;
 * expected_keys, default 1,000,000, is a hint within that budget). Create,
 * set, pass to blockbloom_filtered_db_open, then destroy (open copies what it
 * needs). Every target_fpr is accepted: the index clamps it as the C++ one
 * does (a NaN FPR means the default); so is every expected_keys. An index
 * that cannot be allocated fails at open with an "IO error", and an unknown
 * kind with "Invalid argument".
 * Thread-safety: an options object is not synchronized; do not set it while
 * another thread opens with it. */
typedef struct blockbloom_filtered_db_options_t blockbloom_filtered_db_options_t;

/* Values of blockbloom_filtered_db_options_set_kind, the same as C++
 * blockbloom::IndexKind's. Fixed: bindings compile them in as integers. */
enum {
  blockbloom_index_dleft = 0,   /* d-left counting Bloom filter (default): ~half the memory */
  blockbloom_index_counting = 1 /* blocked counting Bloom filter, 4-bit counters */
};

/* NULL only when out of memory. */
blockbloom_filtered_db_options_t* blockbloom_filtered_db_options_create(void);
/* NULL is a no-op. */
void blockbloom_filtered_db_options_destroy(blockbloom_filtered_db_options_t* options);
/* A hint for the first index's size, within the budget of 4 bytes per live
 * key plus 256 KiB (C++: FilteredDBOptions::expected_keys); the index grows
 * and shrinks with the live keys, in the background. */
void blockbloom_filtered_db_options_set_expected_keys(blockbloom_filtered_db_options_t* options,
                                                      uint64_t expected_keys);
/* Target FPR of the whole index at capacity (C++:
 * FilteredDBOptions::target_fpr): every target from 0.168% gets 0.168%
 * (12-bit d-left cells), a lower one 8.4e-5 (16-bit cells), the lowest the
 * d-left index's memory budget allows: lower targets, 0 and negative ones
 * are clamped to it (the counting kind takes them, at up to 32 bytes per
 * key). */
void blockbloom_filtered_db_options_set_target_fpr(blockbloom_filtered_db_options_t* options,
                                                   double target_fpr);
/* blockbloom_index_dleft or blockbloom_index_counting; any other value makes
 * blockbloom_filtered_db_open fail with "Invalid argument". */
void blockbloom_filtered_db_options_set_kind(blockbloom_filtered_db_options_t* options, int kind);
/* Non-zero (the default): leveldb_close saves the index in
 * <name>/BLOCKBLOOM-INDEX and the next open loads it instead of scanning the
 * database, when the directory is provably unchanged since (only with
 * LevelDB's default env; docs/FILTERED_DB.md, "Persisted index"). */
void blockbloom_filtered_db_options_set_persist_index(blockbloom_filtered_db_options_t* options,
                                                      unsigned char persist_index);
/* Zero (the default): blockbloom_filtered_db_open fails with "Invalid
 * argument" when the LevelDB options carry a comparator of their own
 * (leveldb_options_set_comparator). Non-zero promises that the comparator
 * never calls keys of different bytes equal (C++:
 * FilteredDBOptions::comparator_equality_is_bytewise, which says why). */
void blockbloom_filtered_db_options_set_comparator_equality_is_bytewise(
    blockbloom_filtered_db_options_t* options, unsigned char bytewise);
/* progress(state, keys_scanned) is called during every scan that builds the
 * index (at open when no saved index is used, at growth, at
 * blockbloom_filtered_db_rebuild_index) every `interval_keys` keys (0 means
 * 1) and once at the end. It runs on the scanning thread, which during growth
 * is a background thread; it must not call back into the database. NULL
 * progress: no reports (the default). */
void blockbloom_filtered_db_options_set_progress(
    blockbloom_filtered_db_options_t* options, void* state,
    void (*progress)(void* state, uint64_t keys_scanned), uint64_t interval_keys);

/* Opens (or creates, per `options`, as leveldb_open) the LevelDB database at
 * `name` as a FilteredDB (C++ blockbloom::OpenFilteredDB) and returns it as
 * a leveldb_t: use it with every leveldb_* function and free it with
 * leveldb_close, which closes LevelDB and then saves the index (not after a
 * write of the session failed, nor in a process forked from the one that
 * opened it: see C++ blockbloom/filtered_db.h). As with
 * leveldb_open, `options` (and `fdb_options`; NULL means the defaults) may be
 * destroyed once this returns, but the filter policy, cache, env, comparator
 * and logger set in `options` must outlive the database.
 *
 * Errors exactly as LevelDB's C API: returns NULL and stores a message
 * allocated with malloc in *errptr (freeing the message already there; free
 * it with leveldb_free); on success *errptr is left as it is.
 * REQUIRES: errptr != NULL, as for leveldb_open.
 *
 * How a leveldb_t can hold a FilteredDB: LevelDB's C API (db/c.cc) defines
 * leveldb_t as a struct holding one leveldb::DB* and calls through it;
 * FilteredDB is a leveldb::DB, so this function allocates that struct with
 * a FilteredDB inside. That relies on the loaded libleveldb defining
 * leveldb_t and leveldb_options_t as LevelDB 1.23 does (as every release
 * has since 2011). The first call in a process checks it (options set
 * through leveldb_options_set_* must read back; a probe leveldb_t must
 * answer leveldb_property_value and be freed by leveldb_close) and, should
 * the check fail, every call returns NULL with a "Not implemented" error
 * instead of a handle LevelDB would misread. */
leveldb_t* blockbloom_filtered_db_open(const leveldb_options_t* options,
                                       const blockbloom_filtered_db_options_t* fdb_options,
                                       const char* name, char** errptr);

/* 1 if `db` is a FilteredDB from blockbloom_filtered_db_open (not yet
 * closed), 0 for any other leveldb_t (from leveldb_open). */
unsigned char blockbloom_is_filtered_db(leveldb_t* db);

/* Writes the index file now (C++ FilteredDB::SaveIndex), so that a crash
 * with no write since still finds it. Errors through errptr as above;
 * "Invalid argument" if `db` is not a FilteredDB, its index is saturated or
 * this process was forked from the one that opened it, "Not implemented"
 * when persistence is off, "IO error" on file-system errors and after a
 * write of the session failed. */
void blockbloom_filtered_db_save_index(leveldb_t* db, char** errptr);

/* Rebuilds the index from a snapshot scan while writers continue (C++
 * FilteredDB::RebuildIndex): the way out of the saturated (pass-through)
 * state that the "index-active: 0" line of "blockbloom.stats" shows.
 * "Invalid argument" if `db` is not a FilteredDB. */
void blockbloom_filtered_db_rebuild_index(leveldb_t* db, char** errptr);

/* leveldb_destroy_db plus FilteredDB's index file, so the directory itself
 * goes too (C++ blockbloom::DestroyFilteredDB). Errors as above. */
void blockbloom_filtered_db_destroy_db(const leveldb_options_t* options, const char* name,
                                       char** errptr);

/* Thread-safety of a FilteredDB handle: as leveldb_t -- any leveldb_*,
 * blockbloom_filtered_db_* and blockbloom_is_filtered_db function on it from
 * any number of threads, except leveldb_close, which must not race with any
 * other call on it, and after which every iterator and snapshot must already
 * be released.
 *
 * No C++ exception crosses these functions: out of memory inside a
 * FilteredDB call made through leveldb_* comes back as an "IO error"
 * status (or an iterator in error, or a property not found), except in
 * leveldb_create_snapshot, which cannot report errors and, as in LevelDB,
 * terminates. */

/* The library's version, "MAJOR.MINOR.PATCH" (a static string; never free it),
 * and the same as numbers. */
const char* blockbloom_version(void);
int blockbloom_major_version(void);
int blockbloom_minor_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BLOCKBLOOM_C_H_ */
