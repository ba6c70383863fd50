// FilteredDB against plain LevelDB, side by side in one run, keys prepared
// outside every timed loop (bench_common.h's 16-byte keys, 100-byte values).
//
//   build/default/bench/filtered_db_bench [--mode=gets|reopen|growth|all]
//       [--keys=1000000] [--rounds=3] [--reopen_keys=1000000,10000000]
//       [--kind=dleft|counting] [--quick]
//
//  gets    A --keys database (LevelDB with its built-in Bloom filter,
//          leveldb::NewBloomFilterPolicy(10), compacted). Alternating rounds
//          of plain LevelDB and FilteredDB (--kind index) on it: Get of
//          absent keys (1 and 2 threads), Get of present keys, Put of new
//          keys. Medians over rounds, and the ratios, in CPU ns per operation
//          per thread (CLOCK_THREAD_CPUTIME_ID: robust to other processes'
//          time slices on a shared machine) and in wall ns.
//  reopen  For each --reopen_keys size: FilteredDB's Open from the saved
//          index file vs Open by scan rebuild (index file moved away), and
//          plain LevelDB's Open; ms and ms per million keys. Page cache warm
//          for all (the scan reads every table; state of the machine, not of
//          the code).
//  growth  A --keys database opened with the index sized for it; Puts of new
//          keys until the index has grown (a rebuild) and as many again;
//          every Put's latency: p50, p99, p99.9, max, and Puts over 1 ms.
//          Built with -DBLOCKBLOOM_FDB_OLD_API against the pre-change tree it
//          measures the old stalling growth (the command is in the note).
//
// The databases live under $TMPDIR (or /tmp) and are removed at exit.
// BLOCKBLOOM_BENCH_QUICK=1 or --quick: 20,000 keys, one round (CI).
// Google Benchmark flags (--benchmark_*) are accepted and ignored.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "blockbloom/filtered_db.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"
#include "leveldb/write_batch.h"

namespace {

using blockbloom::bench::Key;
using Clock = std::chrono::steady_clock;

// CPU time of the calling thread: on a shared machine, immune to time slices
// given to other processes (wall time is reported next to it).
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string TmpPath(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp ? tmp : "/tmp") + "/blockbloom_fdb_bench_" + name;
}

void Check(const leveldb::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

// Present keys: Key(2i) for i < n; absent keys: Key(2i + 1); new keys for
// Put: Key(2^40 + ...).
void BuildDatabase(const std::string& path, uint64_t n, const leveldb::FilterPolicy* policy) {
  leveldb::Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.filter_policy = policy;
  options.write_buffer_size = 16 << 20;
  leveldb::DB* raw = nullptr;
  Check(leveldb::DB::Open(options, path, &raw), "open for build");
  std::unique_ptr<leveldb::DB> db(raw);
  const std::string value(100, 'v');
  for (uint64_t i = 0; i < n;) {
    leveldb::WriteBatch batch;
    for (int j = 0; j < 1000 && i < n; ++j, ++i) batch.Put(Key(2 * i), value);
    Check(db->Write(leveldb::WriteOptions(), &batch), "build write");
  }
  db->CompactRange(nullptr, nullptr);
}

std::vector<std::string> Keys(uint64_t count, uint64_t n, uint64_t offset, bool absent) {
  std::vector<std::string> keys;
  keys.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t j = blockbloom::bench::Mix64(i + offset) % n;
    keys.push_back(Key(2 * j + (absent ? 1 : 0)));
  }
  return keys;
}

#ifndef BLOCKBLOOM_FDB_OLD_API

struct Timing {
  double cpu_ns = 0;   // CPU ns per operation (per thread)
  double wall_ns = 0;  // wall ns per operation per thread
};

