// FilteredDB against plain LevelDB, side by side in one run, keys prepared
// outside every timed loop (bench_common.h's 16-byte keys, 100-byte values).
//
//   build/default/bench/filtered_db_bench [--mode=gets|absent|reopen|growth|sizes|all]
//       [--keys=1000000] [--rounds=3] [--reopen_keys=1000000,10000000]
//       [--sizes=1,1000,100000,1000000,10000000] [--kind=dleft|counting] [--quick]
//
//  gets    A --keys database (LevelDB with its built-in Bloom filter,
//          leveldb::NewBloomFilterPolicy(10), compacted), copied file by file
//          into a second directory: plain LevelDB opens one copy, FilteredDB
//          (--kind index) the other, both open at once. Every measurement
//          (Get of absent keys at 1 and 2 threads, Get of present keys, Put of
//          new keys) runs the SAME keys on both, in chunks that alternate
//          between the two (ABBA order), so both see the same background load
//          on a shared machine; each round sums its chunks per side. Medians
//          over rounds, and the ratios, in CPU ns per operation per thread
//          (CLOCK_THREAD_CPUTIME_ID: robust to other processes' time slices)
//          and in wall ns (measured inside each thread).
//          The absent Get at 1 thread also runs FLOORS in the same schedule:
//          leveldb::DB stand-ins whose Get does one part of FilteredDB's
//          absent Get (hash + NotFound; hash alone; one random line load from
//          an array the size of the front filter, independent or dependent
//          across Gets, and at 1/2 and 1/4 of that size; the front filter's
//          probe alone), so FilteredDB's time reads as a multiple of its
//          memory floor. A second schedule times the index sides warm (each
//          chunk run twice, the second timed).
//  absent  Only the absent-Get schedules of `gets` (for A/B runs, profiles).
//  reopen  For each --reopen_keys size: FilteredDB's Open from the saved
//          index file vs Open by scan rebuild (index file moved away), and
//          plain LevelDB's Open; ms and ms per million keys. Page cache warm
//          for all (the scan reads every table; state of the machine, not of
//          the code).
//  growth  A --keys database opened with the index sized for it; Puts of new
//          keys until the index has grown (a rebuild) and as many again;
//          every Put's latency: p50, p99, p99.9, max, and Puts over 1 ms.
//          Built with -DBLOCKBLOOM_FDB_OLD_API against a tree whose growth
//          held the writers (FilteredDB before its background rebuild), the
//          same mode times that growth.
//  sizes   For each --sizes count n: a new database with default
//          FilteredDBOptions (and --kind), n keys written through FilteredDB
//          in batches of 1000 (the index grows from its first size), then:
//          index memory and bytes per live key against the budget (4 B/key +
//          256 KiB), the growth rebuilds it took, the index's measured FPR
//          over 1,000,000 absent Gets (passes that LevelDB answered NotFound,
//          from the index's own counters), and the index file's size after
//          close.
//
// The databases live under $TMPDIR (or /tmp) and are removed at exit.
// BLOCKBLOOM_BENCH_QUICK=1 or --quick: 20,000 keys, one round (CI).
// Google Benchmark flags (--benchmark_*) are accepted and ignored.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <ctime>
#include <filesystem>
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
#include "common/large_allocator.h"
#include "common/xxh3_inline.h"
#include "filtered_db/key_index.h"
#include "range_reduction.h"
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

// `count` keys stored back to back (16 bytes each, no per-key object): the
// timed loops read them sequentially and build a Slice, nothing else.
class KeySet {
 public:
  void Add(uint64_t id) {
    bytes_.resize(bytes_.size() + blockbloom::bench::kKeyBytes);
    blockbloom::bench::WriteKey(id, &bytes_[bytes_.size() - blockbloom::bench::kKeyBytes]);
  }
  size_t size() const { return bytes_.size() / blockbloom::bench::kKeyBytes; }
  leveldb::Slice operator[](size_t i) const {
    return leveldb::Slice(bytes_.data() + i * blockbloom::bench::kKeyBytes,
                          blockbloom::bench::kKeyBytes);
  }

 private:
  std::vector<char> bytes_;
};

