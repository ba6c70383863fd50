// C-callable test support for tests/c_api_test.c (see c_api_test_support.h).
#include "c_api_test_support.h"

#include <cstdio>
#include <memory>
#include <string>

#include "c/c_api_internal.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "blockbloom/read_counting_env.h"
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

}  // extern "C"
