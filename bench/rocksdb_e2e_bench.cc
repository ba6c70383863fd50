// rocksdb_e2e_bench: LevelDB + blockbloom against RocksDB, the engine a user
// would switch to, on the same keys, values and bits per key.
//
//   rocksdb_e2e_bench                      # 1,000,000 keys, a few minutes
//   rocksdb_e2e_bench --quick              # 50,000 keys (a smoke test)
//   rocksdb_e2e_bench --json=bench/results/rocksdb_e2e.json
//
// Contenders (each its own database on disk, --bits_per_key = 10 unless told):
//   leveldb built-in     LevelDB 1.23, leveldb::NewBloomFilterPolicy
//   leveldb + blocked    LevelDB, blockbloom::NewBlockedBloomFilterPolicy
//   leveldb + compact    LevelDB, blockbloom::NewCompactFilterPolicy
//   leveldb + FilteredDB LevelDB, blocked policy behind FilteredDB's d-left
//                        index (answers most absent Gets from memory)
//   rocksdb bloom        RocksDB 7.8 block-based table, full filter,
//                        rocksdb::NewBloomFilterPolicy(bits, false)
//                        (FastLocalBloom, format_version 5)
//   rocksdb ribbon       rocksdb::NewRibbonFilterPolicy(bits, -1): Ribbon at
//                        the FPR of a Bloom filter of `bits` bits/key
//
// Workload: keys "user%016d" (20 bytes; even numbers present, odd absent, so
// every absent key falls inside a table's key range and only the filter can
// spare the read), --value_size-byte values (default 100), written in a
// random order in batches of 1,000 (WAL on, no sync), then fully compacted.
// Snappy compression and 4 KiB data blocks in both engines; everything else
// is each engine's default (RocksDB: 64 MiB memtable, 2 background jobs;
// LevelDB: 4 MiB memtable, one background thread).
//
// Measured (one thread):
//   filter B/key      filter bytes per key: RocksDB from its table
//                     properties (filter_size / num_entries); LevelDB from the
//                     filters its policy returned, plus (column "block") the
//                     filter block's 4-byte offset per 2 KiB of table data
//                     (an estimate from the table files' sizes)
//   reads/absent      data-block reads per Get of an absent key, counted
//                     exactly: RocksDB's perf context block_read_count
//                     (index and filter blocks live in the table readers:
//                     cache_index_and_filter_blocks=false), LevelDB's
//                     RandomAccessFile::Read calls after every table is open
//   absent/present    Get latency p50/p99 (us) with the block cache off in
//                     both engines (RocksDB no_block_cache; LevelDB a 0-byte
//                     LRU cache), table files in the page cache
//   cold absent/s     absent Gets per second with every table file dropped
//                     from the page cache (posix_fadvise DONTNEED) before
//                     each of --cold_runs runs of --cold_ms; median. LevelDB
//                     reads tables with pread here (demo_support.h PreadEnv)
//                     so the drop takes; RocksDB does by default.
//   fill keys/s       keys written per second (load only) and with the
//                     final full compaction included
//
// Fails (exit 1) on any wrong answer: a present key missing, an absent key
// found, an error.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/filtered_db.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "demo_support.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"
#include "leveldb/write_batch.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/perf_context.h"
#include "rocksdb/perf_level.h"
#include "rocksdb/table.h"
#include "rocksdb/table_properties.h"
#include "rocksdb/version.h"

ABSL_FLAG(bool, quick, false, "50,000 keys and 5,000 Gets: a smoke test");
ABSL_FLAG(int64_t, keys, 1000000, "keys per database");
ABSL_FLAG(int64_t, gets, 100000, "timed absent and present Gets per contender");
ABSL_FLAG(int32_t, value_size, 100, "bytes per value");
ABSL_FLAG(double, bits_per_key, 10.0, "filter bits per key, every contender");
ABSL_FLAG(int32_t, cold_runs, 3, "cold-cache runs per contender (0 skips)");
ABSL_FLAG(int32_t, cold_ms, 200, "length of one cold run (ms)");
ABSL_FLAG(std::string, dir, "", "where to create the databases (default: a temp dir)");
ABSL_FLAG(std::string, json, "", "also write the results as JSON to this file");

