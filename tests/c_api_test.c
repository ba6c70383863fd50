/* blockbloom/c.h from C: a real on-disk LevelDB database opened through
 * LevelDB's C API with each blockbloom policy. Writes keys, compacts them
 * into tables, closes, reopens, reads every key back, checks that absent
 * keys are absent, and counts the data-block reads absent Gets cost against
 * the same database without a filter; then Gets from several threads at once
 * through one policy. `c_api_test concurrent` runs only the latter, on
 * LevelDB's default env, which is what ctest runs under TSan (label "tsan"):
 * the read-counting env is an EnvWrapper whose inlined forwarding confuses
 * TSan about mutexes locked inside the uninstrumented libleveldb. Compiled
 * as C99; exits non-zero on the first failed check. */
#define _XOPEN_SOURCE 700 /* mkdtemp, pthreads */

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blockbloom/c.h"
#include "c_api_test_support.h"
#include "c_test_check.h"
#include "leveldb/c.h"

enum { kKeys = 10000, kValueBytes = 64 };

static int g_failures = 0;

/* Present keys are even numbers, absent ones odd: every absent key falls
 * inside some table's key range, so only a filter can spare its read. */
static void Key(int i, int present, char* buf, size_t len) {
  snprintf(buf, len, "key%010d", 2 * i + (present ? 0 : 1));
}

static void Value(int i, char* buf) {
  int j;
  for (j = 0; j < kValueBytes; ++j) buf[j] = (char)('a' + (i * 7 + j) % 26);
}

/* Opens `path` with `policy` (NULL: no filter), `cache` (capacity 0: every
 * data block a Get needs is read from the file; NULL: LevelDB's default)
 * and `env` (NULL: LevelDB's default). */
static leveldb_t* Open(const char* path, leveldb_filterpolicy_t* policy, leveldb_env_t* env,
                       leveldb_cache_t* cache, leveldb_options_t** options_out) {
  char* err = NULL;
  leveldb_t* db;
  leveldb_options_t* options = leveldb_options_create();
  leveldb_options_set_create_if_missing(options, 1);
  leveldb_options_set_filter_policy(options, policy);
  /* LevelDB's C API takes neither a NULL env nor a NULL cache: NULL here
   * leaves LevelDB's default. */
  if (env != NULL) leveldb_options_set_env(options, env);
  if (cache != NULL) leveldb_options_set_cache(options, cache);
  db = leveldb_open(options, path, &err);
  if (err != NULL) {
    fprintf(stderr, "open %s: %s\n", path, err);
    leveldb_free(err);
    leveldb_options_destroy(options);
    return NULL;
  }
  *options_out = options;
  return db;
}

/* Writes kKeys keys and compacts them into tables. Returns 1 on success. */
static int Fill(leveldb_t* db) {
  char key[32], value[kValueBytes];
  char* err = NULL;
  int i;
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_writebatch_t* batch = leveldb_writebatch_create();
  for (i = 0; i < kKeys; ++i) {
    Key(i, 1, key, sizeof(key));
    Value(i, value);
    leveldb_writebatch_put(batch, key, strlen(key), value, kValueBytes);
    if (i % 1000 == 999) {
      leveldb_write(db, wo, batch, &err);
      leveldb_writebatch_clear(batch);
      if (err != NULL) break;
    }
  }
  leveldb_writebatch_destroy(batch);
  leveldb_writeoptions_destroy(wo);
  CHECK_NO_ERROR(err);
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  return 1;
}

/* Reopens the database and reads every key back (which also opens every
 * table), then Gets kKeys absent keys. Stores the data-block reads of the
 * absent Gets in *absent_reads. Returns 1 on success. */