// Per-Get cost over `keys` (each thread its own slice); `expect_found` checked.
Timing TimeGets(leveldb::DB* db, const std::vector<std::string>& keys, int threads,
                bool expect_found) {
  std::vector<std::thread> pool;
  std::vector<uint64_t> wrong(threads, 0);
  std::vector<double> cpu(threads, 0.0);
  const auto start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::string value;
      const leveldb::ReadOptions read_options;
      uint64_t my_wrong = 0;  // a local: no line shared between the threads
      const double cpu0 = ThreadCpuSeconds();
      for (size_t i = t; i < keys.size(); i += threads) {
        const bool found = db->Get(read_options, keys[i], &value).ok();
        my_wrong += found != expect_found;
      }
      cpu[t] = ThreadCpuSeconds() - cpu0;
      wrong[t] = my_wrong;
    });
  }
  for (auto& th : pool) th.join();
  const double s = Seconds(start, Clock::now());
  for (uint64_t w : wrong) {
    if (w != 0) {
      std::fprintf(stderr, "wrong answers: %" PRIu64 "\n", w);
      std::exit(1);
    }
  }
  double cpu_total = 0;
  for (double c : cpu) cpu_total += c;
  const double per_thread = static_cast<double>(keys.size()) / threads;
  return {cpu_total / threads * 1e9 / per_thread, s * 1e9 / per_thread};
}

Timing TimePuts(leveldb::DB* db, const std::vector<std::string>& keys) {
  const std::string value(100, 'w');
  const auto start = Clock::now();
  const double cpu0 = ThreadCpuSeconds();
  for (const std::string& key : keys) Check(db->Put(leveldb::WriteOptions(), key, value), "put");
  const double n = static_cast<double>(keys.size());
  return {(ThreadCpuSeconds() - cpu0) * 1e9 / n, Seconds(start, Clock::now()) * 1e9 / n};
}

void Warm(leveldb::DB* db, uint64_t n) {
  std::string value;
  for (uint64_t i = 0; i < n; i += 7) {
    db->Get(leveldb::ReadOptions(), Key(2 * i + 1), &value);
    db->Get(leveldb::ReadOptions(), Key(2 * i), &value);
  }
}

blockbloom::IndexKind g_kind = blockbloom::IndexKind::kDleft;