namespace blockbloom {
namespace e2e {
namespace {

using demo::Die;
using demo::Format;
using Clock = std::chrono::steady_clock;
using KeyValues = std::vector<std::pair<std::string, std::string>>;

// What the benchmark needs of an engine.
class Engine {
 public:
  virtual ~Engine() = default;
  virtual void Write(const KeyValues& batch) = 0;
  // True if found; dies on an error.
  virtual bool Get(const std::string& key, std::string* value) = 0;
  virtual void CompactAll() = 0;
  // Data-block reads since construction (see the header comment).
  virtual uint64_t DataBlockReads() = 0;
  // Filter bytes per key: the filters alone, and the whole filter block.
  virtual std::pair<double, double> FilterBytesPerKey(int64_t num_keys) = 0;
};

class LevelDbEngine final : public Engine {
 public:
  LevelDbEngine(const leveldb::FilterPolicy* policy, bool filtered_db, const std::string& path,
                int64_t num_keys)
      : policy_(policy), env_(&pread_env_), cache_(leveldb::NewLRUCache(0)), path_(path) {
    leveldb::Options options;
    options.create_if_missing = true;
    options.error_if_exists = true;
    options.env = &env_;
    options.block_cache = cache_.get();
    options.filter_policy = policy != nullptr ? &policy_ : nullptr;
    leveldb::Status s;
    if (filtered_db) {
      FilteredDBOptions fdb_options;
      fdb_options.expected_keys = static_cast<uint64_t>(num_keys);
      fdb_options.kind = IndexKind::kDleft;
      fdb_options.persist_index = false;  // the bench destroys the database
      s = FilteredDB::Open(fdb_options, options, path, &filtered_);
    } else {
      leveldb::DB* raw = nullptr;
      s = leveldb::DB::Open(options, path, &raw);
      plain_.reset(raw);
    }
    if (!s.ok()) Die("open " + path + ": " + s.ToString());
  }
  ~LevelDbEngine() override {
    filtered_.reset();
    plain_.reset();
    leveldb::DestroyDB(path_, leveldb::Options());
  }
  void Write(const KeyValues& kvs) override {
    leveldb::WriteBatch batch;
    for (const auto& [key, value] : kvs) batch.Put(key, value);
    const leveldb::Status s = filtered_ ? filtered_->Write(leveldb::WriteOptions(), &batch)
                                        : plain_->Write(leveldb::WriteOptions(), &batch);
    if (!s.ok()) Die("leveldb write: " + s.ToString());
  }
  bool Get(const std::string& key, std::string* value) override {
    const leveldb::Status s = filtered_ ? filtered_->Get(leveldb::ReadOptions(), key, value)
                                        : plain_->Get(leveldb::ReadOptions(), key, value);
    if (!s.ok() && !s.IsNotFound()) Die("leveldb get: " + s.ToString());
    return s.ok();
  }
  void CompactAll() override {
    (filtered_ ? static_cast<leveldb::DB*>(filtered_.get()) : plain_.get())
        ->CompactRange(nullptr, nullptr);
  }
  uint64_t DataBlockReads() override { return env_.reads(); }
  std::pair<double, double> FilterBytesPerKey(int64_t) override {
    const demo::FilterStats stats = policy_.Snapshot();
    if (stats.keys == 0) return {0, 0};
    // LevelDB's filter block: the filters, then a 4-byte offset per 2 KiB
    // (kFilterBase) of table data, then 5 bytes. Compaction rewrote every
    // key, so divide by the keys in the final tables.
    uint64_t table_bytes = 0, live_keys = 0;
    std::error_code ec;
    for (const std::string& f : demo::TableFiles(path_)) {
      table_bytes += std::filesystem::file_size(f, ec);
    }
    live_keys = static_cast<uint64_t>(absl::GetFlag(FLAGS_keys));
    const double filters = stats.BytesPerKey();
    const double offsets = 4.0 * static_cast<double>(table_bytes / 2048) /
                           static_cast<double>(std::max<uint64_t>(live_keys, 1));
    return {filters, filters + offsets};
  }