static int Verify(leveldb_t* db, leveldb_env_t* env, unsigned long long* absent_reads) {
  char key[32], expected[kValueBytes];
  char* err = NULL;
  size_t len = 0;
  char* got;
  int i;
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  for (i = 0; i < kKeys; ++i) {
    Key(i, 1, key, sizeof(key));
    Value(i, expected);
    got = leveldb_get(db, ro, key, strlen(key), &len, &err);
    if (err != NULL || got == NULL || len != kValueBytes || memcmp(got, expected, len) != 0) {
      fprintf(stderr, "present key %s: %s\n", key, err != NULL ? err : "missing or wrong value");
      leveldb_free(err);
      leveldb_free(got);
      leveldb_readoptions_destroy(ro);
      ++g_failures;
      return 0;
    }
    leveldb_free(got);
  }
  bbtest_counting_env_reset(env);
  for (i = 0; i < kKeys; ++i) {
    Key(i, 0, key, sizeof(key));
    got = leveldb_get(db, ro, key, strlen(key), &len, &err);
    if (err != NULL || got != NULL) {
      fprintf(stderr, "absent key %s: %s\n", key, err != NULL ? err : "found");
      leveldb_free(err);
      leveldb_free(got);
      leveldb_readoptions_destroy(ro);
      ++g_failures;
      return 0;
    }
  }
  *absent_reads = (unsigned long long)bbtest_counting_env_reads(env);
  leveldb_readoptions_destroy(ro);
  return 1;
}

static int MakeDir(char* path_template) { return mkdtemp(path_template) != NULL; }

static void RemoveDb(const char* path) {
  char* err = NULL;
  leveldb_options_t* options = leveldb_options_create();
  leveldb_destroy_db(options, path, &err);
  leveldb_free(err);
  leveldb_options_destroy(options);
  rmdir(path);
}

/* Writes a database with `writer`, closes it, reopens it with `reader` and
 * verifies every key. *absent_reads gets the data-block reads of kKeys
 * absent Gets after the reopen. */
static int RoundTrip(const char* name, leveldb_filterpolicy_t* writer,
                     leveldb_filterpolicy_t* reader, unsigned long long* absent_reads) {
  char path[] = "/tmp/blockbloom-c-api-test-XXXXXX";
  const char* tmpdir = getenv("TMPDIR");
  char full[4096];
  leveldb_env_t* env = bbtest_counting_env_create();
  leveldb_cache_t* cache = leveldb_cache_create_lru(0); /* capacity 0: no caching */
  leveldb_options_t* options = NULL;
  leveldb_t* db;
  int ok = 0;
  CHECK(env != NULL);
  if (tmpdir != NULL && tmpdir[0] != '\0' &&
      (size_t)snprintf(full, sizeof(full), "%s/blockbloom-c-api-test-XXXXXX", tmpdir) <
          sizeof(full)) {
    ok = MakeDir(full);
  } else {
    strcpy(full, path);
    ok = MakeDir(full);
  }
  CHECK(ok);
  ok = 0;
  db = Open(full, writer, env, cache, &options);
  if (db != NULL) {
    ok = Fill(db);
    leveldb_close(db);
    leveldb_options_destroy(options);
    db = ok ? Open(full, reader, env, cache, &options) : NULL;
    ok = 0;
    if (db != NULL) {
      ok = Verify(db, env, absent_reads);
      leveldb_close(db);
      leveldb_options_destroy(options);
    }
  }
  RemoveDb(full);
  leveldb_cache_destroy(cache);
  bbtest_counting_env_destroy(env);
  if (ok) {
    printf("%-40s %6.4f data-block reads per absent Get\n", name, (double)*absent_reads / kKeys);
  }
  CHECK(ok);
  return 1;
}

static int TestVersion(void) {
  char expected_prefix[32];
  CHECK(blockbloom_version() != NULL);
  snprintf(expected_prefix, sizeof(expected_prefix), "%d.%d.", blockbloom_major_version(),
           blockbloom_minor_version());
  CHECK(strncmp(blockbloom_version(), expected_prefix, strlen(expected_prefix)) == 0);
  CHECK(bbtest_c89_header_check());
  return 1;
}

