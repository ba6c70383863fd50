// blockbloom-demo: a real LevelDB database on disk, Gets of absent and present
// keys with (a) no filter, (b) LevelDB's built-in Bloom filter and (c)
// blockbloom's blocked Bloom filter, at the same bits per key. One table out.
//
//   blockbloom-demo                       # 1,000,000 keys in a temp directory
//
// Rows: no filter; LevelDB's built-in Bloom filter; blockbloom's blocked Bloom
// filter; blockbloom's compact filter at the same bits per key
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
//   build ns/key   CreateFilter time per key, less the clock's own cost per
//                  call (filters of a few keys would otherwise be charged a
//                  clock read as long as their build); the keys per filter
//                  are printed below the table
//
// Then the disk-bound view. A page-cached database hides what a filter buys:
// an absent Get costs a few microseconds with or without a data-block read.
// The reads a filter saves are worth something when they go to the device:
//   model          data-block reads per Get (exact, counted) times a stated
//                  device latency, --device_us (default 80 us, a random 4 KiB
//                  NVMe read): a MODEL, labelled as such, not a measurement;
//   cold           a real run with the table files dropped from the page
//                  cache before each of --cold_runs runs (posix_fadvise
//                  DONTNEED; no root needed), each --cold_ms long (at most
//                  --cold_gets Gets): absent and present Gets/s, median of
//                  the runs, with the share of table pages still
//                  cached after the drop (mincore) to show it took.
// Table files are read with pread (PreadEnv in demo_support.h) so the page
// cache can drop them; index and filter blocks stay in LevelDB's table cache.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
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
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/compact_filter.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/filter_stats.h"
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
ABSL_FLAG(double, device_us, 80.0,
          "device latency of one random 4 KiB read for the disk-bound model (us)");
ABSL_FLAG(int32_t, cold_runs, 5,
          "cold-cache runs per configuration (page cache dropped before each); 0 skips");
ABSL_FLAG(int64_t, cold_gets, 20000,
          "at most this many absent (and present) Gets per cold run ...");