 private:
  demo::CountingPolicy policy_;
  demo::PreadEnv pread_env_;
  ReadCountingEnv env_;
  std::unique_ptr<leveldb::Cache> cache_;
  std::string path_;
  std::unique_ptr<leveldb::DB> plain_;
  std::unique_ptr<FilteredDB> filtered_;
};

class RocksDbEngine final : public Engine {
 public:
  RocksDbEngine(bool ribbon, double bits_per_key, const std::string& path) : path_(path) {
    rocksdb::BlockBasedTableOptions table;
    table.filter_policy.reset(ribbon ? rocksdb::NewRibbonFilterPolicy(bits_per_key, -1)
                                     : rocksdb::NewBloomFilterPolicy(bits_per_key, false));
    table.no_block_cache = true;                  // as LevelDB's 0-byte cache
    table.cache_index_and_filter_blocks = false;  // held by the table readers
    table.block_size = 4096;
    options_.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    options_.create_if_missing = true;
    options_.error_if_exists = true;
    options_.compression = rocksdb::kSnappyCompression;
    rocksdb::DB* raw = nullptr;
    const rocksdb::Status s = rocksdb::DB::Open(options_, path, &raw);
    if (!s.ok()) Die("open " + path + ": " + s.ToString());
    db_.reset(raw);
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    rocksdb::get_perf_context()->Reset();
  }
  ~RocksDbEngine() override {
    db_.reset();
    rocksdb::DestroyDB(path_, options_);
  }
  void Write(const KeyValues& kvs) override {
    rocksdb::WriteBatch batch;
    for (const auto& [key, value] : kvs) batch.Put(key, value);
    const rocksdb::Status s = db_->Write(rocksdb::WriteOptions(), &batch);
    if (!s.ok()) Die("rocksdb write: " + s.ToString());
  }
  bool Get(const std::string& key, std::string* value) override {
    const rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), key, value);
    if (!s.ok() && !s.IsNotFound()) Die("rocksdb get: " + s.ToString());
    return s.ok();
  }
  void CompactAll() override {
    rocksdb::CompactRangeOptions options;
    options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    const rocksdb::Status s = db_->CompactRange(options, nullptr, nullptr);
    if (!s.ok()) Die("rocksdb compact: " + s.ToString());
  }
  // This thread's perf context: the Gets all run on the main thread.
  uint64_t DataBlockReads() override {
    const rocksdb::PerfContext* p = rocksdb::get_perf_context();
    return p->block_read_count - p->index_block_read_count - p->filter_block_read_count -
           p->compression_dict_block_read_count;
  }
  std::pair<double, double> FilterBytesPerKey(int64_t) override {
    rocksdb::TablePropertiesCollection props;
    const rocksdb::Status s = db_->GetPropertiesOfAllTables(&props);
    if (!s.ok()) Die("rocksdb properties: " + s.ToString());
    uint64_t filter = 0, entries = 0;
    for (const auto& [file, p] : props) {
      filter += p->filter_size;
      entries += p->num_entries;
    }
    const double per_key = entries ? static_cast<double>(filter) / entries : 0;
    return {per_key, per_key};  // one full filter per table: the block is the filter
  }