static int TestArgumentsAreClamped(void) {
  const double odd[] = {-5.0, 0.0, 0.5, 1e9};
  size_t i;
  for (i = 0; i < sizeof(odd) / sizeof(odd[0]); ++i) {
    leveldb_filterpolicy_t* p = blockbloom_filterpolicy_create_blocked(odd[i]);
    leveldb_filterpolicy_t* q = blockbloom_filterpolicy_create_compact(odd[i]);
    CHECK(p != NULL && q != NULL);
    blockbloom_filterpolicy_destroy(p);
    blockbloom_filterpolicy_destroy(q);
  }
  {
    leveldb_filterpolicy_t* p = blockbloom_filterpolicy_create_migrating_blocked(NAN);
    CHECK(p != NULL);
    /* LevelDB's own destroy works on our policies as well. */
    leveldb_filterpolicy_destroy(p);
  }
  blockbloom_filterpolicy_destroy(NULL);
  CHECK(bbtest_fallback_filter_may_match());
  {
    /* Stats: only blockbloom's policies have them. */
    leveldb_filterpolicy_t* builtin = leveldb_filterpolicy_create_bloom(10);
    leveldb_filterpolicy_t* ours = blockbloom_filterpolicy_create_compact(10);
    uint64_t probes = 1, negatives = 1;
    CHECK(builtin != NULL && ours != NULL);
    CHECK(blockbloom_filterpolicy_stats(builtin, &probes, &negatives) == 0);
    CHECK(probes == 0 && negatives == 0);
    CHECK(blockbloom_filterpolicy_stats(NULL, NULL, NULL) == 0);
    CHECK(blockbloom_filterpolicy_stats(ours, &probes, NULL) == 1 && probes == 0);
    leveldb_filterpolicy_destroy(builtin);
    blockbloom_filterpolicy_destroy(ours);
  }
  return 1;
}

/* Every policy through a full write/reopen/read cycle; absent Gets must cost
 * at most a tenth of the reads they cost without a filter. */
static int TestPoliciesAvoidReads(void) {
  unsigned long long none = 0, reads = 0;
  struct {
    const char* name;
    leveldb_filterpolicy_t* (*create)(double);
  } policies[] = {
      {"blockbloom blocked", blockbloom_filterpolicy_create_blocked},
      {"blockbloom compact", blockbloom_filterpolicy_create_compact},
      {"blockbloom migrating (blocked)", blockbloom_filterpolicy_create_migrating_blocked},
      {"blockbloom migrating (compact)", blockbloom_filterpolicy_create_migrating_compact},
  };
  size_t i;
  if (!RoundTrip("no filter", NULL, NULL, &none)) return 0;
  /* Without a filter nearly every absent Get reads a data block. */
  CHECK(none >= (unsigned long long)(0.9 * kKeys));
  for (i = 0; i < sizeof(policies) / sizeof(policies[0]); ++i) {
    leveldb_filterpolicy_t* policy = policies[i].create(10);
    int ok;
    CHECK(policy != NULL);
    ok = RoundTrip(policies[i].name, policy, policy, &reads);
    if (ok) {
      /* The policy's own counters (blockbloom_filterpolicy_stats): every
       * present Get probed a filter; each "no" is an absent Get's read
       * avoided, and nearly every absent Get (all but those falling between
       * two tables' key ranges) probed one and was answered "no" or read. */
      uint64_t probes = 0, negatives = 0;
      ok = blockbloom_filterpolicy_stats(policy, &probes, &negatives) == 1 &&
           probes >= (uint64_t)kKeys + negatives && negatives <= (uint64_t)kKeys &&
           negatives + reads >= (uint64_t)(0.95 * kKeys);
      if (!ok) {
        fprintf(stderr, "%s: probes %llu, negatives %llu, absent-Get reads %llu\n",
                policies[i].name, (unsigned long long)probes, (unsigned long long)negatives, reads);
      }
    }
    blockbloom_filterpolicy_destroy(policy);
    CHECK(ok);
    /* 10 bits/key: FPR ~1% (blocked), ~0.3% (compact); 3% is a loose cap. */
    CHECK(reads * 10 <= none);
    CHECK(reads <= (unsigned long long)(0.03 * kKeys));
  }
  return 1;
}

/* A database written with LevelDB's built-in Bloom filter, reopened with
 * each migrating policy: the built-in filters keep working (same reads
 * saved), no key is missed. */