KeySet Keys(uint64_t count, uint64_t n, uint64_t offset, bool absent) {
  KeySet keys;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t j = blockbloom::bench::SplitMix64Of(i + offset) % n;
    keys.Add(2 * j + (absent ? 1 : 0));
  }
  return keys;
}

#ifndef BLOCKBLOOM_FDB_OLD_API

struct Timing {
  double cpu_ns = 0;   // CPU ns per operation (per thread)
  double wall_ns = 0;  // wall ns per operation per thread
};

// Time spent by one side over a round's chunks, summed over threads.
struct Totals {
  double cpu_s = 0;
  double wall_s = 0;
  double ops = 0;  // operations per thread
  Timing PerOp() const { return {cpu_s * 1e9 / ops, wall_s * 1e9 / ops}; }
};

// A floor whose answers are not the database's (HashOkFloor): not checked.
const leveldb::DB* g_unchecked_db = nullptr;

// Gets of keys[begin, end) (thread t takes every threads-th key); adds each
// thread's CPU and wall time, measured inside the thread (thread start-up is
// not timed), averaged over the threads. `expect_found` is checked.
void TimeGets(leveldb::DB* db, const KeySet& keys, size_t begin, size_t end, int threads,
              bool expect_found, Totals* totals) {
  std::vector<std::thread> pool;
  std::vector<uint64_t> wrong(threads, 0);
  std::vector<double> cpu(threads, 0.0), wall(threads, 0.0);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::string value;
      const leveldb::ReadOptions read_options;
      uint64_t my_wrong = 0;  // a local: no line shared between the threads
      const auto wall0 = Clock::now();
      const double cpu0 = ThreadCpuSeconds();
      for (size_t i = begin + t; i < end; i += threads) {
        const bool found = db->Get(read_options, keys[i], &value).ok();
        my_wrong += found != expect_found;
      }
      cpu[t] = ThreadCpuSeconds() - cpu0;
      wall[t] = Seconds(wall0, Clock::now());
      wrong[t] = my_wrong;
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) {
    if (wrong[t] != 0 && db != g_unchecked_db) {
      std::fprintf(stderr, "wrong answers: %" PRIu64 "\n", wrong[t]);
      std::exit(1);
    }
    totals->cpu_s += cpu[t] / threads;
    totals->wall_s += wall[t] / threads;
  }
  totals->ops += static_cast<double>(end - begin) / threads;
}

void TimePuts(leveldb::DB* db, const KeySet& keys, size_t begin, size_t end, Totals* totals) {
  const std::string value(100, 'w');
  const leveldb::WriteOptions write_options;
  const auto wall0 = Clock::now();
  const double cpu0 = ThreadCpuSeconds();
  for (size_t i = begin; i < end; ++i) Check(db->Put(write_options, keys[i], value), "put");
  totals->cpu_s += ThreadCpuSeconds() - cpu0;
  totals->wall_s += Seconds(wall0, Clock::now());
  totals->ops += static_cast<double>(end - begin);
}

// Runs one measurement on both sides: `chunks` slices of [0, count), each
// slice on both, alternating which side goes first (ABBA). run(db, begin,
// end, totals) does the timed work.
template <typename Run>
void Alternate(leveldb::DB* plain, leveldb::DB* fdb, size_t count, size_t chunks, Run&& run,
               std::vector<Timing>* plain_out, std::vector<Timing>* fdb_out) {
  Totals p, f;
  for (size_t c = 0; c < chunks; ++c) {
    const size_t begin = count * c / chunks, end = count * (c + 1) / chunks;
    if (c % 2 == 0) {
      run(plain, begin, end, &p);
      run(fdb, begin, end, &f);
    } else {
      run(fdb, begin, end, &f);
      run(plain, begin, end, &p);
    }
  }
  plain_out->push_back(p.PerOp());
  fdb_out->push_back(f.PerOp());
}

void Warm(leveldb::DB* db, uint64_t n) {
  std::string value;
  for (uint64_t i = 0; i < n; i += 7) {
    db->Get(leveldb::ReadOptions(), Key(2 * i + 1), &value);
    db->Get(leveldb::ReadOptions(), Key(2 * i), &value);
  }
}