ABSL_FLAG(int32_t, cold_ms, 100, "... or as many as fit in this many milliseconds");
ABSL_FLAG(bool, drop_caches, false,
          "also drop the WHOLE machine's page cache before each cold run (root only;\n"
          "by default only the demo's table files are dropped, via posix_fadvise)");
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
  uint64_t index_keys = 0;   // the live keys it holds
  double reads_per_absent = std::nan(""), reads_per_present = std::nan("");
  LatencySummary absent, present;
  // Cold runs: medians over --cold_runs; NaN when skipped.
  double cold_absent_per_s = std::nan(""), cold_present_per_s = std::nan("");
  double cold_reads_per_absent = std::nan("");
  double resident_after_drop = std::nan("");  // worst run, share of table pages
  // The same absent Gets as counted by the library itself: the policy's
  // probe counters (blockbloom/filter_stats.h) and FilteredDB's statistics.
  double stats_fpr = std::nan("");  // policy: positives / probes
  double index_fpr = std::nan("");  // FilteredDB: passes not found / absent Gets checked
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
  PreadEnv pread_env;
  ReadCountingEnv env(&pread_env);
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
    FilteredDBOptions index;  // the defaults: d-left, sized for the live keys
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
      [&] {
        (filtered ? static_cast<leveldb::DB*>(filtered.get()) : plain.get())
            ->CompactRange(nullptr, nullptr);
      },
  };

  Load(db, num_keys, absl::GetFlag(FLAGS_value_size), config.name);
  row.filter = policy.Snapshot();
  // The index grows in the background while keys are loaded: measure it
  // once the last growth is done (its scan's reads would count as Gets').
  if (filtered) filtered->WaitForGrowth();

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
  const FilterPolicyStats stats_before = GetFilterPolicyStats(config.policy);
  const FilteredDBStats index_before = filtered ? filtered->index_stats() : FilteredDBStats();
  std::vector<double> micros(num_gets);
  for (int64_t i = 0; i < num_gets; ++i) {
    const std::string key = DemoKey(absent[i], false);
    const auto start = Clock::now();
    s = db.get(key, &value);
    micros[i] = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (!s.IsNotFound()) Die("absent key found or error: " + s.ToString());
  }
  if (num_gets > 0) row.reads_per_absent = static_cast<double>(env.reads()) / num_gets;
  row.filter.fpr = policy.ProbeFpr();
  const FilterPolicyStats stats_after = GetFilterPolicyStats(config.policy);
  if (stats_after.available && stats_after.probes > stats_before.probes) {
    const double probes = static_cast<double>(stats_after.probes - stats_before.probes);
    const double negatives = static_cast<double>(stats_after.negatives - stats_before.negatives);
    row.stats_fpr = (probes - negatives) / probes;  // every Get here is of an absent key
  }
  if (filtered) {
    const FilteredDBStats index_after = filtered->index_stats();
    const double passes =
        static_cast<double>(index_after.passes_not_found - index_before.passes_not_found);
    const double ruled_out =
        static_cast<double>(index_after.gets_ruled_out - index_before.gets_ruled_out);
    if (passes + ruled_out > 0) row.index_fpr = passes / (passes + ruled_out);
  }
  row.absent = Summarize(&micros);
  env.ResetReads();
  for (int64_t i = 0; i < num_gets; ++i) {
    const std::string key = DemoKey(present[i], true);
    const auto start = Clock::now();
    s = db.get(key, &value);
    micros[i] = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (!s.ok()) Die("present key missing: " + key + " " + s.ToString());
  }
  row.present = Summarize(&micros);
  if (num_gets > 0) row.reads_per_present = static_cast<double>(env.reads()) / num_gets;

  // Cold runs: every table file dropped from the page cache, then Gets.
  const int cold_runs = absl::GetFlag(FLAGS_cold_runs);
  const int64_t cold_gets = absl::GetFlag(FLAGS_cold_gets);
  if (cold_runs > 0 && cold_gets > 0 && num_keys > 0) {
    std::vector<double> absent_rates, present_rates, reads;
    for (int run = 0; run < cold_runs; ++run) {
      const auto timed = [&](bool want_present) {
        DropFromPageCache(path, absl::GetFlag(FLAGS_drop_caches));
        const double resident = ResidentFraction(path);
        if (!(row.resident_after_drop >= resident)) row.resident_after_drop = resident;
        env.ResetReads();
        const auto start = Clock::now();
        const auto deadline = start + std::chrono::milliseconds(absl::GetFlag(FLAGS_cold_ms));
        int64_t done = 0;
        // Time-bounded: a filter's run covers many Gets (and so enough of
        // its rare device reads to be more than noise), no filter's few.
        while (done < cold_gets && (done % 16 != 0 || Clock::now() < deadline)) {
          const std::string key = DemoKey(static_cast<int64_t>(rng() % num_keys), want_present);
          s = db.get(key, &value);
          if (want_present ? !s.ok() : !s.IsNotFound())
            Die("cold Get of " + key + ": " + s.ToString());
          ++done;
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (!want_present) reads.push_back(static_cast<double>(env.reads()) / done);
        return static_cast<double>(done) / seconds;
      };
      absent_rates.push_back(timed(false));
      present_rates.push_back(timed(true));
    }
    row.cold_absent_per_s = Median(absent_rates);
    row.cold_present_per_s = Median(present_rates);
    row.cold_reads_per_absent = Median(reads);
  }
  if (filtered) {
    filtered->WaitForGrowth();  // a growth still running holds two indexes
    const FilteredDBStats stats = filtered->index_stats();
    row.index_bytes = stats.memory_bytes;
    row.index_keys = stats.keys;
  }
  filtered.reset();
  plain.reset();
  if (!absl::GetFlag(FLAGS_keep)) leveldb::DestroyDB(path, leveldb::Options());
  return row;
}