static int TestMigrationFromBuiltin(void) {
  leveldb_filterpolicy_t* builtin = leveldb_filterpolicy_create_bloom(10);
  leveldb_filterpolicy_t* blocked = blockbloom_filterpolicy_create_migrating_blocked(10);
  leveldb_filterpolicy_t* compact = blockbloom_filterpolicy_create_migrating_compact(10);
  unsigned long long reads = 0;
  int ok = RoundTrip("built-in -> migrating (blocked)", builtin, blocked, &reads) &&
           reads <= (unsigned long long)(0.05 * kKeys) &&
           RoundTrip("built-in -> migrating (compact)", builtin, compact, &reads) &&
           reads <= (unsigned long long)(0.05 * kKeys) &&
           /* and back: stock LevelDB reads our filters as "may match" */
           RoundTrip("migrating (blocked) -> built-in", blocked, builtin, &reads);
  leveldb_filterpolicy_destroy(builtin);
  blockbloom_filterpolicy_destroy(blocked);
  blockbloom_filterpolicy_destroy(compact);
  CHECK(ok);
  return 1;
}

/* A database written through the C API, read from C++ with the C++ policy
 * of the same kind: the filters are the C++ policy's (same name, same
 * bytes), so they still spare the reads. */
static int TestCppReadsCFilters(void) {
  leveldb_filterpolicy_t* (*create[2])(double) = {blockbloom_filterpolicy_create_blocked,
                                                  blockbloom_filterpolicy_create_compact};
  int kind;
  for (kind = 0; kind < 2; ++kind) {
    char path[4096];
    const char* tmpdir = getenv("TMPDIR");
    leveldb_filterpolicy_t* policy = create[kind](10);
    leveldb_options_t* options = NULL;
    leveldb_t* db = NULL;
    double reads = -1;
    int ok, made;
    snprintf(path, sizeof(path), "%s/blockbloom-c-api-test-XXXXXX",
             tmpdir != NULL && tmpdir[0] != '\0' ? tmpdir : "/tmp");
    made = policy != NULL && MakeDir(path);
    ok = made;
    if (ok) db = Open(path, policy, NULL, NULL, &options);
    if (db != NULL) {
      ok = Fill(db);
      leveldb_close(db);
      leveldb_options_destroy(options);
      if (ok) reads = bbtest_cpp_reads_per_absent_get(path, kind, kKeys);
    }
    if (made) RemoveDb(path); /* also after a failed Open or Fill */
    blockbloom_filterpolicy_destroy(policy);
    CHECK(ok && db != NULL);
    printf("%-40s %6.4f data-block reads per absent Get\n",
           kind == 0 ? "C-written blocked, read from C++" : "C-written compact, read from C++",
           reads);
    CHECK(reads >= 0 && reads <= 0.03);
  }
  return 1;
}

/* Several threads Get from one database (one policy) at once: each checks
 * its answers; TSan checks the policy's callbacks for races. Meanwhile
 * another thread reads the policy's counters (blockbloom_filterpolicy_stats
 * "may run concurrently with Gets"): they never go down nor show more
 * negatives than probes. */
enum { kThreads = 4, kGetsPerThread = 2000 };

struct StatsArgs {
  const leveldb_filterpolicy_t* policy;
  int* getters_done; /* read and written under done_mu */
  pthread_mutex_t* done_mu;
  uint64_t last_probes;
  int failures;
};

static void* StatsReader(void* arg) {
  struct StatsArgs* args = (struct StatsArgs*)arg;
  int done = 0;
  while (!done) {
    uint64_t probes = 0, negatives = 0;
    if (blockbloom_filterpolicy_stats(args->policy, &probes, &negatives) != 1 ||
        probes < args->last_probes || negatives > probes) {
      ++args->failures;
    }
    args->last_probes = probes;
    pthread_mutex_lock(args->done_mu);
    done = *args->getters_done;
    pthread_mutex_unlock(args->done_mu);
    sched_yield(); /* the Getters have the cores */
  }
  return NULL;
}

struct GetterArgs {
  leveldb_t* db;
  int seed;
  int failures;
};

