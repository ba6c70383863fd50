// blockbloom-demo: a real LevelDB database on disk, Gets of absent and present
// keys with (a) no filter, (b) LevelDB's built-in Bloom filter and (c)
// blockbloom's blocked Bloom filter, at the same bits per key. One table out.
//
//   blockbloom-demo                       # 1,000,000 keys in a temp directory
//
// Rows: no filter; LevelDB's built-in Bloom filter; blockbloom's blocked Bloom
// filter; blockbloom's compact (Golomb-Rice) filter at the same bits per key
// and at the bits per key that matches the blocked filter's FPR; and the
// blocked filter behind FilteredDB's delete-aware d-left key index, which
// answers most absent Gets from memory.
//   blockbloom-demo --keys=200000 --gets=20000 --value_size=400
//
// Columns:
//   filter B/key   filter bytes per key, from every CreateFilter call
//   FPR            share of filter probes for absent keys that said "may match"
//   reads/absent   data-block reads (RandomAccessFile::Read) per absent Get
//   absent p50/p99 Get latency of absent keys (us); present likewise
//   build ns/key   CreateFilter time per key
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/compact_filter.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/filtered_db.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "blockbloom/math.h"
#include "blocked_bloom_simd.h"
#include "demo_support.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"

ABSL_FLAG(int64_t, keys, 1000000, "keys loaded into each database");
ABSL_FLAG(int64_t, gets, 100000, "absent and present Gets timed per configuration");
ABSL_FLAG(int32_t, value_size, 100, "bytes per value");
ABSL_FLAG(double, bits_per_key, 10.0, "filter bits per key (both filters)");
ABSL_FLAG(int64_t, block_cache_mb, 0,
          "LevelDB block cache; 0 disables it, so every data block needed is read");
ABSL_FLAG(std::string, dir, "", "where to create the databases (default: a temp dir)");
ABSL_FLAG(bool, keep, false,
          "keep the databases (in --dir/0, /1, ... in row order) for a look, e.g.\n"
          "`blockbloom inspect DIR/2`");