// Exits with status 2 and a message on a flag value the demo cannot use.
void ValidateFlags() {
  const auto bad = [](const std::string& message) {
    std::fprintf(stderr, "blockbloom-demo: %s (see --help)\n", message.c_str());
    std::exit(2);
  };
  const auto at_least = [&](const char* name, double value, double min) {
    if (!(value >= min)) bad(Format("--%s must be >= %g, got %g", name, min, value));
  };
  at_least("keys", static_cast<double>(absl::GetFlag(FLAGS_keys)), 0);
  at_least("gets", static_cast<double>(absl::GetFlag(FLAGS_gets)), 0);
  at_least("value_size", absl::GetFlag(FLAGS_value_size), 0);
  if (absl::GetFlag(FLAGS_value_size) > (64 << 20)) bad("--value_size must be <= 64 MiB");
  at_least("block_cache_mb", static_cast<double>(absl::GetFlag(FLAGS_block_cache_mb)), 0);
  if (absl::GetFlag(FLAGS_block_cache_mb) > (int64_t{1} << 30))
    bad("--block_cache_mb is too large");
  at_least("device_us", absl::GetFlag(FLAGS_device_us), 0);
  at_least("cold_runs", absl::GetFlag(FLAGS_cold_runs), 0);
  at_least("cold_gets", static_cast<double>(absl::GetFlag(FLAGS_cold_gets)), 0);
  at_least("cold_ms", absl::GetFlag(FLAGS_cold_ms), 0);
  if (!std::isfinite(absl::GetFlag(FLAGS_bits_per_key)) || absl::GetFlag(FLAGS_bits_per_key) <= 0) {
    bad(Format("--bits_per_key must be a positive number, got %g",
               absl::GetFlag(FLAGS_bits_per_key)));
  }
}

// "-" for NaN (nothing measured), else the value formatted.
std::string Cell(const char* fmt, double value) {
  return std::isnan(value) ? "-" : Format(fmt, value);
}

// The disk-bound view: the model (reads x --device_us) and the cold runs.
void PrintDiskBoundView(const std::vector<Row>& rows) {
  const double device_us = absl::GetFlag(FLAGS_device_us);
  std::printf(
      "\nDisk-bound view. MODEL: one Get = its measured CPU time (mean, page cache) + "
      "data-block reads x %.0f us\n(one random 4 KiB NVMe read; --device_us). "
      "COLD: measured, table files dropped from the page cache\nbefore each run "
      "(posix_fadvise DONTNEED%s), median of %d runs of %d ms or %lld Gets, one thread.\n",
      device_us, absl::GetFlag(FLAGS_drop_caches) ? " + drop_caches" : "",
      absl::GetFlag(FLAGS_cold_runs), absl::GetFlag(FLAGS_cold_ms),
      static_cast<long long>(absl::GetFlag(FLAGS_cold_gets)));
  std::printf("\n| %-26s | %12s | %13s | %13s | %14s | %14s | %13s | %13s | %7s |\n", "filter",
              "reads/absent", "reads/present", "model abs/s", "model pres/s", "cold reads/abs",
              "cold abs/s", "cold pres/s", "cached");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", std::string(28, '-').c_str(),
              std::string(14, '-').c_str(), std::string(15, '-').c_str(),
              std::string(15, '-').c_str(), std::string(16, '-').c_str(),
              std::string(16, '-').c_str(), std::string(15, '-').c_str(),
              std::string(15, '-').c_str(), std::string(9, '-').c_str());
  for (const Row& r : rows) {
    const double model_absent = 1e6 / (r.absent.mean + r.reads_per_absent * device_us);
    const double model_present = 1e6 / (r.present.mean + r.reads_per_present * device_us);
    std::printf("| %-26s | %12s | %13s | %13s | %14s | %14s | %13s | %13s | %7s |\n",
                r.name.c_str(), Cell("%.4f", r.reads_per_absent).c_str(),
                Cell("%.4f", r.reads_per_present).c_str(), Cell("%.0f", model_absent).c_str(),
                Cell("%.0f", model_present).c_str(), Cell("%.4f", r.cold_reads_per_absent).c_str(),
                Cell("%.0f", r.cold_absent_per_s).c_str(),
                Cell("%.0f", r.cold_present_per_s).c_str(),
                Cell("%.1f%%", 100 * r.resident_after_drop).c_str());
  }
  // Against the first row (no filter): what the filters buy on a device.
  const Row& none = rows.front();
  if (!std::isnan(none.cold_absent_per_s) && none.cold_reads_per_absent > 0) {
    if (!std::isnan(none.absent.mean)) {
      const double us_per_read =
          (1e6 / none.cold_absent_per_s - none.absent.mean) / none.cold_reads_per_absent;
      std::printf(
          "\nThis machine, measured: ~%.0f us per cold data-block read (no-filter cold "
          "absent Gets less their page-cache CPU time).\n",
          us_per_read);
    }
    std::printf("Cold absent Gets/s against no filter:");
    for (size_t i = 1; i < rows.size(); ++i) {
      std::printf("%s %s %.1fx", i > 1 ? ";" : "", rows[i].name.c_str(),
                  rows[i].cold_absent_per_s / none.cold_absent_per_s);
    }
    std::printf(".\n");
  }
  std::printf(
      "cached: share of table-file pages still in the page cache right after a drop "
      "(worst run; mincore).\n");
}

