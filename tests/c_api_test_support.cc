// C-callable test support for tests/c_api_test.c (see c_api_test_support.h).
#include "c_api_test_support.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "blockbloom/c.h"
#include "c/c_api_internal.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "testing/read_counting_env.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/env.h"
#include "leveldb/filter_policy.h"

namespace {

// leveldb/c.h keeps leveldb_env_t opaque. LevelDB's c.cc defines it as
// { Env* rep; bool is_default; } and every release since 2011 has kept that
// layout. We only read and write the first member (a standard-layout
// struct's address is its first member's), on an object c.cc allocated, and
// check that the guess holds before relying on it: the default env's first
// member must be Env::Default().
leveldb::Env** RepOf(leveldb_env_t* env) { return reinterpret_cast<leveldb::Env**>(env); }

}  // namespace

extern "C" {

leveldb_env_t* bbtest_counting_env_create(void) {
  leveldb_env_t* env = leveldb_create_default_env();
  if (*RepOf(env) != leveldb::Env::Default()) {
    leveldb_env_destroy(env);
    return nullptr;
  }
  // c.cc marks this env "default", so leveldb_env_destroy would not delete
  // rep; bbtest_counting_env_destroy deletes it and restores the default.
  *RepOf(env) = new blockbloom::ReadCountingEnv(leveldb::Env::Default());
  return env;
}

uint64_t bbtest_counting_env_reads(leveldb_env_t* env) {
  return static_cast<blockbloom::ReadCountingEnv*>(*RepOf(env))->reads();
}

void bbtest_counting_env_reset(leveldb_env_t* env) {
  static_cast<blockbloom::ReadCountingEnv*>(*RepOf(env))->ResetReads();
}

void bbtest_counting_env_destroy(leveldb_env_t* env) {
  if (env == nullptr) return;
  delete static_cast<blockbloom::ReadCountingEnv*>(*RepOf(env));
  *RepOf(env) = leveldb::Env::Default();
  leveldb_env_destroy(env);
}

int bbtest_fallback_filter_may_match(void) {
  const leveldb::Slice filter(blockbloom::capi_internal::kMayMatchFilter,
                              blockbloom::capi_internal::kMayMatchFilterBytes);
  std::unique_ptr<const leveldb::FilterPolicy> policies[] = {
      std::unique_ptr<const leveldb::FilterPolicy>(blockbloom::NewBlockedBloomFilterPolicy(10)),
      std::unique_ptr<const leveldb::FilterPolicy>(blockbloom::NewCompactFilterPolicy(10)),
      std::unique_ptr<const leveldb::FilterPolicy>(blockbloom::NewMigratingFilterPolicy(10)),
      std::unique_ptr<const leveldb::FilterPolicy>(blockbloom::NewMigratingCompactFilterPolicy(10)),
      std::unique_ptr<const leveldb::FilterPolicy>(leveldb::NewBloomFilterPolicy(10)),
  };
  const char* keys[] = {"", "a", "key00000001", "user0000000000000007"};
  for (const auto& policy : policies) {
    for (const char* key : keys) {
      if (!policy->KeyMayMatch(key, filter)) return 0;
    }
  }
  return 1;
}

double bbtest_cpp_reads_per_absent_get(const char* path, int kind, int num_keys) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(
      kind == 0 ? blockbloom::NewBlockedBloomFilterPolicy(10)
                : blockbloom::NewCompactFilterPolicy(10));
  blockbloom::ReadCountingEnv env;
  std::unique_ptr<leveldb::Cache> cache(leveldb::NewLRUCache(0));
  leveldb::Options options;
  options.filter_policy = policy.get();
  options.env = &env;
  options.block_cache = cache.get();
  leveldb::DB* raw = nullptr;
  if (!leveldb::DB::Open(options, path, &raw).ok()) return -1;
  std::unique_ptr<leveldb::DB> db(raw);
  std::string value;
  char key[32];
  for (int i = 0; i < num_keys; ++i) {  // opens every table, checks every key
    std::snprintf(key, sizeof(key), "key%010d", 2 * i);
    if (!db->Get(leveldb::ReadOptions(), key, &value).ok()) return -1;
  }
  env.ResetReads();
  for (int i = 0; i < num_keys; ++i) {
    std::snprintf(key, sizeof(key), "key%010d", 2 * i + 1);
    if (!db->Get(leveldb::ReadOptions(), key, &value).IsNotFound()) return -1;
  }
  return num_keys > 0 ? static_cast<double>(env.reads()) / num_keys : 0;
}

int bbtest_leveldb_handles_match(const char* path) {
  const auto fail = [](const char* what) {
    std::fprintf(stderr, "bbtest_leveldb_handles_match: %s\n", what);
    return 0;
  };
  if (!blockbloom::capi_internal::CheckLevelDBHandleLayout()) return fail("run-time check failed");
  leveldb_options_t* options = leveldb_options_create();
  leveldb_options_set_create_if_missing(options, 1);
  leveldb_options_set_write_buffer_size(options, 1234567);
  leveldb_options_set_block_size(options, 8191);
  leveldb_options_set_max_open_files(options, 99);
  const bool options_ok = options->rep.create_if_missing &&
                          options->rep.write_buffer_size == 1234567 &&
                          options->rep.block_size == 8191 && options->rep.max_open_files == 99;
  char* err = nullptr;
  leveldb_t* db = options_ok ? leveldb_open(options, path, &err) : nullptr;
  leveldb_options_destroy(options);
  if (!options_ok) return fail("options set through C do not read back through Options");
  if (db == nullptr) {
    std::fprintf(stderr, "leveldb_open %s: %s\n", path, err != nullptr ? err : "?");
    leveldb_free(err);
    return fail("leveldb_open failed");
  }
  const char* what = nullptr;
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_put(db, wo, "from-c", 6, "c-value", 7, &err);
  leveldb_writeoptions_destroy(wo);
  std::string value;
  if (err != nullptr) {
    what = "leveldb_put failed";
  } else if (db->rep == nullptr) {
    what = "rep is null";
  } else if (!db->rep->Get(leveldb::ReadOptions(), "from-c", &value).ok() || value != "c-value") {
    what = "rep->Get does not see leveldb_put's value";
  } else if (!db->rep->Put(leveldb::WriteOptions(), "from-cpp", "cpp-value").ok()) {
    what = "rep->Put failed";
  } else {
    leveldb_readoptions_t* ro = leveldb_readoptions_create();
    size_t len = 0;
    char* got = leveldb_get(db, ro, "from-cpp", 8, &len, &err);
    leveldb_readoptions_destroy(ro);
    if (got == nullptr || std::string(got, len) != "cpp-value") {
      what = "leveldb_get does not see rep->Put's value";
    } else {
      std::string property;
      char* c_property = leveldb_property_value(db, "leveldb.sstables");
      if (!db->rep->GetProperty("leveldb.sstables", &property) || c_property == nullptr ||
          property != c_property) {
        what = "rep->GetProperty disagrees with leveldb_property_value";
      } else if (blockbloom::capi_internal::IsFilteredDBHandle(db) ||
                 blockbloom_is_filtered_db(db) != 0) {
        what = "a leveldb_open handle is taken for a FilteredDB";
      }
      leveldb_free(c_property);
    }
    leveldb_free(got);
  }
  leveldb_free(err);
  leveldb_close(db);
  return what == nullptr ? 1 : fail(what);
}

}  // extern "C"