void ModeGets(uint64_t n, int rounds, bool quick) {
  const std::string path = TmpPath("gets");
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
  blockbloom::DestroyFilteredDB(path, leveldb::Options());
  BuildDatabase(path, n, policy.get());
  leveldb::Options options;
  options.filter_policy = policy.get();
  blockbloom::FilteredDBOptions fdb_options;
  fdb_options.expected_keys = n;
  fdb_options.kind = g_kind;
  const uint64_t gets = quick ? 20000 : 400000;
  const uint64_t puts = quick ? 5000 : 50000;
  // Prepared once, outside every timed loop.
  const std::vector<std::string> absent = Keys(gets, n, 0, true);
  const std::vector<std::string> present = Keys(gets, n, 1u << 30, false);
  // Gets first (no writes: no compaction running), alternating which of the
  // two goes first; then Puts, alternating too.
  std::vector<Timing> p_abs, p_abs2, p_pres, p_put, f_abs1, f_abs2, f_pres, f_put;
  std::string last_stats;
  const auto plain_phase = [&](bool gets, const std::vector<std::string>& new_keys) {
    leveldb::DB* raw = nullptr;
    Check(leveldb::DB::Open(options, path, &raw), "open plain");
    std::unique_ptr<leveldb::DB> db(raw);
    Warm(db.get(), n);
    if (gets) {
      p_abs.push_back(TimeGets(db.get(), absent, 1, false));
      p_abs2.push_back(TimeGets(db.get(), absent, 2, false));
      p_pres.push_back(TimeGets(db.get(), present, 1, true));
    } else {
      p_put.push_back(TimePuts(db.get(), new_keys));
    }
  };
  const auto fdb_phase = [&](bool gets, const std::vector<std::string>& new_keys) {
    leveldb::DB* raw = nullptr;
    Check(blockbloom::OpenFilteredDB(fdb_options, options, path, &raw), "open FilteredDB");
    std::unique_ptr<leveldb::DB> db(raw);
    Warm(db.get(), n);
    if (gets) {
      f_abs1.push_back(TimeGets(db.get(), absent, 1, false));
      f_abs2.push_back(TimeGets(db.get(), absent, 2, false));
      f_pres.push_back(TimeGets(db.get(), present, 1, true));
    } else {
      f_put.push_back(TimePuts(db.get(), new_keys));
    }
    db->GetProperty("blockbloom.stats", &last_stats);
  };
  const std::vector<std::string> none;
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {
      plain_phase(true, none);
      fdb_phase(true, none);
    } else {
      fdb_phase(true, none);
      plain_phase(true, none);
    }
  }
  uint64_t new_key = uint64_t{1} << 40;
  for (int r = 0; r < rounds; ++r) {
    std::vector<std::string> new_plain, new_fdb;
    for (uint64_t i = 0; i < puts; ++i) new_plain.push_back(Key(new_key++));
    for (uint64_t i = 0; i < puts; ++i) new_fdb.push_back(Key(new_key++));
    if (r % 2 == 0) {
      plain_phase(false, new_plain);
      fdb_phase(false, new_fdb);
    } else {
      fdb_phase(false, new_fdb);
      plain_phase(false, new_plain);
    }
  }
  std::printf("FilteredDB stats at the end:\n%s", last_stats.c_str());
  std::printf("\n%" PRIu64 " keys, %d rounds (median), %" PRIu64 " Gets / %" PRIu64
              " Puts per measurement\n",
              n, rounds, gets, puts);
  std::printf("%-34s %10s %10s %7s | %10s %10s %7s\n", "operation (ns per op per thread)",
              "LDB cpu", "FDB cpu", "ratio", "LDB wall", "FDB wall", "ratio");
  const auto med = [](const std::vector<Timing>& v, bool cpu) {
    std::vector<double> x;
    for (const Timing& t : v) x.push_back(cpu ? t.cpu_ns : t.wall_ns);
    return Median(x);
  };
  const auto row = [&](const char* name, const std::vector<Timing>& plain,
                       const std::vector<Timing>& fdb) {
    std::printf("%-34s %10.1f %10.1f %7.3f | %10.1f %10.1f %7.3f\n", name, med(plain, true),
                med(fdb, true), med(fdb, true) / med(plain, true), med(plain, false),
                med(fdb, false), med(fdb, false) / med(plain, false));
  };
  row("Get absent, 1 thread", p_abs, f_abs1);
  row("Get absent, 2 threads", p_abs2, f_abs2);
  row("Get present, 1 thread", p_pres, f_pres);
  row("Put new key", p_put, f_put);
  std::printf(
      "absent Get speedup (cpu): %.1fx at 1 thread, %.1fx at 2 threads; "
      "(wall): %.1fx, %.1fx\n",
      med(p_abs, true) / med(f_abs1, true), med(p_abs2, true) / med(f_abs2, true),
      med(p_abs, false) / med(f_abs1, false), med(p_abs2, false) / med(f_abs2, false));
  std::printf("FilteredDB absent Get per thread, 2 threads / 1 thread: cpu %.2f, wall %.2f\n",
              med(f_abs2, true) / med(f_abs1, true), med(f_abs2, false) / med(f_abs1, false));
  blockbloom::DestroyFilteredDB(path, leveldb::Options());
}