int Main() {
  ValidateFlags();
  std::string dir = absl::GetFlag(FLAGS_dir);
  std::unique_ptr<TempDir> temp;
  if (dir.empty()) {
    if (absl::GetFlag(FLAGS_keep)) Die("--keep needs --dir");
    temp = std::make_unique<TempDir>();
    dir = temp->path();
  } else {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) Die("cannot create --dir " + dir + ": " + ec.message());
  }
  const double bpk = absl::GetFlag(FLAGS_bits_per_key);
  std::printf(
      "blockbloom demo: %lld keys, %d-byte values, %lld Gets per row, "
      "block cache %lld MiB, %.1f bits/key, SIMD target %s\n",
      static_cast<long long>(absl::GetFlag(FLAGS_keys)), absl::GetFlag(FLAGS_value_size),
      static_cast<long long>(absl::GetFlag(FLAGS_gets)),
      static_cast<long long>(absl::GetFlag(FLAGS_block_cache_mb)), bpk,
      simd::ActiveTargetName().c_str());
  std::unique_ptr<const leveldb::FilterPolicy> builtin(
      leveldb::NewBloomFilterPolicy(static_cast<int>(bpk)));
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
  // The clock's own cost, taken out of every build time (FilterStats).
  const double timer_cost_ns = TimerCostNanos();
  std::vector<Row> rows;
  for (const Config& config : configs) {
    rows.push_back(RunConfig(config, dir + "/" + std::to_string(rows.size())));
  }

  std::printf("\n| %-26s | %8s | %7s | %9s | %12s | %8s | %8s | %8s | %8s | %9s |\n", "filter",
              "B/key", "FPR", "stats FPR", "reads/absent", "abs p50", "abs p99", "pres p50",
              "pres p99", "build ns");
  std::printf(
      "|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", std::string(28, '-').c_str(),
      std::string(10, '-').c_str(), std::string(9, '-').c_str(), std::string(11, '-').c_str(),
      std::string(14, '-').c_str(), std::string(10, '-').c_str(), std::string(10, '-').c_str(),
      std::string(10, '-').c_str(), std::string(10, '-').c_str(), std::string(11, '-').c_str());
  for (const Row& r : rows) {
    const bool has = r.filter.keys > 0;
    std::printf("| %-26s | %8s | %7s | %9s | %12s | %8s | %8s | %8s | %8s | %9s |\n",
                r.name.c_str(), has ? Format("%.3f", r.filter.BytesPerKey()).c_str() : "-",
                has ? Cell("%.3f%%", 100 * r.filter.fpr).c_str() : "-",
                Cell("%.3f%%", 100 * r.stats_fpr).c_str(), Cell("%.4f", r.reads_per_absent).c_str(),
                Cell("%.2fus", r.absent.p50).c_str(), Cell("%.2fus", r.absent.p99).c_str(),
                Cell("%.2fus", r.present.p50).c_str(), Cell("%.2fus", r.present.p99).c_str(),
                has ? Format("%.1f", r.filter.NanosPerKey(timer_cost_ns)).c_str() : "-");
  }
  std::printf("\nreads/absent: data-block reads per Get of an absent key (block cache %s).\n",
              absl::GetFlag(FLAGS_block_cache_mb) == 0 ? "off" : "on");
  // LevelDB asks for one filter per 2 KiB of data-block offsets, so the
  // keys per filter follow the compressed size of the blocks: values of a
  // few KiB that compress well still make filters of several keys.
  for (const Row& r : rows) {
    if (r.filter.filters == 0) continue;
    std::printf(
        "build ns: CreateFilter time per key, less the clock's own %.1f ns per call; "
        "%.1f keys per filter on average (%" PRIu64 " filters).\n",
        timer_cost_ns, r.filter.KeysPerFilter(), r.filter.filters);
    break;
  }
  std::printf(
      "FPR: counted by the demo's wrapper around each policy; stats FPR: the same probes as the\n"
      "policy counts them itself (GetFilterPolicyStats: positives / probes; all keys absent), "
      "what\n"
      "an application can watch in production. \"-\": not a blockbloom policy.\n");
  for (const Row& r : rows) {
    if (std::isnan(r.index_fpr)) continue;
    std::printf(
        "%s: the index's own statistics (FilteredDB::index_stats, GetProperty"
        "(\"blockbloom.stats\")): %.3f%% of absent Gets passed the index.\n",
        r.name.c_str(), 100 * r.index_fpr);
  }
  for (const Row& r : rows) {
    if (r.index_bytes == 0 || r.index_keys == 0) continue;
    std::printf(
        "%s: FPR is of the filter probes that got past the index; the d-left index "
        "itself takes %" PRIu64 " bytes of memory for %" PRIu64
        " live keys: %.2f bytes per live key (budget: 4 per key + 256 KiB).\n",
        r.name.c_str(), r.index_bytes, r.index_keys,
        static_cast<double>(r.index_bytes) / static_cast<double>(r.index_keys));
  }
  PrintDiskBoundView(rows);
  return 0;
}

}  // namespace
}  // namespace demo
}  // namespace blockbloom