 private:
  std::string path_;
  rocksdb::Options options_;
  std::unique_ptr<rocksdb::DB> db_;
};

struct Result {
  std::string name;
  double filter_bpk = 0, filter_block_bpk = 0;
  double reads_per_absent = 0, reads_per_present = 0;
  demo::LatencySummary absent, present;
  double cold_absent_per_s = std::nan(""), cold_reads_per_absent = std::nan("");
  double fill_keys_per_s = 0, fill_compact_keys_per_s = 0;
};

// Present keys are DemoKey(i, true), i in [0, n); absent ones DemoKey(i, false).
Result Run(const std::string& name, Engine* db, const std::string& path, int64_t n, int64_t gets) {
  Result r;
  r.name = name;
  std::fprintf(stderr, "%-22s loading %lld keys...\n", name.c_str(), static_cast<long long>(n));
  // The same random order for every contender.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  std::string value(static_cast<size_t>(absl::GetFlag(FLAGS_value_size)), 'v');
  const auto start = Clock::now();
  KeyValues batch;
  for (size_t j = 0; j < order.size(); ++j) {
    const int64_t i = order[j];
    for (size_t b = 0; b < value.size(); b += 8) value[b] = static_cast<char>('a' + (i + b) % 26);
    batch.emplace_back(demo::DemoKey(i, true), value);
    if (batch.size() == 1000 || j + 1 == order.size()) {
      db->Write(batch);
      batch.clear();
    }
  }
  const double load_s = std::chrono::duration<double>(Clock::now() - start).count();
  db->CompactAll();
  const double total_s = std::chrono::duration<double>(Clock::now() - start).count();
  r.fill_keys_per_s = n / load_s;
  r.fill_compact_keys_per_s = n / total_s;
  std::tie(r.filter_bpk, r.filter_block_bpk) = db->FilterBytesPerKey(n);

  std::mt19937_64 rng(42);
  std::string got;
  // Warm-up: every table open (LevelDB reads index and filter blocks then).
  for (int64_t i = 0; i < std::min<int64_t>(n, 20000); ++i) {
    if (!db->Get(demo::DemoKey(static_cast<int64_t>(rng() % n), true), &got)) {
      Die(name + ": a present key is missing");
    }
  }
  std::vector<double> micros(static_cast<size_t>(gets));
  const auto timed = [&](bool present) {
    const uint64_t before = db->DataBlockReads();
    for (int64_t g = 0; g < gets; ++g) {
      const int64_t i = static_cast<int64_t>(rng() % n);
      const std::string key = demo::DemoKey(i, present);
      const auto t0 = Clock::now();
      const bool found = db->Get(key, &got);
      micros[g] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      if (found != present) Die(name + ": wrong answer for " + key);
    }
    return static_cast<double>(db->DataBlockReads() - before) / std::max<int64_t>(gets, 1);
  };
  r.reads_per_absent = timed(false);
  r.absent = demo::Summarize(&micros);
  r.reads_per_present = timed(true);
  r.present = demo::Summarize(&micros);

  std::vector<double> rates, reads;
  for (int run = 0; run < absl::GetFlag(FLAGS_cold_runs); ++run) {
    demo::DropFromPageCache(path, false);
    const uint64_t before = db->DataBlockReads();
    const auto t0 = Clock::now();
    const auto deadline = t0 + std::chrono::milliseconds(absl::GetFlag(FLAGS_cold_ms));
    int64_t done = 0;
    while (done % 16 != 0 || Clock::now() < deadline) {
      const std::string key = demo::DemoKey(static_cast<int64_t>(rng() % n), false);
      if (db->Get(key, &got)) Die(name + ": absent key found: " + key);
      ++done;
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    rates.push_back(done / s);
    reads.push_back(static_cast<double>(db->DataBlockReads() - before) / done);
  }
  r.cold_absent_per_s = demo::Median(rates);
  r.cold_reads_per_absent = demo::Median(reads);
  return r;
}

std::string Cell(const char* fmt, double v) { return std::isnan(v) ? "-" : Format(fmt, v); }

void PrintTable(const std::vector<Result>& results) {
  std::printf("\n| %-22s | %6s | %6s | %8s | %8s | %7s | %7s | %7s | %7s | %9s | %9s | %9s |\n",
              "contender", "filter", "block", "reads/ab", "reads/pr", "abs p50", "abs p99",
              "pre p50", "pre p99", "cold ab/s", "fill k/s", "+compact");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", std::string(24, '-').c_str(),
              std::string(8, '-').c_str(), std::string(8, '-').c_str(),
              std::string(10, '-').c_str(), std::string(10, '-').c_str(),
              std::string(9, '-').c_str(), std::string(9, '-').c_str(), std::string(9, '-').c_str(),
              std::string(9, '-').c_str(), std::string(11, '-').c_str(),
              std::string(11, '-').c_str(), std::string(11, '-').c_str());
  for (const Result& r : results) {
    std::printf(
        "| %-22s | %6.3f | %6.3f | %8.4f | %8.4f | %7.2f | %7.2f | %7.2f | %7.2f | %9s | "
        "%9.0f | %9.0f |\n",
        r.name.c_str(), r.filter_bpk, r.filter_block_bpk, r.reads_per_absent, r.reads_per_present,
        r.absent.p50, r.absent.p99, r.present.p50, r.present.p99,
        Cell("%.0f", r.cold_absent_per_s).c_str(), r.fill_keys_per_s / 1e3,
        r.fill_compact_keys_per_s / 1e3);
  }
  std::printf(
      "\nfilter/block: filter bytes per key (block: with LevelDB's offset array, est.); "
      "reads/ab, reads/pr: data-block reads per absent/present Get; latencies in us "
      "(page cache, block cache off); cold ab/s: absent Gets/s, table files dropped "
      "from the page cache, median of %d runs of %d ms; fill: thousand keys/s loading, "
      "and including the final full compaction.\n",
      absl::GetFlag(FLAGS_cold_runs), absl::GetFlag(FLAGS_cold_ms));
}

void WriteJson(const std::string& file, const std::vector<Result>& results, int64_t n) {
  FILE* f = std::fopen(file.c_str(), "w");
  if (f == nullptr) Die("cannot write " + file);
  const auto num = [](double v) { return std::isnan(v) ? std::string("null") : Format("%.6g", v); };
  std::fprintf(
      f,
      "{\"keys\": %lld, \"value_size\": %d, \"bits_per_key\": %g, \"rocksdb\": \"%d.%d.%d\",\n"
      " \"cold_runs\": %d, \"cold_ms\": %d, \"results\": [\n",
      static_cast<long long>(n), absl::GetFlag(FLAGS_value_size), absl::GetFlag(FLAGS_bits_per_key),
      ROCKSDB_MAJOR, ROCKSDB_MINOR, ROCKSDB_PATCH, absl::GetFlag(FLAGS_cold_runs),
      absl::GetFlag(FLAGS_cold_ms));
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    std::fprintf(
        f,
        "  {\"name\": \"%s\", \"filter_bytes_per_key\": %s, \"filter_block_bytes_per_key\": %s, "
        "\"reads_per_absent_get\": %s, \"reads_per_present_get\": %s, "
        "\"absent_p50_us\": %s, \"absent_p99_us\": %s, \"present_p50_us\": %s, "
        "\"present_p99_us\": %s, \"cold_absent_gets_per_s\": %s, "
        "\"cold_reads_per_absent_get\": %s, \"fill_keys_per_s\": %s, "
        "\"fill_and_compact_keys_per_s\": %s}%s\n",
        r.name.c_str(), num(r.filter_bpk).c_str(), num(r.filter_block_bpk).c_str(),
        num(r.reads_per_absent).c_str(), num(r.reads_per_present).c_str(),
        num(r.absent.p50).c_str(), num(r.absent.p99).c_str(), num(r.present.p50).c_str(),
        num(r.present.p99).c_str(), num(r.cold_absent_per_s).c_str(),
        num(r.cold_reads_per_absent).c_str(), num(r.fill_keys_per_s).c_str(),
        num(r.fill_compact_keys_per_s).c_str(), i + 1 < results.size() ? "," : "");
  }
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

int Main() {
  const bool quick = absl::GetFlag(FLAGS_quick);
  if (quick) {
    absl::SetFlag(&FLAGS_keys, 50000);
    absl::SetFlag(&FLAGS_gets, 5000);
    absl::SetFlag(&FLAGS_cold_runs, 1);
    absl::SetFlag(&FLAGS_cold_ms, 20);
  }
  const int64_t n = absl::GetFlag(FLAGS_keys);
  const int64_t gets = absl::GetFlag(FLAGS_gets);
  const double bpk = absl::GetFlag(FLAGS_bits_per_key);
  if (n < 1 || gets < 0 || absl::GetFlag(FLAGS_value_size) < 0 ||
      absl::GetFlag(FLAGS_cold_runs) < 0 || absl::GetFlag(FLAGS_cold_ms) < 0 ||
      !(bpk > 0 && bpk <= 64)) {
    std::fprintf(stderr,
                 "rocksdb_e2e_bench: --keys >= 1, --gets/--value_size/--cold_* >= 0, "
                 "--bits_per_key in (0, 64]\n");
    return 2;
  }
  std::string dir = absl::GetFlag(FLAGS_dir);
  std::unique_ptr<demo::TempDir> temp;
  if (dir.empty()) {
    temp = std::make_unique<demo::TempDir>();
    dir = temp->path();
  } else {
    std::filesystem::create_directories(dir);
  }
  std::printf(
      "rocksdb_e2e_bench: %lld keys, %d-byte values, %.1f bits/key, %lld Gets each; "
      "LevelDB 1.23 (blockbloom) vs RocksDB %d.%d.%d\n",
      static_cast<long long>(n), absl::GetFlag(FLAGS_value_size), bpk, static_cast<long long>(gets),
      ROCKSDB_MAJOR, ROCKSDB_MINOR, ROCKSDB_PATCH);
  std::unique_ptr<const leveldb::FilterPolicy> builtin(
      leveldb::NewBloomFilterPolicy(static_cast<int>(std::lround(bpk))));
  std::unique_ptr<const leveldb::FilterPolicy> blocked(NewBlockedBloomFilterPolicy(bpk));
  std::unique_ptr<const leveldb::FilterPolicy> compact(NewCompactFilterPolicy(bpk));
  std::vector<Result> results;
  const auto leveldb_run = [&](const std::string& name, const leveldb::FilterPolicy* p,
                               bool index) {
    const std::string path = dir + "/" + std::to_string(results.size());
    LevelDbEngine db(p, index, path, n);
    results.push_back(Run(name, &db, path, n, gets));
  };
  const auto rocksdb_run = [&](const std::string& name, bool ribbon) {
    const std::string path = dir + "/" + std::to_string(results.size());
    RocksDbEngine db(ribbon, bpk, path);
    results.push_back(Run(name, &db, path, n, gets));
  };
  leveldb_run("leveldb built-in", builtin.get(), false);
  leveldb_run("leveldb + blocked", blocked.get(), false);
  leveldb_run("leveldb + compact", compact.get(), false);
  leveldb_run("leveldb + FilteredDB", blocked.get(), true);
  rocksdb_run("rocksdb bloom", false);
  rocksdb_run("rocksdb ribbon", true);
  PrintTable(results);
  if (!absl::GetFlag(FLAGS_json).empty()) WriteJson(absl::GetFlag(FLAGS_json), results, n);
  return 0;
}

}  // namespace
}  // namespace e2e
}  // namespace blockbloom

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "LevelDB + blockbloom against RocksDB (Bloom and Ribbon full filters) on the same keys, "
      "values and bits per key. See the header of bench/rocksdb_e2e_bench.cc.");
  absl::ParseCommandLine(argc, argv);
  return blockbloom::e2e::Main();
}