void ModeReopen(const std::vector<uint64_t>& sizes, int rounds) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
  for (uint64_t n : sizes) {
    const std::string path = TmpPath("reopen");
    blockbloom::DestroyFilteredDB(path, leveldb::Options());
    const auto build_start = Clock::now();
    BuildDatabase(path, n, policy.get());
    const double build_s = Seconds(build_start, Clock::now());
    leveldb::Options options;
    options.filter_policy = policy.get();
    blockbloom::FilteredDBOptions fdb_options;
    fdb_options.expected_keys = n;
    {  // first open scans; its close saves the index
      leveldb::DB* raw = nullptr;
      Check(blockbloom::OpenFilteredDB(fdb_options, options, path, &raw), "first open");
      delete raw;
    }
    std::vector<double> file_ms, scan_ms, plain_ms;
    for (int r = 0; r < rounds; ++r) {
      {
        leveldb::DB* raw = nullptr;
        const auto t0 = Clock::now();
        Check(leveldb::DB::Open(options, path, &raw), "plain open");
        plain_ms.push_back(Seconds(t0, Clock::now()) * 1e3);
        delete raw;  // invalidates the index file: reopen by scan below
      }
      {
        leveldb::DB* raw = nullptr;
        const auto t0 = Clock::now();
        Check(blockbloom::OpenFilteredDB(fdb_options, options, path, &raw), "scan open");
        scan_ms.push_back(Seconds(t0, Clock::now()) * 1e3);
        blockbloom::FilteredDB* fdb = static_cast<blockbloom::FilteredDB*>(raw);
        if (fdb->index_stats().opened_from != blockbloom::IndexSource::kScan) std::exit(2);
        delete raw;  // saves
      }
      {
        leveldb::DB* raw = nullptr;
        const auto t0 = Clock::now();
        Check(blockbloom::OpenFilteredDB(fdb_options, options, path, &raw), "file open");
        file_ms.push_back(Seconds(t0, Clock::now()) * 1e3);
        blockbloom::FilteredDB* fdb = static_cast<blockbloom::FilteredDB*>(raw);
        if (fdb->index_stats().opened_from != blockbloom::IndexSource::kFile) std::exit(3);
        delete raw;
      }
    }
    const double m = static_cast<double>(n) / 1e6;
    std::printf("reopen %" PRIu64 " keys (built in %.1f s), median of %d:\n", n, build_s, rounds);
    std::printf("  plain LevelDB Open        %9.1f ms  (%7.2f ms per million keys)\n",
                Median(plain_ms), Median(plain_ms) / m);
    std::printf("  FilteredDB Open, scan     %9.1f ms  (%7.2f ms per million keys)\n",
                Median(scan_ms), Median(scan_ms) / m);
    std::printf("  FilteredDB Open, file     %9.1f ms  (%7.2f ms per million keys)\n",
                Median(file_ms), Median(file_ms) / m);
    std::printf("  scan / file: %.1fx\n", Median(scan_ms) / Median(file_ms));
    blockbloom::DestroyFilteredDB(path, leveldb::Options());
  }
}

#endif  // BLOCKBLOOM_FDB_OLD_API

void ModeGrowth(uint64_t n) {
  const std::string path = TmpPath("growth");
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
#ifdef BLOCKBLOOM_FDB_OLD_API
  leveldb::DestroyDB(path, leveldb::Options());
#else
  blockbloom::DestroyFilteredDB(path, leveldb::Options());
#endif
  BuildDatabase(path, n, policy.get());
  leveldb::Options options;
  options.filter_policy = policy.get();
  const std::string value(100, 'w');
  const auto report = [](const char* who, std::vector<double> sorted) {
    std::sort(sorted.begin(), sorted.end());
    uint64_t over_1ms = 0;
    for (double l : sorted) over_1ms += l > 1000.0;
    const auto pct = [&](double p) { return sorted[static_cast<size_t>(p * (sorted.size() - 1))]; };
    std::printf("  %s Put latency us: p50 %.2f  p99 %.2f  p99.9 %.2f  max %.1f  (%" PRIu64
                " Puts over 1 ms)\n",
                who, pct(0.5), pct(0.99), pct(0.999), sorted.back(), over_1ms);
  };
  // The baseline: plain LevelDB's own Put latency on this database (its
  // memtable flushes and level-0 slowdowns), as many Puts as below.
  std::vector<double> plain_us;
  {
    leveldb::DB* raw = nullptr;
    Check(leveldb::DB::Open(options, path, &raw), "open plain");
    std::unique_ptr<leveldb::DB> plain(raw);
    const uint64_t count = n;  // about as many as the FilteredDB run's Puts
    plain_us.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      const std::string key = Key((uint64_t{1} << 42) + i);
      const auto t0 = Clock::now();
      Check(plain->Put(leveldb::WriteOptions(), key, value), "plain put");
      plain_us[i] = Seconds(t0, Clock::now()) * 1e6;
    }
    // Deleted again so the FilteredDB run starts from n live keys.
    for (uint64_t i = 0; i < count; ++i) {
      Check(plain->Delete(leveldb::WriteOptions(), Key((uint64_t{1} << 42) + i)), "delete");
    }
  }