namespace blockbloom {
namespace demo {
namespace {

using Clock = std::chrono::steady_clock;

struct Row {
  std::string name;
  FilterStats filter;
  uint64_t index_bytes = 0;  // FilteredDB's in-memory index, when used
  double reads_per_absent = 0;
  LatencySummary absent, present;
};

// One configuration: a filter policy (or none), optionally behind FilteredDB.
struct Config {
  std::string name;
  const leveldb::FilterPolicy* policy;
  bool index;
};

Row RunConfig(const Config& config, const std::string& path) {
  const int64_t num_keys = absl::GetFlag(FLAGS_keys);
  const int64_t num_gets = std::min(absl::GetFlag(FLAGS_gets), num_keys);
  Row row;
  row.name = config.name;
  CountingPolicy policy(config.policy);
  ReadCountingEnv env;
  std::unique_ptr<leveldb::Cache> cache;
  leveldb::Options options;
  options.create_if_missing = true;
  options.env = &env;
  options.filter_policy = config.policy != nullptr ? &policy : nullptr;
  const int64_t cache_bytes = absl::GetFlag(FLAGS_block_cache_mb) << 20;
  cache.reset(leveldb::NewLRUCache(static_cast<size_t>(cache_bytes)));
  options.block_cache = cache.get();
  leveldb::DestroyDB(path, leveldb::Options());
  std::unique_ptr<leveldb::DB> plain;
  std::unique_ptr<FilteredDB> filtered;
  leveldb::Status s;
  if (config.index) {
    FilteredDBOptions index;
    index.expected_keys = static_cast<uint64_t>(num_keys);
    index.kind = IndexKind::kDleft;
    s = FilteredDB::Open(index, options, path, &filtered);
  } else {
    leveldb::DB* raw = nullptr;
    s = leveldb::DB::Open(options, path, &raw);
    plain.reset(raw);
  }
  if (!s.ok()) Die("open " + path + ": " + s.ToString());
  Store db{
      [&](leveldb::WriteBatch* batch) {
        return filtered ? filtered->Write(leveldb::WriteOptions(), batch)
                        : plain->Write(leveldb::WriteOptions(), batch);
      },
      [&](const std::string& key, std::string* value) {
        return filtered ? filtered->Get(leveldb::ReadOptions(), key, value)
                        : plain->Get(leveldb::ReadOptions(), key, value);
      },
      [&] { (filtered ? static_cast<leveldb::DB*>(filtered.get()) : plain.get())->CompactRange(nullptr, nullptr); },
  };

  Load(db, num_keys, absl::GetFlag(FLAGS_value_size), config.name);
  row.filter = policy.Snapshot();

  // Sample keys: present = even indices, absent = odd ones, in random order.
  std::mt19937_64 rng(42);
  std::vector<int64_t> present(num_gets), absent(num_gets);
  for (int64_t i = 0; i < num_gets; ++i) {
    present[i] = static_cast<int64_t>(rng() % num_keys);
    absent[i] = static_cast<int64_t>(rng() % num_keys);
  }
  std::string value;
  // Warm-up: opens every table (index and filter blocks are read then).
  for (int64_t i = 0; i < std::min<int64_t>(num_gets, 20000); ++i) {
    db.get(DemoKey(present[i], true), &value);
  }
  policy.ResetProbes();
  env.ResetReads();
  std::vector<double> micros(num_gets);
  for (int64_t i = 0; i < num_gets; ++i) {
    const std::string key = DemoKey(absent[i], false);
    const auto start = Clock::now();
    s = db.get(key, &value);
    micros[i] = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (!s.IsNotFound()) Die("absent key found or error: " + s.ToString());
  }
  row.reads_per_absent = static_cast<double>(env.reads()) / num_gets;
  row.filter.fpr = policy.ProbeFpr();
  row.absent = Summarize(&micros);
  for (int64_t i = 0; i < num_gets; ++i) {
    const std::string key = DemoKey(present[i], true);
    const auto start = Clock::now();
    s = db.get(key, &value);
    micros[i] = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (!s.ok()) Die("present key missing: " + key + " " + s.ToString());
  }
  row.present = Summarize(&micros);
  if (filtered) row.index_bytes = filtered->index_stats().memory_bytes;
  filtered.reset();
  plain.reset();
  if (!absl::GetFlag(FLAGS_keep)) leveldb::DestroyDB(path, leveldb::Options());
  return row;
}

int Main() {
  std::string dir = absl::GetFlag(FLAGS_dir);
  std::unique_ptr<TempDir> temp;
  if (dir.empty()) {
    if (absl::GetFlag(FLAGS_keep)) Die("--keep needs --dir");
    temp = std::make_unique<TempDir>();
    dir = temp->path();
  }
  const double bpk = absl::GetFlag(FLAGS_bits_per_key);
  std::printf("blockbloom demo: %lld keys, %d-byte values, %lld Gets per row, "
              "block cache %lld MiB, %.1f bits/key, SIMD target %s\n",
              static_cast<long long>(absl::GetFlag(FLAGS_keys)), absl::GetFlag(FLAGS_value_size),
              static_cast<long long>(absl::GetFlag(FLAGS_gets)),
              static_cast<long long>(absl::GetFlag(FLAGS_block_cache_mb)), bpk,
              simd::ActiveTargetName().c_str());
  std::unique_ptr<const leveldb::FilterPolicy> builtin(leveldb::NewBloomFilterPolicy(
      static_cast<int>(bpk)));
  std::unique_ptr<const leveldb::FilterPolicy> blocked(NewBlockedBloomFilterPolicy(bpk));
  std::unique_ptr<const leveldb::FilterPolicy> compact(NewCompactFilterPolicy(bpk));
  // The compact filter's bits per key for the blocked filter's FPR: the
  // memory it needs to match, not beat, the Bloom filter (~100-key filters).
  const double target = BlockedBloomFpr(ClampBitsPerKey(bpk), BlockedBloomProbes(bpk));
  double equal_fpr_bpk = bpk;
  while (equal_fpr_bpk > 2 && CompactFilterPredictedFpr(100, equal_fpr_bpk - 0.05) <= target) {
    equal_fpr_bpk -= 0.05;
  }
  std::unique_ptr<const leveldb::FilterPolicy> compact_equal_fpr(
      NewCompactFilterPolicy(equal_fpr_bpk));
  const std::vector<Config> configs = {
      {"no filter", nullptr, false},
      {"leveldb built-in bloom", builtin.get(), false},
      {"blockbloom blocked bloom", blocked.get(), false},
      {"blockbloom compact", compact.get(), false},
      {Format("compact @ %.2f bits/key", equal_fpr_bpk), compact_equal_fpr.get(), false},
      {"blocked + FilteredDB index", blocked.get(), true},
  };
  std::vector<Row> rows;
  for (const Config& config : configs) {
    rows.push_back(RunConfig(config, dir + "/" + std::to_string(rows.size())));
  }

  std::printf("\n| %-26s | %8s | %7s | %12s | %8s | %8s | %8s | %8s | %9s |\n", "filter",
              "B/key", "FPR", "reads/absent", "abs p50", "abs p99", "pres p50", "pres p99",
              "build ns");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", std::string(28, '-').c_str(),
              std::string(10, '-').c_str(), std::string(9, '-').c_str(),
              std::string(14, '-').c_str(), std::string(10, '-').c_str(),
              std::string(10, '-').c_str(), std::string(10, '-').c_str(),
              std::string(10, '-').c_str(), std::string(11, '-').c_str());
  for (const Row& r : rows) {
    const bool has = r.filter.keys > 0;
    std::printf("| %-26s | %8s | %7s | %12.4f | %6.2fus | %6.2fus | %6.2fus | %6.2fus | %9s |\n",
                r.name.c_str(), has ? Format("%.3f", r.filter.BytesPerKey()).c_str() : "-",
                has && !std::isnan(r.filter.fpr) ? Format("%.3f%%", 100 * r.filter.fpr).c_str() : "-", r.reads_per_absent,
                r.absent.p50, r.absent.p99, r.present.p50, r.present.p99,
                has ? Format("%.1f", r.filter.NanosPerKey()).c_str() : "-");
  }
  std::printf("\nreads/absent: data-block reads per Get of an absent key (block cache %s).\n",
              absl::GetFlag(FLAGS_block_cache_mb) == 0 ? "off" : "on");
  for (const Row& r : rows) {
    if (r.index_bytes == 0) continue;
    std::printf("%s: FPR is of the filter probes that got past the index; the d-left index "
                "itself holds %.2f bytes/key in memory.\n",
                r.name.c_str(), static_cast<double>(r.index_bytes) / absl::GetFlag(FLAGS_keys));
  }
  return 0;
}

}  // namespace
}  // namespace demo
}  // namespace blockbloom

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Compares LevelDB Gets with no filter, LevelDB's built-in Bloom filter and "
      "blockbloom's blocked Bloom filter on a real database on disk.");
  absl::ParseCommandLine(argc, argv);
  return blockbloom::demo::Main();
}