// Floors for the absent Get: leveldb::DB stand-ins whose Get does a part of
// what FilteredDB's absent Get does and nothing else, timed through the same
// virtual call, the same loop and the same alternating schedule (so the same
// cache pressure from plain LevelDB's chunks). FilteredDB's absent Get is
// then reported as a multiple of each. Every method but Get is unused.
class FloorDB : public leveldb::DB {
 public:
  leveldb::Status Put(const leveldb::WriteOptions&, const leveldb::Slice&,
                      const leveldb::Slice&) override {
    return Unused();
  }
  leveldb::Status Delete(const leveldb::WriteOptions&, const leveldb::Slice&) override {
    return Unused();
  }
  leveldb::Status Write(const leveldb::WriteOptions&, leveldb::WriteBatch*) override {
    return Unused();
  }
  leveldb::Iterator* NewIterator(const leveldb::ReadOptions&) override { return nullptr; }
  const leveldb::Snapshot* GetSnapshot() override { return nullptr; }
  void ReleaseSnapshot(const leveldb::Snapshot*) override {}
  bool GetProperty(const leveldb::Slice&, std::string*) override { return false; }
  void GetApproximateSizes(const leveldb::Range*, int n, uint64_t* sizes) override {
    std::fill(sizes, sizes + n, 0);
  }
  void CompactRange(const leveldb::Slice*, const leveldb::Slice*) override {}

 protected:
  static uint64_t Hash(const leveldb::Slice& key) {
    return blockbloom::internal::InlineHashBytes(key.data(), key.size());
  }
  // What an absent Get returns (leveldb::Status allocates its message: a
  // new[] here and a delete[] in the caller, as for every NotFound).
  static leveldb::Status NotFound() { return leveldb::Status::NotFound(leveldb::Slice()); }

 private:
  static leveldb::Status Unused() { return leveldb::Status::NotSupported("floor"); }
};

// Hash the key (inline XXH3, as FilteredDB) and return NotFound: the work an
// absent Get cannot avoid with this API, without any memory access.
class HashOnlyFloor final : public FloorDB {
 public:
  leveldb::Status Get(const leveldb::ReadOptions&, const leveldb::Slice& key,
                      std::string*) override {
    // A branch on the hash keeps it live, as the index's probe does.
    if (Hash(key) == 0x5EED) return leveldb::Status::OK();
    return NotFound();
  }
};

// Hash only, returning OK (no allocation): with HashOnlyFloor, the split
// between the hash and call and NotFound's new[]/delete[].
class HashOkFloor final : public FloorDB {
 public:
  leveldb::Status Get(const leveldb::ReadOptions&, const leveldb::Slice& key,
                      std::string*) override {
    if (Hash(key) == 0x5EED) return NotFound();
    return leveldb::Status::OK();
  }
};

// Hash, then ONE load from a random 64-byte line of an array the size of
// FilteredDB's front filter (same allocator: 2 MiB aligned, THP), then
// NotFound. Loads of successive Gets are independent (their misses may
// overlap, as FilteredDB's may).
class LineLoadFloor final : public FloorDB {
 public:
  explicit LineLoadFloor(uint64_t lines) : lines_(lines * 8, 1) {}
  leveldb::Status Get(const leveldb::ReadOptions&, const leveldb::Slice& key,
                      std::string*) override {
    const uint64_t line = blockbloom::internal::FastRange64(Hash(key), lines_.size() / 8);
    if (lines_[line * 8] == 0) return leveldb::Status::OK();  // never: every word is 1
    return NotFound();
  }

 private:
  std::vector<uint64_t, blockbloom::internal::LargeAllocator<uint64_t>> lines_;
};

// As LineLoadFloor, but each Get's line also depends on the word the previous
// Get loaded (a pointer chase through the Gets): no two misses overlap, so
// this is the full latency of one random line load from that array.
class DependentLoadFloor final : public FloorDB {
 public:
  explicit DependentLoadFloor(uint64_t lines) : lines_(lines * 8, 0) {}
  leveldb::Status Get(const leveldb::ReadOptions&, const leveldb::Slice& key,
                      std::string*) override {
    // Every word is 0, so `last_` stays 0 but the compiler cannot know.
    const uint64_t line = blockbloom::internal::FastRange64(Hash(key) ^ last_, lines_.size() / 8);
    last_ = lines_[line * 8];
    if (last_ == 1) return leveldb::Status::OK();
    return NotFound();
  }

