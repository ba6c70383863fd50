/* Test support for tests/c_api_test.c, written in C++ and callable from C:
 * a leveldb_env_t that counts data-block reads (blockbloom::ReadCountingEnv),
 * which LevelDB's C API cannot build by itself.
 *
 * Thread-safety: the counter is atomic; create/destroy are not concurrent
 * with anything else.
 */
#ifndef BLOCKBLOOM_TESTS_C_API_TEST_SUPPORT_H_
#define BLOCKBLOOM_TESTS_C_API_TEST_SUPPORT_H_

#include <stdint.h>

#include "leveldb/c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An env over LevelDB's default (on-disk) env that counts
 * RandomAccessFile::Read calls: once a table is open, its data-block reads.
 * NULL if this LevelDB's leveldb_env_t is not laid out as expected (the
 * test then fails rather than guess). Free with bbtest_counting_env_destroy
 * (not leveldb_env_destroy) after every database using it is closed. */
leveldb_env_t* bbtest_counting_env_create(void);
uint64_t bbtest_counting_env_reads(leveldb_env_t* env);
void bbtest_counting_env_reset(leveldb_env_t* env);
void bbtest_counting_env_destroy(leveldb_env_t* env);

/* 1 if every C++ policy (blocked, compact, both migrating) answers "may
 * match" for the filter the C API stores when building one fails. */
int bbtest_fallback_filter_may_match(void);

/* Opens the database at `path` from C++ with the C++ policy of the same kind
 * (0 blocked, 1 compact: blockbloom::NewBlockedBloomFilterPolicy /
 * NewCompactFilterPolicy at 10 bits/key), no block cache, reads present keys
 * "key%010d" of 2*i and absent ones of 2*i+1 for i in [0, num_keys), and
 * returns the data-block reads per absent Get; -1 on an error or a wrong
 * answer. Shows that filters written through the C API are the C++ ones. */
double bbtest_cpp_reads_per_absent_get(const char* path, int kind, int num_keys);

/* 1 if blockbloom's view of LevelDB's C handles (plugin/c/c_api_internal.h:
 * leveldb_t { DB* rep; }, leveldb_options_t { Options rep; }) is the loaded
 * libleveldb's: options set through leveldb_options_set_* read back through
 * Options; a database opened at `path` (created; the caller removes it) by
 * leveldb_open is reached through rep (a value leveldb_put wrote is read by
 * rep->Get, one rep->Put wrote by leveldb_get, rep->GetProperty agrees with
 * leveldb_property_value); the library's own run-time check passes; and
 * the plain handle is not taken for a FilteredDB. Prints what failed. */
int bbtest_leveldb_handles_match(const char* path);

/* Defined in c_header_c89_check.c, compiled as C89 with -pedantic-errors. */
int bbtest_c89_header_check(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BLOCKBLOOM_TESTS_C_API_TEST_SUPPORT_H_ */
