/* FilteredDB from C (blockbloom/c.h): a real on-disk database opened by
 * blockbloom_filtered_db_open and used through LevelDB's own C API only --
 * leveldb_put / delete / write (batches) / get / iterators / snapshots /
 * property_value / compact_range / approximate_sizes / close -- against an
 * oracle array, for both index kinds. Checks that absent Gets are ruled out
 * by the index ("blockbloom.stats"), that leveldb_close saves the index and
 * the next open loads it ("opened-from: file"), that a plain leveldb_open
 * reads the same data, the errptr contract (bad path, bad kind, lock
 * conflict, a message already in *errptr), and that LevelDB's handles are
 * laid out as blockbloom assumes (c_api_test_support.cc). Run under ASan
 * too (the asan preset): ASan replaces operator new/delete for the
 * uninstrumented libleveldb as well, so a leveldb_close freeing anything but
 * the handle and rep blockbloom allocated, or leaking them, is reported
 * there. `c_api_test_filtered_db concurrent` runs only TestConcurrent
 * (writers, readers, save_index, rebuild_index and stats at once on one handle), which
 * ctest also runs under TSan (label "tsan", with tests/tsan.supp). The full
 * run is not a TSan test: with libleveldb uninstrumented, TSan sees
 * leveldb_release_snapshot's unlock without its lock, as c_api_test's full
 * run sees its env's. Compiled as C99;
 * exits non-zero on the first failed check of each test. */
#define _XOPEN_SOURCE 700 /* mkdtemp, strdup, pthreads */

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blockbloom/c.h"
#include "c_api_test_support.h"
#include "c_test_check.h"
#include "leveldb/c.h"

/* Keys "fkey%06d" for i in [0, kRange); an oracle says which are live and
 * with which value version. */
enum { kRange = 4000, kExpectedKeys = 4000 };

static int g_failures = 0;

/* The database a test has open, closed by the test's cleanup if a CHECK
 * returned early, so the directory can always be removed. */
static leveldb_t* g_db = NULL;

static void CloseDb(void) {
  if (g_db != NULL) leveldb_close(g_db);
  g_db = NULL;
}

/* Removes the database at `path` (FilteredDB's index file too) and `path`. */
static void RemoveDb(const char* path) {
  char* err = NULL;
  leveldb_options_t* options = leveldb_options_create();
  CloseDb();
  blockbloom_filtered_db_destroy_db(options, path, &err);
  leveldb_free(err);
  leveldb_options_destroy(options);
  rmdir(path);
}

/* The oracle: version[i] == 0 absent, else the live value's version. */
struct Oracle {
  int version[kRange];
};

static void Key(int i, char* buf, size_t len) { snprintf(buf, len, "fkey%06d", i); }

/* Bytewise order reversed: a comparator of its own that calls keys equal
 * only when their bytes are. */
static int ReverseCompare(void* state, const char* a, size_t alen, const char* b, size_t blen) {
  const size_t n = alen < blen ? alen : blen;
  const int r = memcmp(a, b, n);
  (void)state;
  if (r != 0) return -r;
  return alen < blen ? 1 : (alen > blen ? -1 : 0);
}
static const char* ReverseName(void* state) {
  (void)state;
  return "test.ReverseBytewise";
}
static void NoDestructor(void* state) { (void)state; }

static size_t Value(int i, int version, char* buf, size_t len) {
  return (size_t)snprintf(buf, len, "value-%d-v%d-%0*d", i, version, 8 + i % 16, i * 31);
}

static int MakeTempDir(char* path, size_t len) {
  const char* tmpdir = getenv("TMPDIR");
  if ((size_t)snprintf(path, len, "%s/blockbloom-c-fdb-test-XXXXXX",
                       tmpdir != NULL && tmpdir[0] != '\0' ? tmpdir : "/tmp") >= len) {
    return 0;
  }
  return mkdtemp(path) != NULL;
}