 private:
  std::vector<uint64_t, blockbloom::internal::LargeAllocator<uint64_t>> lines_;
  uint64_t last_ = 0;
};

// Hash, then the probe of a FrontFilter with the geometry and contents of
// FilteredDB's (the same n keys inserted): the index's absent-key work
// inlined, without FilteredDB's reader slot, index pointer or counters.
class FrontFilterFloor final : public FloorDB {
 public:
  FrontFilterFloor(uint64_t capacity, uint64_t n)
      : front_(blockbloom::FrontFilter::BlocksFor(capacity)) {
    for (uint64_t i = 0; i < n; ++i) front_.Insert(Hash(Key(2 * i)));
  }
  leveldb::Status Get(const leveldb::ReadOptions&, const leveldb::Slice& key,
                      std::string*) override {
    // A pass (a false positive, ~1%) answers NotFound too: a floor.
    if (front_.MayContain(Hash(key)) && key.size() == 0) return leveldb::Status::OK();
    return NotFound();
  }
  uint64_t memory_bytes() const { return front_.memory_bytes(); }

 private:
  blockbloom::FrontFilter front_;
};

// One side of a measurement: a database (or floor) and its label.
struct Side {
  const char* name;
  leveldb::DB* db;
  bool warm_first;  // run each chunk once untimed, then timed (cache warm)
};

// Runs one measurement on N sides: `chunks` slices of [0, count), each slice
// on every side, in order on even chunks and in reverse order on odd ones
// (ABBA generalised), so each side follows each other about as often.
template <typename Run>
void AlternateSides(const std::vector<Side>& sides, size_t count, size_t chunks, Run&& run,
                    std::vector<std::vector<Timing>>* out) {
  std::vector<Totals> totals(sides.size());
  for (size_t c = 0; c < chunks; ++c) {
    const size_t begin = count * c / chunks, end = count * (c + 1) / chunks;
    for (size_t j = 0; j < sides.size(); ++j) {
      const size_t s = c % 2 == 0 ? j : sides.size() - 1 - j;
      if (sides[s].warm_first) {
        Totals discard;
        run(sides[s].db, begin, end, &discard);
      }
      run(sides[s].db, begin, end, &totals[s]);
    }
  }
  out->resize(sides.size());
  for (size_t s = 0; s < sides.size(); ++s) (*out)[s].push_back(totals[s].PerOp());
}

blockbloom::IndexKind g_kind = blockbloom::IndexKind::kDleft;

