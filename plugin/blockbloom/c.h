/* blockbloom's C API: blockbloom's LevelDB filter policies for programs that
 * reach LevelDB through its C API (leveldb/c.h), as most language bindings
 * (Go, Rust, Python via cffi, ...) do.
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
 * match": it costs a data-block read, never a missed key.
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
 * one 64-byte cache line per key probe. Name "blockbloom.BlockedBloom.v1". */
leveldb_filterpolicy_t* blockbloom_filterpolicy_create_blocked(double bits_per_key);

/* The compact (Golomb-Rice fingerprint) filter policy (C++:
 * blockbloom::NewCompactFilterPolicy): the lowest FPR per bit; slower to
 * build. Name "blockbloom.Compact.v1". */
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

/* The library's version, "MAJOR.MINOR.PATCH" (a static string; never free it),
 * and the same as numbers. */
const char* blockbloom_version(void);
int blockbloom_major_version(void);
int blockbloom_minor_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BLOCKBLOOM_C_H_ */
