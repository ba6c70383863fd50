// FilteredDB against plain LevelDB on one warm database, side by side:
//   - Get of absent keys: LevelDB with its built-in Bloom filter
//     (leveldb::NewBloomFilterPolicy(10)) vs the same DB behind FilteredDB
//     (d-left and counting index);
//   - Get of present keys (the index costs one probe more);
//   - Put of new keys (the write overhead: presence check + index insert);
//   - index memory per key (counter "index_bytes_per_key").
//
//   build/bench/filtered_db_bench --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
//   BLOCKBLOOM_BENCH_QUICK=1 build/bench/filtered_db_bench   # 20,000 keys, for CI
//
// The database (1,000,000 keys of 16 bytes, 100-byte values, compacted) is
// built once under $TMPDIR (or /tmp) and removed at exit.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "blockbloom/filtered_db.h"
#include "leveldb/cache.h"
#include "leveldb/filter_policy.h"
#include "leveldb/write_batch.h"

namespace {

using blockbloom::FilteredDB;
using blockbloom::IndexKind;

std::string Key(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%013llu", static_cast<unsigned long long>(i));
  return buf;
}

bool Quick() { return std::getenv("BLOCKBLOOM_BENCH_QUICK") != nullptr; }
uint64_t NumKeys() { return Quick() ? 20000 : 1000000; }

// Present keys: Key(2i) for i < n. Absent keys: Key(2i + 1). New keys for Put:
// Key(10^12 + ...), never read.
struct Env {
  std::string path;
  std::unique_ptr<const leveldb::FilterPolicy> policy{leveldb::NewBloomFilterPolicy(10)};
  leveldb::Options options;
  std::unique_ptr<FilteredDB> db;
  IndexKind kind = IndexKind::kDleft;
  uint64_t next_new_key = 1000000000000ull;

  Env() {
    const char* tmp = std::getenv("TMPDIR");
    path = std::string(tmp ? tmp : "/tmp") + "/blockbloom_filtered_db_bench";
    leveldb::DestroyDB(path, leveldb::Options());
    options.create_if_missing = true;
    options.filter_policy = policy.get();
    {
      leveldb::DB* raw = nullptr;
      if (!leveldb::DB::Open(options, path, &raw).ok()) std::abort();
      std::unique_ptr<leveldb::DB> plain(raw);
      const std::string value(100, 'v');
      for (uint64_t i = 0; i < NumKeys();) {
        leveldb::WriteBatch batch;
        for (int j = 0; j < 1000 && i < NumKeys(); ++j, ++i) batch.Put(Key(2 * i), value);
        if (!plain->Write(leveldb::WriteOptions(), &batch).ok()) std::abort();
      }
      plain->CompactRange(nullptr, nullptr);
    }
    Reopen(IndexKind::kDleft);
  }
  ~Env() {
    db.reset();
    leveldb::DestroyDB(path, leveldb::Options());
  }
  void Reopen(IndexKind k) {
    db.reset();
    blockbloom::FilteredDBOptions index_options;
    index_options.kind = k;
    index_options.expected_keys = NumKeys();
    if (!FilteredDB::Open(index_options, options, path, &db).ok()) std::abort();
    kind = k;
    // Warm: table cache, index and filter blocks of every table.
    std::string value;
    for (uint64_t i = 0; i < NumKeys(); i += 7) {
      db->base()->Get(leveldb::ReadOptions(), Key(2 * i + 1), &value);
      db->base()->Get(leveldb::ReadOptions(), Key(2 * i), &value);
    }
  }
};

Env& GetEnv(IndexKind kind) {
  static Env* env = new Env();  // leaked on purpose: lives until exit
  if (env->kind != kind) env->Reopen(kind);
  return *env;
}

enum Mode { kPlain = 0, kDleft = 1, kCounting = 2 };

IndexKind KindOf(int mode) { return mode == kCounting ? IndexKind::kCounting : IndexKind::kDleft; }

void AddIndexCounters(benchmark::State& state, FilteredDB& db) {
  const blockbloom::FilteredDBStats s = db.index_stats();
  state.counters["index_bytes_per_key"] = s.keys ? static_cast<double>(s.memory_bytes) / s.keys : 0;
  state.counters["index_est_fpr"] = s.estimated_fpr;
}

void BM_GetAbsent(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));
  Env& env = GetEnv(KindOf(mode));
  std::string value;
  uint64_t i = 0, found = 0;
  const uint64_t n = NumKeys();
  for (auto _ : state) {
    const std::string key = Key(2 * (i++ * 7919 % n) + 1);
    const leveldb::Status s = mode == kPlain
                                  ? env.db->base()->Get(leveldb::ReadOptions(), key, &value)
                                  : env.db->Get(leveldb::ReadOptions(), key, &value);
    found += s.ok();
  }
  if (found != 0) state.SkipWithError("absent key found");
  if (mode != kPlain) AddIndexCounters(state, *env.db);
}

void BM_GetPresent(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));
  Env& env = GetEnv(KindOf(mode));
  std::string value;
  uint64_t i = 0, missing = 0;
  const uint64_t n = NumKeys();
  for (auto _ : state) {
    const std::string key = Key(2 * (i++ * 7919 % n));
    const leveldb::Status s = mode == kPlain
                                  ? env.db->base()->Get(leveldb::ReadOptions(), key, &value)
                                  : env.db->Get(leveldb::ReadOptions(), key, &value);
    missing += !s.ok();
  }
  if (missing != 0) state.SkipWithError("present key missing");
}

void BM_PutNew(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));
  Env& env = GetEnv(KindOf(mode));
  const std::string value(100, 'v');
  for (auto _ : state) {
    const std::string key = Key(env.next_new_key++);
    const leveldb::Status s =
        mode == kPlain ? env.db->base()->Put(leveldb::WriteOptions(), key, value)
                       : env.db->Put(leveldb::WriteOptions(), key, value);
    if (!s.ok()) state.SkipWithError("put failed");
  }
  if (mode != kPlain) AddIndexCounters(state, *env.db);
}

// Order matters only for cost: benchmarks sharing an index kind run together.
// Plain-LevelDB Puts (which bypass the index) go to a key range never read.
BENCHMARK(BM_GetAbsent)->Arg(kPlain)->Arg(kDleft);
BENCHMARK(BM_GetPresent)->Arg(kPlain)->Arg(kDleft);
BENCHMARK(BM_PutNew)->Arg(kPlain)->Arg(kDleft);
BENCHMARK(BM_GetAbsent)->Arg(kCounting);
BENCHMARK(BM_GetPresent)->Arg(kCounting);
BENCHMARK(BM_PutNew)->Arg(kCounting);

}  // namespace

BENCHMARK_MAIN();