static int PathExists(const char* path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* A counter of progress reports (blockbloom_filtered_db_options_set_progress). */
struct Progress {
  int calls;
  uint64_t last;
};

static void OnProgress(void* state, uint64_t keys_scanned) {
  struct Progress* p = (struct Progress*)state;
  ++p->calls;
  p->last = keys_scanned;
}

/* The numeric value of line "<name>: <value>" in "blockbloom.stats", or -1. */
static double Stat(leveldb_t* db, const char* name) {
  char* stats = (char*)leveldb_property_value(db, "blockbloom.stats");
  double result = -1;
  char pattern[64];
  const char* at;
  if (stats == NULL) return -1;
  snprintf(pattern, sizeof(pattern), "\n%s: ", name);
  if (strncmp(stats, pattern + 1, strlen(pattern + 1)) == 0) {
    result = strtod(stats + strlen(pattern + 1), NULL);
  } else if ((at = strstr(stats, pattern)) != NULL) {
    result = strtod(at + strlen(pattern), NULL);
  }
  leveldb_free(stats);
  return result;
}

/* 1 if "blockbloom.stats" has the line "opened-from: <source>". */
static int OpenedFrom(leveldb_t* db, const char* source) {
  char* stats = (char*)leveldb_property_value(db, "blockbloom.stats");
  char line[64];
  int found;
  if (stats == NULL) return 0;
  snprintf(line, sizeof(line), "opened-from: %s\n", source);
  found = strstr(stats, line) != NULL;
  leveldb_free(stats);
  return found;
}

/* Every key in [0, kRange) read through leveldb_get agrees with the oracle
 * (`snapshot`: NULL for the latest state). */
static int CheckAll(leveldb_t* db, const struct Oracle* oracle,
                    const leveldb_snapshot_t* snapshot) {
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  char key[32], expected[64];
  int i, ok = 1;
  leveldb_readoptions_set_snapshot(ro, snapshot);
  for (i = 0; i < kRange && ok; ++i) {
    char* err = NULL;
    size_t len = 12345;
    char* got;
    Key(i, key, sizeof(key));
    got = leveldb_get(db, ro, key, strlen(key), &len, &err);
    if (err != NULL) {
      fprintf(stderr, "get %s: %s\n", key, err);
      leveldb_free(err);
      ok = 0;
    } else if (oracle->version[i] == 0) {
      if (got != NULL || len != 0) {
        fprintf(stderr, "get %s: found a deleted or never-written key\n", key);
        ok = 0;
      }
    } else {
      const size_t n = Value(i, oracle->version[i], expected, sizeof(expected));
      if (got == NULL || len != n || memcmp(got, expected, n) != 0) {
        fprintf(stderr, "get %s: %s\n", key, got == NULL ? "missing" : "wrong value");
        ok = 0;
      }
    }
    leveldb_free(got);
  }
  leveldb_readoptions_destroy(ro);
  CHECK(ok);
  return 1;
}

/* A forward scan returns exactly the oracle's live keys, in order, with
 * their values; a backward scan from the end as many. */
static int CheckIteration(leveldb_t* db, const struct Oracle* oracle) {
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  leveldb_iterator_t* it = leveldb_create_iterator(db, ro);
  char key[32], expected[64];
  char* err = NULL;
  int i = 0, ok = 1, live = 0, backward = 0;
  for (leveldb_iter_seek_to_first(it); ok && leveldb_iter_valid(it); leveldb_iter_next(it)) {
    size_t klen, vlen;
    const char* k = leveldb_iter_key(it, &klen);
    const char* v = leveldb_iter_value(it, &vlen);
    while (i < kRange && oracle->version[i] == 0) ++i;
    if (i == kRange) {
      ok = 0;
      break;
    }
    Key(i, key, sizeof(key));
    {
      const size_t n = Value(i, oracle->version[i], expected, sizeof(expected));
      if (klen != strlen(key) || memcmp(k, key, klen) != 0 || vlen != n ||
          memcmp(v, expected, n) != 0) {
        fprintf(stderr, "iterator: expected %s\n", key);
        ok = 0;
      }
    }
    ++i;
    ++live;
  }
  while (i < kRange && oracle->version[i] == 0) ++i;
  if (i != kRange) ok = 0;
  for (leveldb_iter_seek_to_last(it); leveldb_iter_valid(it); leveldb_iter_prev(it)) ++backward;
  leveldb_iter_get_error(it, &err);
  leveldb_iter_destroy(it);
  leveldb_readoptions_destroy(ro);
  CHECK_NO_ERROR(err);
  CHECK(ok);
  CHECK(backward == live);
  return 1;
}

static int CountLive(const struct Oracle* oracle) {
  int i, live = 0;
  for (i = 0; i < kRange; ++i) live += oracle->version[i] != 0;
  return live;
}

/* Writes through every leveldb_* write path: batches of puts, single puts,
 * single deletes (of present and absent keys), batches mixing puts and
 * deletes of the same key (in both orders), overwrites. */
static int Write(leveldb_t* db, struct Oracle* oracle) {
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_writebatch_t* batch = leveldb_writebatch_create();
  char key[32], value[64];
  char* err = NULL;
  int i;
  /* Even keys below kRange/2 by batches of 250; even keys above by leveldb_put. */
  for (i = 0; i < kRange && err == NULL; i += 2) {
    const size_t n = Value(i, 1, value, sizeof(value));
    Key(i, key, sizeof(key));
    if (i < kRange / 2) {
      leveldb_writebatch_put(batch, key, strlen(key), value, n);
      if (i % 500 == 498) {
        leveldb_write(db, wo, batch, &err);
        leveldb_writebatch_clear(batch);
      }
    } else {
      leveldb_put(db, wo, key, strlen(key), value, n, &err);
    }
    oracle->version[i] = 1;
  }
  CHECK_NO_ERROR(err);
  /* Every tenth key deleted: those below kRange/2 in one batch, the others
   * one by one; deleting the odd (absent) ones changes nothing. */
  for (i = 0; i < kRange && err == NULL; i += 5) {
    Key(i, key, sizeof(key));
    if (i < kRange / 2) {
      leveldb_writebatch_delete(batch, key, strlen(key));
    } else {
      leveldb_delete(db, wo, key, strlen(key), &err);
    }
    oracle->version[i] = 0;
  }
  if (err == NULL) leveldb_write(db, wo, batch, &err);
  leveldb_writebatch_clear(batch);
  CHECK_NO_ERROR(err);
  /* One batch: put then delete (net absent) for keys 1 mod 6, delete then
   * put (net present) for keys 3 mod 6, overwrite (version 2) for keys 2 mod
   * 6. */
  for (i = 0; i < kRange; ++i) {
    Key(i, key, sizeof(key));
    if (i % 6 == 1) {
      const size_t n = Value(i, 1, value, sizeof(value));
      leveldb_writebatch_put(batch, key, strlen(key), value, n);
      leveldb_writebatch_delete(batch, key, strlen(key));
      oracle->version[i] = 0;
    } else if (i % 6 == 3) {
      const size_t n = Value(i, 3, value, sizeof(value));
      leveldb_writebatch_delete(batch, key, strlen(key));
      leveldb_writebatch_put(batch, key, strlen(key), value, n);
      oracle->version[i] = 3;
    } else if (i % 6 == 2 && oracle->version[i] != 0) {
      const size_t n = Value(i, 2, value, sizeof(value));
      leveldb_writebatch_put(batch, key, strlen(key), value, n);
      oracle->version[i] = 2;
    }
  }
  leveldb_write(db, wo, batch, &err);
  leveldb_writebatch_destroy(batch);
  leveldb_writeoptions_destroy(wo);
  CHECK_NO_ERROR(err);
  return 1;
}

/* A snapshot taken before a delete and an overwrite still sees both old
 * values; the latest state does not. Updates the oracle. */
static int CheckSnapshot(leveldb_t* db, struct Oracle* oracle) {
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  struct Oracle* before = (struct Oracle*)malloc(sizeof(struct Oracle));
  const leveldb_snapshot_t* snapshot;
  char key[32], value[64];
  char* err = NULL;
  int i, deleted = -1, overwritten = -1, ok;
  CHECK(before != NULL);
  memcpy(before, oracle, sizeof(*before));
  for (i = 0; i < kRange && (deleted < 0 || overwritten < 0); ++i) {
    if (oracle->version[i] == 0) continue;
    if (deleted < 0) {
      deleted = i;
    } else {
      overwritten = i;
    }
  }
  snapshot = leveldb_create_snapshot(db);
  Key(deleted, key, sizeof(key));
  leveldb_delete(db, wo, key, strlen(key), &err);
  oracle->version[deleted] = 0;
  if (err == NULL) {
    const size_t n = Value(overwritten, 9, value, sizeof(value));
    Key(overwritten, key, sizeof(key));
    leveldb_put(db, wo, key, strlen(key), value, n, &err);
    oracle->version[overwritten] = 9;
  }
  ok = err == NULL && CheckAll(db, before, snapshot) && CheckAll(db, oracle, NULL);
  leveldb_release_snapshot(db, snapshot);
  leveldb_writeoptions_destroy(wo);
  free(before);
  CHECK_NO_ERROR(err);
  CHECK(ok);
  return 1;
}

/* Opens `path` as a FilteredDB of `kind` (progress reports counted in
 * `progress` unless NULL); NULL (after printing why) on error. */
static leveldb_t* OpenFiltered(const char* path, int kind, unsigned char persist,
                               struct Progress* progress, leveldb_options_t* options) {
  blockbloom_filtered_db_options_t* fdb = blockbloom_filtered_db_options_create();
  leveldb_t* db;
  char* err = NULL;
  if (fdb == NULL) return NULL;
  blockbloom_filtered_db_options_set_expected_keys(fdb, kExpectedKeys);
  blockbloom_filtered_db_options_set_target_fpr(fdb, 0.01);
  blockbloom_filtered_db_options_set_kind(fdb, kind);
  blockbloom_filtered_db_options_set_persist_index(fdb, persist);
  if (progress != NULL)
    blockbloom_filtered_db_options_set_progress(fdb, progress, OnProgress, 1000);
  db = blockbloom_filtered_db_open(options, fdb, path, &err);
  blockbloom_filtered_db_options_destroy(fdb); /* open copied what it needs */
  if (err != NULL) {
    fprintf(stderr, "blockbloom_filtered_db_open %s: %s\n", path, err);
    leveldb_free(err);
  }
  return db;
}

/* Gets of every key in range; returns the share of the absent ones that the
 * index ruled out, from "blockbloom.stats" (-1 on error). */
static double RuledOutShare(leveldb_t* db, const struct Oracle* oracle) {
  const double before = Stat(db, "gets-ruled-out");
  const double checked_before = Stat(db, "gets-checked");
  if (!CheckAll(db, oracle, NULL)) return -1;
  if (Stat(db, "gets-checked") - checked_before != kRange) return -1;
  return (Stat(db, "gets-ruled-out") - before) / (kRange - CountLive(oracle));
}

/* "blockbloom.filter-policy-stats" of a FilteredDB opened with `policy`
 * (from blockbloom_filterpolicy_create_*) gives the policy's own counters,
 * as blockbloom_filterpolicy_stats reads them, and at least one probe. No
 * Get may run concurrently (the two reads must see the same counts). */
static int PolicyStatsPropertyAgrees(leveldb_t* db, const leveldb_filterpolicy_t* policy) {
  char* text = leveldb_property_value(db, "blockbloom.filter-policy-stats");
  unsigned long long probes = 0, negatives = 0, positives = 0;
  uint64_t policy_probes = 0, policy_negatives = 0;
  int fields;
  CHECK(text != NULL);
  fields = sscanf(text, "probes: %llu\nnegatives: %llu\npositives: %llu\n", &probes, &negatives,
                  &positives);
  leveldb_free(text);
  CHECK(fields == 3);
  CHECK(blockbloom_filterpolicy_stats(policy, &policy_probes, &policy_negatives) == 1);
  CHECK(probes == policy_probes && negatives == policy_negatives);
  CHECK(positives == probes - negatives);
  CHECK(probes > 0);
  return 1;
}

/* The whole cycle on the (new) database at `path`, whose options hold
 * `policy`. */
static int FilteredDbCycle(const char* path, int kind, struct Oracle* oracle,
                           leveldb_options_t* options, const leveldb_filterpolicy_t* policy) {
  const char* kind_name = kind == blockbloom_index_dleft ? "d-left" : "counting";
  struct Progress progress = {0, 0};
  char* err = NULL;
  double share;
  int live;

  /* First open: an empty database, indexed by a scan of nothing. */
  g_db = OpenFiltered(path, kind, 1, &progress, options);
  CHECK(g_db != NULL);
  CHECK(blockbloom_is_filtered_db(g_db) == 1);
  CHECK(OpenedFrom(g_db, "scan"));
  CHECK(progress.calls >= 1 && progress.last == 0);
  CHECK(Stat(g_db, "keys") == 0);
  CHECK(Write(g_db, oracle));
  live = CountLive(oracle);
  CHECK(live > kRange / 4 && live < kRange * 3 / 4);
  CHECK(Stat(g_db, "keys") == live); /* the index counts live keys, net of deletes */
  CHECK(CheckAll(g_db, oracle, NULL));
  CHECK(CheckIteration(g_db, oracle));
  CHECK(CheckSnapshot(g_db, oracle));
  live = CountLive(oracle);

  /* LevelDB's own properties and maintenance calls pass through. */
  {
    char* files = (char*)leveldb_property_value(g_db, "leveldb.num-files-at-level0");
    const char* start = "fkey";
    const char* limit = "fkez";
    size_t start_len = 4, limit_len = 4;
    uint64_t size = 0;
    CHECK(files != NULL);
    leveldb_free(files);
    CHECK(leveldb_property_value(g_db, "blockbloom.no-such-property") == NULL);
    leveldb_compact_range(g_db, NULL, 0, NULL, 0);
    leveldb_approximate_sizes(g_db, 1, &start, &start_len, &limit, &limit_len, &size);
    CHECK(size > 0);
  }
  share = RuledOutShare(g_db, oracle);
  printf("FilteredDB (%s) from C: %.4f of absent Gets ruled out by the index\n", kind_name, share);
  /* d-left gives ~0.15% FPR, counting ~1%: a 5% cap is loose but can fail. */
  CHECK(share >= 0.95 && share <= 1.0);
  /* The table filters' own counters, through LevelDB's wrapper of a C policy. */
  CHECK(PolicyStatsPropertyAgrees(g_db, policy));
  {
    /* The numeric property agrees with the stats line. */
    char* ruled = (char*)leveldb_property_value(g_db, "blockbloom.index-gets-ruled-out");
    CHECK(ruled != NULL);
    share = strtod(ruled, NULL);
    leveldb_free(ruled);
    CHECK(share == Stat(g_db, "gets-ruled-out"));
  }
  blockbloom_filtered_db_save_index(g_db, &err);
  CHECK_NO_ERROR(err);
  CHECK(Stat(g_db, "index-saves") == 1);
  blockbloom_filtered_db_rebuild_index(g_db, &err);
  CHECK_NO_ERROR(err);
  CHECK(Stat(g_db, "keys") == live);
  CHECK(CheckAll(g_db, oracle, NULL));
  CloseDb(); /* closes LevelDB, saves the index */

  /* Reopen: the saved index is loaded, not rebuilt by a scan. */
  progress.calls = 0;
  g_db = OpenFiltered(path, kind, 1, &progress, options);
  CHECK(g_db != NULL);
  CHECK(OpenedFrom(g_db, "file"));
  CHECK(progress.calls == 0);
  CHECK(Stat(g_db, "keys") == live);
  share = RuledOutShare(g_db, oracle);
  CHECK(share >= 0.95 && share <= 1.0);
  CHECK(CheckIteration(g_db, oracle));
  CloseDb();

  /* Without persistence: a scan, whose last progress report is the live
   * key count. */
  progress.calls = 0;
  g_db = OpenFiltered(path, kind, 0, &progress, options);
  CHECK(g_db != NULL);
  CHECK(OpenedFrom(g_db, "scan"));
  CHECK(progress.calls >= 1 && progress.last == (uint64_t)live);
  CHECK(CheckAll(g_db, oracle, NULL));
  blockbloom_filtered_db_save_index(g_db, &err); /* persistence off: an error */
  CHECK(err != NULL && strstr(err, "Not implemented") != NULL);
  leveldb_free(err);
  err = NULL;
  CloseDb();

  /* Plain LevelDB reads what FilteredDB wrote, and is no FilteredDB. */
  g_db = leveldb_open(options, path, &err);
  CHECK_NO_ERROR(err);
  CHECK(g_db != NULL);
  CHECK(blockbloom_is_filtered_db(g_db) == 0);
  CHECK(leveldb_property_value(g_db, "blockbloom.stats") == NULL);
  CHECK(CheckAll(g_db, oracle, NULL));
  blockbloom_filtered_db_save_index(g_db, &err);
  CHECK(err != NULL && strstr(err, "not a FilteredDB") != NULL);
  blockbloom_filtered_db_rebuild_index(g_db, &err); /* replaces the message */
  CHECK(err != NULL && strstr(err, "not a FilteredDB") != NULL);
  leveldb_free(err);
  err = NULL;
  CloseDb();

  /* Destroy removes the index file and the directory. */
  g_db = OpenFiltered(path, kind, 1, &progress, options);
  CHECK(g_db != NULL);
  CloseDb();
  {
    char index_file[4200];
    snprintf(index_file, sizeof(index_file), "%s/BLOCKBLOOM-INDEX", path);
    CHECK(PathExists(index_file));
  }
  blockbloom_filtered_db_destroy_db(options, path, &err);
  CHECK_NO_ERROR(err);
  CHECK(!PathExists(path));
  return 1;
}

static int TestFilteredDb(int kind) {
  char path[4096];
  struct Oracle* oracle = (struct Oracle*)calloc(1, sizeof(struct Oracle));
  leveldb_filterpolicy_t* policy = blockbloom_filterpolicy_create_blocked(10);
  leveldb_options_t* options = leveldb_options_create();
  int ok = oracle != NULL && policy != NULL && MakeTempDir(path, sizeof(path));
  if (ok) {
    leveldb_options_set_create_if_missing(options, 1);
    leveldb_options_set_filter_policy(options, policy);
    leveldb_options_set_write_buffer_size(options, 64 * 1024); /* several tables */
    ok = FilteredDbCycle(path, kind, oracle, options, policy);
    RemoveDb(path); /* closes g_db first */
  }
  leveldb_options_destroy(options);
  blockbloom_filterpolicy_destroy(policy);
  free(oracle);
  CHECK(ok);
  return 1;
}

/* The errptr contract, as LevelDB's: NULL back, a malloc'ed message that
 * replaces (and frees) one already there. Works under `path`. */
static int ErrorCases(const char* path, leveldb_options_t* options,
                      blockbloom_filtered_db_options_t* fdb) {
  char bad[4200];
  leveldb_t* second;
  char* err = strdup("an earlier message"); /* must be freed by the failing call */
  FILE* file;
  CHECK(err != NULL);

  /* A missing database without create_if_missing (LevelDB creates the
   * directory, then fails). */
  snprintf(bad, sizeof(bad), "%s/missing", path);
  g_db = blockbloom_filtered_db_open(options, fdb, bad, &err);
  CHECK(g_db == NULL);
  CHECK(err != NULL && strcmp(err, "an earlier message") != 0);
  CHECK(strstr(err, "Invalid argument") != NULL); /* LevelDB: "does not exist" */
  leveldb_free(err);
  err = NULL;

  /* A path under a regular file. */
  leveldb_options_set_create_if_missing(options, 1);
  snprintf(bad, sizeof(bad), "%s/file", path);
  file = fopen(bad, "w");
  CHECK(file != NULL);
  fclose(file);
  snprintf(bad, sizeof(bad), "%s/file/db", path);
  g_db = blockbloom_filtered_db_open(options, fdb, bad, &err);
  CHECK(g_db == NULL && err != NULL);
  leveldb_free(err);
  err = NULL;

  /* An unknown index kind: refused before anything is created. */
  snprintf(bad, sizeof(bad), "%s/db", path);
  blockbloom_filtered_db_options_set_kind(fdb, 7);
  g_db = blockbloom_filtered_db_open(options, fdb, bad, &err);
  CHECK(g_db == NULL && err != NULL && strstr(err, "Invalid argument") != NULL);
  leveldb_free(err);
  err = NULL;
  CHECK(!PathExists(bad));

  /* A comparator of its own: refused unless the caller promises that it
   * never calls keys of different bytes equal; then the database opens and
   * answers from the index. */
  {
    leveldb_comparator_t* reverse =
        leveldb_comparator_create(NULL, NoDestructor, ReverseCompare, ReverseName);
    leveldb_options_t* with_comparator = leveldb_options_create();
    size_t len = 0;
    char* value;
    CHECK(reverse != NULL && with_comparator != NULL);
    leveldb_options_set_create_if_missing(with_comparator, 1);
    leveldb_options_set_comparator(with_comparator, reverse);
    blockbloom_filtered_db_options_set_kind(fdb, blockbloom_index_dleft);
    g_db = blockbloom_filtered_db_open(with_comparator, fdb, bad, &err);
    CHECK(g_db == NULL && err != NULL && strstr(err, "Invalid argument") != NULL);
    leveldb_free(err);
    err = NULL;
    blockbloom_filtered_db_options_set_comparator_equality_is_bytewise(fdb, 1);
    g_db = blockbloom_filtered_db_open(with_comparator, fdb, bad, &err);
    CHECK_NO_ERROR(err);
    CHECK(g_db != NULL);
    if (g_db != NULL) {
      leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
      leveldb_readoptions_t* ro = leveldb_readoptions_create();
      leveldb_put(g_db, wo, "apple", 5, "red", 3, &err);
      CHECK_NO_ERROR(err);
      value = leveldb_get(g_db, ro, "apple", 5, &len, &err);
      CHECK_NO_ERROR(err);
      CHECK(value != NULL && len == 3 && memcmp(value, "red", 3) == 0);
      leveldb_free(value);
      value = leveldb_get(g_db, ro, "pear", 4, &len, &err);
      CHECK_NO_ERROR(err);
      CHECK(value == NULL);
      leveldb_writeoptions_destroy(wo);
      leveldb_readoptions_destroy(ro);
    }
    CloseDb();
    blockbloom_filtered_db_options_set_comparator_equality_is_bytewise(fdb, 0);
    blockbloom_filtered_db_destroy_db(with_comparator, bad, &err);
    CHECK_NO_ERROR(err);
    leveldb_options_destroy(with_comparator);
    leveldb_comparator_destroy(reverse);
  }

  /* Odd sizes are accepted (clamped by the index): no keys expected, a NaN
   * or impossible FPR, for both kinds. */
  {
    const double fprs[] = {NAN, 0.0, 7.0};
    int k;
    for (k = 0; k < 3; ++k) {
      blockbloom_filtered_db_options_set_kind(
          fdb, k == 1 ? blockbloom_index_counting : blockbloom_index_dleft);
      blockbloom_filtered_db_options_set_expected_keys(fdb, 0);
      blockbloom_filtered_db_options_set_target_fpr(fdb, fprs[k]);
      g_db = blockbloom_filtered_db_open(options, fdb, bad, &err);
      CHECK_NO_ERROR(err);
      CHECK(g_db != NULL);
      CHECK(Stat(g_db, "index-active") == 1);
      CloseDb();
      blockbloom_filtered_db_destroy_db(options, bad, &err);
      CHECK_NO_ERROR(err);
    }
  }

  /* Defaults (NULL options: d-left, sized for the live keys: an empty
   * database's index within the budget's fixed 256 KiB); a second open of the
   * same database fails on LevelDB's lock and leaves the first one working. */
  g_db = blockbloom_filtered_db_open(options, NULL, bad, &err);
  CHECK_NO_ERROR(err);
  CHECK(g_db != NULL);
  CHECK(Stat(g_db, "capacity") >= 1000);
  CHECK(Stat(g_db, "memory-bytes") > 0 && Stat(g_db, "memory-bytes") <= 256 * 1024);
  /* No filter policy in `options`: no policy counters to report. */
  CHECK(leveldb_property_value(g_db, "blockbloom.filter-policy-stats") == NULL);
  second = blockbloom_filtered_db_open(options, NULL, bad, &err);
  if (second != NULL) leveldb_close(second);
  CHECK(second == NULL && err != NULL);
  leveldb_free(err);
  err = NULL;
  {
    leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
    leveldb_readoptions_t* ro = leveldb_readoptions_create();
    size_t len = 0;
    char* got = NULL;
    leveldb_put(g_db, wo, "k", 1, "v", 1, &err);
    if (err == NULL) got = leveldb_get(g_db, ro, "k", 1, &len, &err);
    leveldb_writeoptions_destroy(wo);
    leveldb_readoptions_destroy(ro);
    CHECK_NO_ERROR(err);
    CHECK(got != NULL && len == 1 && got[0] == 'v');
    leveldb_free(got);
  }
  CloseDb();
  blockbloom_filtered_db_destroy_db(options, bad, &err);
  CHECK_NO_ERROR(err);
  CHECK(!PathExists(bad));
  return 1;
}

static int TestErrors(void) {
  char path[4096], sub[4200];
  leveldb_options_t* options = leveldb_options_create();
  blockbloom_filtered_db_options_t* fdb = blockbloom_filtered_db_options_create();
  int ok = fdb != NULL && MakeTempDir(path, sizeof(path));
  if (ok) {
    ok = ErrorCases(path, options, fdb);
    snprintf(sub, sizeof(sub), "%s/db", path);
    RemoveDb(sub);
    snprintf(sub, sizeof(sub), "%s/missing", path);
    RemoveDb(sub);
    snprintf(sub, sizeof(sub), "%s/file", path);
    unlink(sub);
    if (rmdir(path) != 0) {
      fprintf(stderr, "%s left behind\n", path);
      ok = 0;
    }
  }
  blockbloom_filtered_db_options_destroy(fdb);
  blockbloom_filtered_db_options_destroy(NULL);
  leveldb_options_destroy(options);
  CHECK(ok);
  return 1;
}

/* blockbloom's definitions of leveldb_t / leveldb_options_t against the
 * loaded libleveldb, on a real database opened by leveldb_open. */
static int TestHandleLayout(void) {
  char path[4096];
  char* err = NULL;
  leveldb_options_t* options = leveldb_options_create();
  int ok;
  CHECK(MakeTempDir(path, sizeof(path)));
  ok = bbtest_leveldb_handles_match(path);
  leveldb_destroy_db(options, path, &err);
  leveldb_options_destroy(options);
  CHECK_NO_ERROR(err);
  CHECK(ok);
  CHECK(!PathExists(path));
  return 1;
}

/* One handle from several threads at once: two writers (disjoint keys, each
 * putting, overwriting and deleting), two readers (Gets of the writers' keys
 * and of never-written ones, blockbloom_is_filtered_db, "blockbloom.stats"),
 * and the main thread saving the index. Afterwards every key is as its
 * writer left it. */
enum { kWriters = 2, kReaders = 2, kKeysPerWriter = 600 };

struct WriterArgs {
  leveldb_t* db;
  int first; /* keys [first, first + kKeysPerWriter) */
  int failures;
};

struct ReaderArgs {
  leveldb_t* db;
  int seed;
  int failures;
};

static void* ConcurrentWriter(void* arg) {
  struct WriterArgs* w = (struct WriterArgs*)arg;
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_writebatch_t* batch = leveldb_writebatch_create();
  char key[32], value[64];
  int i;
  for (i = 0; i < kKeysPerWriter; ++i) {
    char* err = NULL;
    const int k = w->first + i;
    size_t n = Value(k, 1, value, sizeof(value));
    Key(k, key, sizeof(key));
    leveldb_put(w->db, wo, key, strlen(key), value, n, &err);
    if (i % 3 == 0 && err == NULL) leveldb_delete(w->db, wo, key, strlen(key), &err);
    if (i % 3 == 1 && err == NULL) { /* overwrite in a batch */
      n = Value(k, 2, value, sizeof(value));
      leveldb_writebatch_put(batch, key, strlen(key), value, n);
      leveldb_write(w->db, wo, batch, &err);
      leveldb_writebatch_clear(batch);
    }
    if (err != NULL) {
      ++w->failures;
      leveldb_free(err);
    }
  }
  leveldb_writebatch_destroy(batch);
  leveldb_writeoptions_destroy(wo);
  return NULL;
}

/* The version ConcurrentWriter leaves key k (>= first) at. */
static int WrittenVersion(int i) { return i % 3 == 0 ? 0 : i % 3 == 1 ? 2 : 1; }

static void* ConcurrentReader(void* arg) {
  struct ReaderArgs* r = (struct ReaderArgs*)arg;
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  char key[32], expected[64];
  unsigned x = (unsigned)r->seed * 2654435761u + 7;
  int g;
  for (g = 0; g < 3000; ++g) {
    char* err = NULL;
    size_t len = 0;
    char* got;
    int k;
    x = x * 1103515245u + 12345u;
    k = (int)((x >> 8) % (kWriters * kKeysPerWriter + 1000));
    Key(k, key, sizeof(key));
    got = leveldb_get(r->db, ro, key, strlen(key), &len, &err);
    if (err != NULL) {
      ++r->failures;
      leveldb_free(err);
    } else if (k >= kWriters * kKeysPerWriter) {
      if (got != NULL) ++r->failures; /* never written */
    } else if (got != NULL) {
      /* Written: any version the writer has stored may be seen. */
      const size_t n1 = Value(k, 1, expected, sizeof(expected));
      if (!(len == n1 && memcmp(got, expected, n1) == 0)) {
        const size_t n2 = Value(k, 2, expected, sizeof(expected));
        if (!(len == n2 && memcmp(got, expected, n2) == 0)) ++r->failures;
      }
    }
    leveldb_free(got);
    if (g % 500 == 0) {
      char* stats = (char*)leveldb_property_value(r->db, "blockbloom.stats");
      if (stats == NULL || blockbloom_is_filtered_db(r->db) != 1) ++r->failures;
      leveldb_free(stats);
    }
  }
  leveldb_readoptions_destroy(ro);
  return NULL;
}

static int ConcurrentCycle(const char* path, leveldb_options_t* options) {
  struct Oracle* oracle = (struct Oracle*)calloc(1, sizeof(struct Oracle));
  struct WriterArgs writers[kWriters];
  struct ReaderArgs readers[kReaders];
  pthread_t threads[kWriters + kReaders];
  int i, started = 0, failures = 0, saves = 0, rebuilds = 0;
  CHECK(oracle != NULL);
  g_db = OpenFiltered(path, blockbloom_index_dleft, 1, NULL, options);
  if (g_db == NULL) free(oracle);
  CHECK(g_db != NULL);
  for (i = 0; i < kWriters; ++i) {
    writers[i].db = g_db;
    writers[i].first = i * kKeysPerWriter;
    writers[i].failures = 0;
    if (pthread_create(&threads[started], NULL, ConcurrentWriter, &writers[i]) == 0) ++started;
  }
  for (i = 0; i < kReaders; ++i) {
    readers[i].db = g_db;
    readers[i].seed = i + 1;
    readers[i].failures = 0;
    if (pthread_create(&threads[started], NULL, ConcurrentReader, &readers[i]) == 0) ++started;
  }
  for (i = 0; i < 3; ++i) {
    char* err = NULL;
    blockbloom_filtered_db_save_index(g_db, &err);
    if (err == NULL) ++saves;
    leveldb_free(err);
    err = NULL;
    blockbloom_filtered_db_rebuild_index(g_db, &err);
    if (err == NULL) ++rebuilds;
    leveldb_free(err);
  }
  for (i = 0; i < started; ++i) pthread_join(threads[i], NULL);
  for (i = 0; i < kWriters; ++i) failures += writers[i].failures;
  for (i = 0; i < kReaders; ++i) failures += readers[i].failures;
  for (i = 0; i < kWriters * kKeysPerWriter; ++i) {
    oracle->version[i] = WrittenVersion(i % kKeysPerWriter);
  }
  i = started == kWriters + kReaders && failures == 0 && saves == 3 && rebuilds == 3 &&
      CheckAll(g_db, oracle, NULL) && CheckIteration(g_db, oracle);
  free(oracle);
  CHECK(started == kWriters + kReaders);
  CHECK(failures == 0);
  CHECK(saves == 3);
  CHECK(rebuilds == 3);
  CHECK(i);
  printf(
      "%d writers, %d readers, 3 index saves and rebuilds on one FilteredDB handle: "
      "all answers right\n",
      kWriters, kReaders);
  CloseDb();
  return 1;
}

static int TestConcurrent(void) {
  char path[4096];
  leveldb_options_t* options = leveldb_options_create();
  int ok = MakeTempDir(path, sizeof(path));
  if (ok) {
    leveldb_options_set_create_if_missing(options, 1);
    ok = ConcurrentCycle(path, options);
    RemoveDb(path);
  }
  leveldb_options_destroy(options);
  CHECK(ok);
  return 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "concurrent") == 0) {
    TestConcurrent();
  } else {
    TestHandleLayout();
    TestFilteredDb(blockbloom_index_dleft);
    TestFilteredDb(blockbloom_index_counting);
    TestErrors();
    TestConcurrent();
  }
  if (g_failures != 0) {
    fprintf(stderr, "c_api_test_filtered_db: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("c_api_test_filtered_db: all checks passed\n");
  return 0;
}