namespace blockbloom {
namespace demo {
namespace {

// --help (-h, -help, --helpfull): the usage and this program's flags on
// stdout, exit 0. (Abseil's own --help exits 1 and filters flags by a file
// name this binary does not have.)
void MaybePrintHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg != "--help" && arg != "-help" && arg != "-h" && arg != "--helpfull") continue;
    std::printf("%s\n\nFlags:\n", std::string(absl::ProgramUsageMessage()).c_str());
    std::vector<const absl::CommandLineFlag*> flags;
    for (const auto& [name, flag] : absl::GetAllFlags()) {
      if (absl::string_view(flag->Filename()).find("demo.cc") != absl::string_view::npos) {
        flags.push_back(flag);
      }
    }
    std::sort(flags.begin(), flags.end(),
              [](const auto* a, const auto* b) { return a->Name() < b->Name(); });
    for (const absl::CommandLineFlag* flag : flags) {
      std::printf("  --%s (%s)\n      default: %s\n", std::string(flag->Name()).c_str(),
                  flag->Help().c_str(), flag->DefaultValue().c_str());
    }
    std::exit(0);
  }
}

}  // namespace
}  // namespace demo
}  // namespace blockbloom

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Compares LevelDB Gets with no filter, LevelDB's built-in Bloom filter and "
      "blockbloom's filters on a real database on disk, in the page cache and cold "
      "(a device-latency model and a measured cold-cache run).\n"
      "Usage: blockbloom-demo [--keys=N] [--gets=N] [--cold_runs=N] [--device_us=US] ...");
  blockbloom::demo::MaybePrintHelp(argc, argv);
  absl::ParseCommandLine(argc, argv);
  return blockbloom::demo::Main();
}