void ModeGets(uint64_t n, int rounds, bool quick, bool absent_only) {
  const std::string plain_path = TmpPath("gets_plain");
  const std::string fdb_path = TmpPath("gets_fdb");
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
  blockbloom::DestroyFilteredDB(plain_path, leveldb::Options());
  blockbloom::DestroyFilteredDB(fdb_path, leveldb::Options());
  BuildDatabase(plain_path, n, policy.get());
  // The same tables, byte for byte, for the FilteredDB side.
  std::error_code ec;
  std::filesystem::copy(plain_path, fdb_path, std::filesystem::copy_options::recursive, ec);
  if (ec) {
    std::fprintf(stderr, "copy %s: %s\n", plain_path.c_str(), ec.message().c_str());
    std::exit(1);
  }
  leveldb::Options options;
  options.filter_policy = policy.get();
  blockbloom::FilteredDBOptions fdb_options;
  fdb_options.kind = g_kind;  // otherwise the defaults
  const uint64_t gets = quick ? 20000 : 400000;
  const uint64_t puts = quick ? 5000 : 50000;
  // Chunks: many, for pairing the two sides in time; not so small that the
  // index starts each absent-Get chunk cold (its front filter is ~2 MB at
  // 1M keys: ~30,000 probes to warm).
  const size_t absent_chunks = quick ? 2 : 8;    // 50,000 Gets each
  const size_t present_chunks = quick ? 2 : 20;  // 20,000 Gets each
  const size_t put_chunks = quick ? 2 : 10;      // 5,000 Puts each
  // Prepared once, outside every timed loop.
  const KeySet absent = Keys(gets, n, 0, true);
  const KeySet present = Keys(gets, n, 1u << 30, false);
  leveldb::DB* raw = nullptr;
  Check(leveldb::DB::Open(options, plain_path, &raw), "open plain");
  std::unique_ptr<leveldb::DB> plain(raw);
  Check(blockbloom::OpenFilteredDB(fdb_options, options, fdb_path, &raw), "open FilteredDB");
  std::unique_ptr<leveldb::DB> fdb(raw);
  Warm(plain.get(), n);
  Warm(fdb.get(), n);
  // The floors, sized like FilteredDB's front filter now (its capacity).
  const uint64_t capacity = static_cast<blockbloom::FilteredDB*>(fdb.get())->index_stats().capacity;
  FrontFilterFloor front_floor(capacity, n);
  const uint64_t front_lines = front_floor.memory_bytes() / 64;
  LineLoadFloor line_floor(front_lines);
  DependentLoadFloor dependent_floor(front_lines);
  HashOnlyFloor hash_floor;
  HashOkFloor hash_ok_floor;
  g_unchecked_db = &hash_ok_floor;
  LineLoadFloor half_floor(front_lines / 2), quarter_floor(front_lines / 4);
  // Absent Gets at 1 thread, every side in one schedule. Sides 0 and 1 are
  // plain LevelDB and FilteredDB, as in every other measurement.
  const std::vector<Side> absent_sides = {
      {"plain LevelDB (built-in Bloom filter)", plain.get(), false},
      {"FilteredDB", fdb.get(), false},
      {"floor: FrontFilter probe alone", &front_floor, false},
      {"floor: 1 random line load", &line_floor, false},
      {"floor: 1 dependent random line load", &dependent_floor, false},
      {"floor: hash + NotFound only", &hash_floor, false},
      {"floor: hash only (returns OK)", &hash_ok_floor, false},
      {"floor: 1 random line load, 1/2 size", &half_floor, false},
      {"floor: 1 random line load, 1/4 size", &quarter_floor, false},
  };
  // A second schedule with each chunk run twice on the index sides, the
  // second time timed: their filter lines are then in cache (a workload of
  // mostly absent Gets keeps them there). Separate from the first so that no
  // side there runs after another pass over FilteredDB's same lines.
  const std::vector<Side> warm_sides = {
      {"plain LevelDB (built-in Bloom filter)", plain.get(), false},
      {"FilteredDB, each chunk twice (warm)", fdb.get(), true},
      {"floor: FrontFilter probe, warm", &front_floor, true},
  };
  std::vector<std::vector<Timing>> abs_sides, warm_out;
  std::vector<Timing> p_abs, p_abs2, p_pres, p_put, f_abs1, f_abs2, f_pres, f_put;
  const auto gets_of = [](const KeySet& keys, int threads, bool found) {
    return [&keys, threads, found](leveldb::DB* db, size_t begin, size_t end, Totals* t) {
      TimeGets(db, keys, begin, end, threads, found, t);
    };
  };
  // Gets first (no writes: no compaction running), then Puts.
  for (int r = 0; r < rounds; ++r) {
    AlternateSides(absent_sides, gets, absent_chunks, gets_of(absent, 1, false), &abs_sides);
    AlternateSides(warm_sides, gets, absent_chunks, gets_of(absent, 1, false), &warm_out);
    p_abs.push_back(abs_sides[0].back());
    f_abs1.push_back(abs_sides[1].back());
    if (absent_only) continue;
    Alternate(plain.get(), fdb.get(), gets, absent_chunks / 2, gets_of(absent, 2, false), &p_abs2,
              &f_abs2);
    Alternate(plain.get(), fdb.get(), gets, present_chunks, gets_of(present, 1, true), &p_pres,
              &f_pres);
  }
  uint64_t new_key = uint64_t{1} << 40;
  for (int r = 0; r < rounds && !absent_only; ++r) {
    KeySet new_keys;  // the same new keys on both sides
    for (uint64_t i = 0; i < puts; ++i) new_keys.Add(new_key++);
    Alternate(
        plain.get(), fdb.get(), puts, put_chunks,
        [&new_keys](leveldb::DB* db, size_t begin, size_t end, Totals* t) {
          TimePuts(db, new_keys, begin, end, t);
        },
        &p_put, &f_put);
  }
  std::string last_stats;
  fdb->GetProperty("blockbloom.stats", &last_stats);
  plain.reset();
  fdb.reset();
  std::printf("FilteredDB stats at the end:\n%s", last_stats.c_str());
  std::printf("\n%" PRIu64 " keys, %d rounds (median), %" PRIu64 " Gets / %" PRIu64
              " Puts per measurement, in %zu (absent) / %zu (present) / %zu (Put) alternating"
              " chunks\n",
              n, rounds, gets, puts, absent_chunks, present_chunks, put_chunks);
  const auto med = [](const std::vector<Timing>& v, bool cpu) {
    std::vector<double> x;
    for (const Timing& t : v) x.push_back(cpu ? t.cpu_ns : t.wall_ns);
    return Median(x);
  };
  // One table per schedule: each side's median, plain LevelDB over it (the
  // speedup), and it over FilteredDB's absent Get (side 1 of that schedule).
  const auto side_table = [&](const char* title, const std::vector<Side>& sides,
                              const std::vector<std::vector<Timing>>& t) {
    std::printf("%s\n%-40s %9s %9s %9s %10s\n", title, "side", "cpu ns", "wall ns", "LDB/this",
                "this/FDB");
    for (size_t i = 0; i < sides.size(); ++i) {
      const double cpu = med(t[i], true);
      std::printf("%-40s %9.1f %9.1f %8.1fx %10.3f\n", sides[i].name, cpu, med(t[i], false),
                  med(t[0], true) / cpu, cpu / med(t[1], true));
    }
    std::printf("per round (cpu ns, in the order above):");
    for (int r = 0; r < rounds; ++r) {
      std::printf(" [");
      for (size_t i = 0; i < sides.size(); ++i) {
        std::printf("%s%.0f", i == 0 ? "" : " ", t[i][r].cpu_ns);
      }
      std::printf("]");
    }
    std::printf("\n\n");
  };
  std::printf("\nfront filter: %.2f MB, %" PRIu64 " lines (capacity %" PRIu64 " keys)\n",
              static_cast<double>(front_floor.memory_bytes()) / 1e6, front_lines, capacity);
  side_table(
      "absent Get, 1 thread, sides alternating (even chunks in this order, odd chunks"
      " reversed):",
      absent_sides, abs_sides);
  side_table("absent Get, 1 thread, index sides warm (each chunk run twice, the second timed):",
             warm_sides, warm_out);
  if (absent_only) {
    std::printf("absent Get speedup (cpu): %.1fx at 1 thread\n",
                med(p_abs, true) / med(f_abs1, true));
    blockbloom::DestroyFilteredDB(plain_path, leveldb::Options());
    blockbloom::DestroyFilteredDB(fdb_path, leveldb::Options());
    return;
  }
  std::printf("%-34s %10s %10s %7s | %10s %10s %7s\n", "operation (ns per op per thread)",
              "LDB cpu", "FDB cpu", "ratio", "LDB wall", "FDB wall", "ratio");
  const auto row = [&](const char* name, const std::vector<Timing>& plain_t,
                       const std::vector<Timing>& fdb_t) {
    std::printf("%-34s %10.1f %10.1f %7.3f | %10.1f %10.1f %7.3f\n", name, med(plain_t, true),
                med(fdb_t, true), med(fdb_t, true) / med(plain_t, true), med(plain_t, false),
                med(fdb_t, false), med(fdb_t, false) / med(plain_t, false));
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
  std::printf("per round (cpu ns, plain / FilteredDB):");
  for (int r = 0; r < rounds; ++r) {
    std::printf(" [abs %.0f/%.0f pres %.0f/%.0f put %.0f/%.0f]", p_abs[r].cpu_ns, f_abs1[r].cpu_ns,
                p_pres[r].cpu_ns, f_pres[r].cpu_ns, p_put[r].cpu_ns, f_put[r].cpu_ns);
  }
  std::printf("\n");
  blockbloom::DestroyFilteredDB(plain_path, leveldb::Options());
  blockbloom::DestroyFilteredDB(fdb_path, leveldb::Options());
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
    blockbloom::FilteredDBOptions fdb_options;  // the defaults
    {                                           // first open scans; its close saves the index
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

void ModeSizes(const std::vector<uint64_t>& sizes) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
  std::printf(
      "| live keys | index memory | B per live key | budget 4 B/key + 256 KiB | index file "
      "| measured FPR (absent Gets) | model FPR | rebuilds | write s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (uint64_t n : sizes) {
    const std::string path = TmpPath("sizes");
    blockbloom::DestroyFilteredDB(path, leveldb::Options());
    leveldb::Options options;
    options.create_if_missing = true;
    options.filter_policy = policy.get();
    options.write_buffer_size = 16 << 20;
    blockbloom::FilteredDBOptions fdb_options;  // the defaults
    fdb_options.kind = g_kind;
    leveldb::DB* raw = nullptr;
    Check(blockbloom::OpenFilteredDB(fdb_options, options, path, &raw), "open");
    auto* fdb = static_cast<blockbloom::FilteredDB*>(raw);
    const std::string value(100, 'v');
    const auto t0 = Clock::now();
    for (uint64_t i = 0; i < n;) {
      leveldb::WriteBatch batch;
      for (int j = 0; j < 1000 && i < n; ++j, ++i) batch.Put(Key(2 * i), value);
      Check(fdb->Write(leveldb::WriteOptions(), &batch), "write");
    }
    fdb->WaitForGrowth();
    const double write_s = Seconds(t0, Clock::now());
    const blockbloom::FilteredDBStats grown = fdb->index_stats();
    constexpr uint64_t kAbsent = 1000000;
    std::string v;
    uint64_t x = 12345;
    for (uint64_t a = 0; a < kAbsent; ++a) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const leveldb::Status s = fdb->Get(leveldb::ReadOptions(), Key(2 * (x >> 24) + 1), &v);
      if (!s.IsNotFound()) std::exit(4);
    }
    const blockbloom::FilteredDBStats probed = fdb->index_stats();
    const uint64_t ruled_out = probed.gets_ruled_out - grown.gets_ruled_out;
    const uint64_t false_passes = probed.passes_not_found - grown.passes_not_found;
    const double fpr =
        static_cast<double>(false_passes) / static_cast<double>(ruled_out + false_passes);
    delete raw;  // saves the index
    const uint64_t file_bytes = std::filesystem::file_size(path + "/BLOCKBLOOM-INDEX");
    const double budget = 4.0 * static_cast<double>(n) + 256 * 1024;
    std::printf(
        "| %" PRIu64 " | %" PRIu64 " B | %.2f | %.0f B (%s) | %" PRIu64 " B (%s) | %.4f%% (%" PRIu64
        " of %" PRIu64 ") | %.4f%% | %" PRIu64 " | %.1f |\n",
        n, grown.memory_bytes, static_cast<double>(grown.memory_bytes) / static_cast<double>(n),
        budget, grown.memory_bytes <= budget ? "met" : "NOT met", file_bytes,
        static_cast<double>(file_bytes) <= budget ? "met" : "NOT met", 100.0 * fpr, false_passes,
        ruled_out + false_passes, 100.0 * grown.estimated_fpr, grown.rebuilds, write_s);
    std::fflush(stdout);
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
  std::vector<uint64_t> sizes = {1, 1000, 100000, 1000000, 10000000};
  if (quick) sizes = {1, 1000, 20000};
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
    } else if (std::strncmp(a, "--sizes=", 8) == 0) {
      sizes = ParseList(a + 8);
    } else if (std::strncmp(a, "--benchmark_", 12) != 0) {
      std::fprintf(stderr, "unknown flag %s\n", a);
      return 1;
    }
  }
#ifdef BLOCKBLOOM_FDB_OLD_API
  (void)rounds;
  (void)sizes;
  ModeGrowth(keys);
#else
  if (mode == "gets" || mode == "all") ModeGets(keys, rounds, quick, false);
  if (mode == "absent") ModeGets(keys, rounds, quick, true);
  if (mode == "reopen" || mode == "all") ModeReopen(reopen_keys, rounds);
  if (mode == "growth" || mode == "all") ModeGrowth(keys);
  if (mode == "sizes") ModeSizes(sizes);
#endif
  return 0;
}