#ifdef BLOCKBLOOM_FDB_OLD_API
  blockbloom::IndexOptions fdb_options;
  fdb_options.expected_keys = n;
  std::unique_ptr<blockbloom::FilteredDB> db;
  Check(blockbloom::FilteredDB::Open(options, path, fdb_options, &db), "open");
#else
  blockbloom::FilteredDBOptions fdb_options;
  fdb_options.expected_keys = n;
  fdb_options.persist_index = false;
  std::unique_ptr<blockbloom::FilteredDB> db;
  Check(blockbloom::FilteredDB::Open(fdb_options, options, path, &db), "open");
#endif
  const uint64_t capacity = db->index_stats().capacity;
  const uint64_t rebuilds_at_open = db->index_stats().rebuilds;
  // Enough Puts to pass the capacity, then as many again as it took.
  const uint64_t to_grow = capacity - n + 1;
  const uint64_t total = 2 * to_grow;
  std::vector<std::string> keys;
  keys.reserve(total);
  for (uint64_t i = 0; i < total; ++i) keys.push_back(Key((uint64_t{1} << 41) + i));
  std::vector<double> latency_us(total);
  const auto start = Clock::now();
  for (uint64_t i = 0; i < total; ++i) {
    const auto t0 = Clock::now();
    Check(db->Put(leveldb::WriteOptions(), keys[i], value), "put");
    latency_us[i] = Seconds(t0, Clock::now()) * 1e6;
  }
  const double wall = Seconds(start, Clock::now());
#ifndef BLOCKBLOOM_FDB_OLD_API
  db->WaitForGrowth();
#endif
  const blockbloom::FilteredDBStats s = db->index_stats();
  std::printf("growth: %" PRIu64 " keys, capacity %" PRIu64 " -> %" PRIu64 " (rebuilds %" PRIu64
              "), %" PRIu64 " Puts in %.2f s\n",
              n, capacity, s.capacity, s.rebuilds - rebuilds_at_open, total, wall);
  report("plain LevelDB (n Puts, same db)", plain_us);
  report("FilteredDB, through the growth ", latency_us);
  db.reset();
#ifdef BLOCKBLOOM_FDB_OLD_API
  leveldb::DestroyDB(path, leveldb::Options());
#else
  blockbloom::DestroyFilteredDB(path, leveldb::Options());
#endif
}

std::vector<uint64_t> ParseList(const char* text) {
  std::vector<uint64_t> out;
  for (const char* p = text; *p != '\0';) {
    char* end = nullptr;
    out.push_back(std::strtoull(p, &end, 10));
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p != '\0') break;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = blockbloom::bench::ConsumeQuickFlag(&argc, argv);
  std::string mode = "all";
  uint64_t keys = quick ? 20000 : 1000000;
  int rounds = quick ? 1 : 3;
  std::vector<uint64_t> reopen_keys = {keys};
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strncmp(a, "--mode=", 7) == 0) {
      mode = a + 7;
    } else if (std::strncmp(a, "--keys=", 7) == 0) {
      keys = std::strtoull(a + 7, nullptr, 10);
      reopen_keys = {keys};
#ifndef BLOCKBLOOM_FDB_OLD_API
    } else if (std::strcmp(a, "--kind=counting") == 0) {
      g_kind = blockbloom::IndexKind::kCounting;
    } else if (std::strcmp(a, "--kind=dleft") == 0) {
      g_kind = blockbloom::IndexKind::kDleft;
#endif
    } else if (std::strncmp(a, "--rounds=", 9) == 0) {
      rounds = std::max(1, std::atoi(a + 9));
    } else if (std::strncmp(a, "--reopen_keys=", 14) == 0) {
      reopen_keys = ParseList(a + 14);
    } else if (std::strncmp(a, "--benchmark_", 12) != 0) {
      std::fprintf(stderr, "unknown flag %s\n", a);
      return 1;
    }
  }
#ifdef BLOCKBLOOM_FDB_OLD_API
  (void)rounds;
  ModeGrowth(keys);
#else
  if (mode == "gets" || mode == "all") ModeGets(keys, rounds, quick);
  if (mode == "reopen" || mode == "all") ModeReopen(reopen_keys, rounds);
  if (mode == "growth" || mode == "all") ModeGrowth(keys);
#endif
  return 0;
}