static void* Getter(void* arg) {
  struct GetterArgs* args = (struct GetterArgs*)arg;
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  char key[32], expected[kValueBytes];
  unsigned x = (unsigned)args->seed * 2654435761u + 1;
  int g;
  for (g = 0; g < kGetsPerThread; ++g) {
    const int present = g & 1;
    int i;
    char* err = NULL;
    size_t len = 0;
    char* got;
    x = x * 1103515245u + 12345u;
    i = (int)((x >> 8) % kKeys);
    Key(i, present, key, sizeof(key));
    got = leveldb_get(args->db, ro, key, strlen(key), &len, &err);
    if (err != NULL) {
      ++args->failures;
      leveldb_free(err);
    } else if (present) {
      Value(i, expected);
      if (got == NULL || len != kValueBytes || memcmp(got, expected, len) != 0) ++args->failures;
    } else if (got != NULL) {
      ++args->failures;
    }
    leveldb_free(got);
  }
  leveldb_readoptions_destroy(ro);
  return NULL;
}

static int TestConcurrentGets(void) {
  char path[4096];
  const char* tmpdir = getenv("TMPDIR");
  leveldb_filterpolicy_t* policy = blockbloom_filterpolicy_create_compact(10);
  leveldb_env_t* env = leveldb_create_default_env();
  leveldb_cache_t* cache = leveldb_cache_create_lru(1 << 20);
  leveldb_options_t* options = NULL;
  leveldb_t* db = NULL;
  pthread_t threads[kThreads], stats_thread;
  struct GetterArgs args[kThreads];
  struct StatsArgs stats_args;
  pthread_mutex_t done_mu = PTHREAD_MUTEX_INITIALIZER;
  int getters_done = 0;
  uint64_t probes_before = 0, probes_after = 0;
  int i, started = 0, failures = 0, ok, made, stats_started = 0;
  snprintf(path, sizeof(path), "%s/blockbloom-c-api-test-XXXXXX",
           tmpdir != NULL && tmpdir[0] != '\0' ? tmpdir : "/tmp");
  made = policy != NULL && env != NULL && MakeDir(path);
  ok = made;
  if (ok) db = Open(path, policy, env, cache, &options);
  ok = ok && db != NULL && Fill(db);
  ok = ok && blockbloom_filterpolicy_stats(policy, &probes_before, NULL) == 1;
  stats_args.policy = policy;
  stats_args.getters_done = &getters_done;
  stats_args.done_mu = &done_mu;
  stats_args.last_probes = probes_before;
  stats_args.failures = 0;
  if (ok) stats_started = pthread_create(&stats_thread, NULL, StatsReader, &stats_args) == 0;
  for (i = 0; ok && i < kThreads; ++i) {
    args[i].db = db;
    args[i].seed = i + 1;
    args[i].failures = 0;
    if (pthread_create(&threads[i], NULL, Getter, &args[i]) != 0) break;
    ++started;
  }
  for (i = 0; i < started; ++i) {
    pthread_join(threads[i], NULL);
    failures += args[i].failures;
  }
  pthread_mutex_lock(&done_mu);
  getters_done = 1;
  pthread_mutex_unlock(&done_mu);
  if (stats_started) pthread_join(stats_thread, NULL);
  failures += stats_args.failures;
  /* Every Get of a present key (half of them) probes a table's filter. */
  if (ok && (blockbloom_filterpolicy_stats(policy, &probes_after, NULL) != 1 ||
             probes_after - probes_before < (uint64_t)kThreads * kGetsPerThread / 2)) {
    ++failures;
  }
  if (db != NULL) {
    leveldb_close(db);
    leveldb_options_destroy(options);
  }
  if (made) RemoveDb(path); /* also after a failed Open or Fill */
  leveldb_cache_destroy(cache);
  leveldb_env_destroy(env);
  blockbloom_filterpolicy_destroy(policy);
  CHECK(ok);
  CHECK(started == kThreads);
  CHECK(stats_started);
  CHECK(failures == 0);
  printf("%d threads x %d Gets through one policy, its stats read meanwhile: all answers right\n",
         kThreads, kGetsPerThread);
  return 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "concurrent") == 0) {
    TestConcurrentGets();
  } else {
    TestVersion();
    TestArgumentsAreClamped();
    TestPoliciesAvoidReads();
    TestMigrationFromBuiltin();
    TestCppReadsCFilters();
    TestConcurrentGets();
  }
  if (g_failures != 0) {
    fprintf(stderr, "c_api_test: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("c_api_test: all checks passed (blockbloom %s)\n", blockbloom_version());
  return 0;
}
