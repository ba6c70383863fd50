// End to end: LevelDB random reads of present keys (db_bench's readrandom)
// and of absent keys (readmissing) on a real on-disk database, with LevelDB's
// built-in Bloom filter against blockbloom's policy, both at 10 bits/key, in
// one run.
//
// Each database holds n keys (1,000,000; 50,000 in quick mode): 16-byte
// decimal keys of the even numbers 0, 2, ..., 2n-2, written in random order
// with 100-byte values (db_bench's fillrandom shape, snappy on), then fully
// compacted so both databases have the same shape. Absent keys are the odd
// numbers, so they fall inside every table's key range and only the filter
// can spare the data-block read. Every file read goes through a counting Env
// (reads_per_get counts RandomAccessFile::Read calls per Get: index and filter
// blocks are read when a table is opened, so in steady state these are
// data-block reads not served by the 8 MiB block cache), and a counting
// wrapper around each policy gives filter probes and "may match" answers per
// Get (for absent keys, false positives per Get). model_device_us_per_get
// is reads_per_get x 80 us: what the reads would cost on an NVMe device, a
// model (bench/demo.cc and rocksdb_e2e_bench measure a cold page cache).
//
// Databases live under $BLOCKBLOOM_BENCH_DIR (default /tmp) in a fresh
// directory, built once per process and destroyed at exit.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "leveldb/db.h"
#include "leveldb/env.h"
#include "leveldb/filter_policy.h"
#include "leveldb/write_batch.h"

namespace blockbloom {
namespace bench {
namespace {

bool g_quick = false;
bool g_failed = false;  // a Get answered wrongly: main exits non-zero
constexpr size_t kValueBytes = 100;
constexpr size_t kGetsPerIter = 1000;
// One random 4 KiB read from an NVMe device, in microseconds: the device
// latency of the model counter model_device_us_per_get (a stated
// assumption, as in the demo's --device_us).
constexpr double kDeviceMicros = 80.0;

std::atomic<uint64_t> g_reads{0};

class CountingFile final : public leveldb::RandomAccessFile {
 public:
  explicit CountingFile(leveldb::RandomAccessFile* base) : base_(base) {}
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* scratch) const override {
    g_reads.fetch_add(1, std::memory_order_relaxed);
    return base_->Read(offset, n, result, scratch);
  }

 private:
  std::unique_ptr<leveldb::RandomAccessFile> base_;
};

// Counts every RandomAccessFile::Read of every table (thread-safe: the
// counter is atomic; everything else forwards to the default Env).
class CountingEnv final : public leveldb::EnvWrapper {
 public:
  CountingEnv() : leveldb::EnvWrapper(leveldb::Env::Default()) {}
  leveldb::Status NewRandomAccessFile(const std::string& f,
                                      leveldb::RandomAccessFile** r) override {
    leveldb::RandomAccessFile* base = nullptr;
    leveldb::Status s = target()->NewRandomAccessFile(f, &base);
    *r = s.ok() ? new CountingFile(base) : nullptr;
    return s;
  }
};

// Forwards to a real policy and counts KeyMayMatch calls and "may match"
// answers, so the benchmark reports filter probes and false positives per Get
// independently of the block cache. Same overhead for both contenders.
class CountingPolicy final : public leveldb::FilterPolicy {
 public:
  explicit CountingPolicy(const leveldb::FilterPolicy* base) : base_(base) {}
  const char* Name() const override { return base_->Name(); }
  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    base_->CreateFilter(keys, n, dst);
  }
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    const bool match = base_->KeyMayMatch(key, filter);
    probes_.fetch_add(1, std::memory_order_relaxed);
    if (match) matches_.fetch_add(1, std::memory_order_relaxed);
    return match;
  }
  uint64_t probes() const { return probes_.load(); }
  uint64_t matches() const { return matches_.load(); }

 private:
  std::unique_ptr<const leveldb::FilterPolicy> base_;
  mutable std::atomic<uint64_t> probes_{0}, matches_{0};
};

CountingEnv* GetEnv() {
  static CountingEnv* env = new CountingEnv();
  return env;
}

std::string DecimalKey(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%016" PRIu64, i);
  return buf;
}

uint64_t NumKeys() { return g_quick ? 50'000 : 1'000'000; }

struct Db {
  std::string path;
  std::unique_ptr<CountingPolicy> policy;
  std::unique_ptr<leveldb::DB> db;
  leveldb::Options options;
  ~Db() {
    db.reset();
    leveldb::DestroyDB(path, options);
  }
};

std::string BaseDir() {
  static const std::string dir = [] {
    const char* root = std::getenv("BLOCKBLOOM_BENCH_DIR");
    std::string d = std::string(root != nullptr ? root : "/tmp") + "/blockbloom-e2e-" +
                    std::to_string(getpid());
    GetEnv()->CreateDir(d);
    return d;
  }();
  return dir;
}

std::unique_ptr<Db> BuildDb(bool builtin) {
  auto d = std::make_unique<Db>();
  d->path = BaseDir() + (builtin ? "/builtin" : "/blockbloom");
  d->policy = std::make_unique<CountingPolicy>(builtin ? leveldb::NewBloomFilterPolicy(10)
                                                       : NewBlockedBloomFilterPolicy(10));
  d->options.create_if_missing = true;
  d->options.error_if_exists = true;
  d->options.filter_policy = d->policy.get();
  d->options.env = GetEnv();
  leveldb::DB* raw = nullptr;
  leveldb::Status s = leveldb::DB::Open(d->options, d->path, &raw);
  if (!s.ok()) {
    std::fprintf(stderr, "open %s: %s\n", d->path.c_str(), s.ToString().c_str());
    std::abort();
  }
  d->db.reset(raw);
  const uint64_t n = NumKeys();
  std::string value(kValueBytes, 'v');
  leveldb::WriteBatch batch;
  for (uint64_t j = 0; j < n; ++j) {
    // A fixed random permutation of [0, n): i = (a*j + b) mod n, a odd and
    // coprime with n (n is a power of 10, so any a not divisible by 2 or 5).
    const uint64_t i = (j * 2654435761ull + 12345) % n;
    std::snprintf(&value[0], kValueBytes, "%016" PRIu64, i);
    batch.Put(DecimalKey(2 * i), value);
    if (batch.ApproximateSize() > (1 << 20)) {
      s = d->db->Write(leveldb::WriteOptions(), &batch);
      if (!s.ok()) std::abort();
      batch.Clear();
    }
  }
  s = d->db->Write(leveldb::WriteOptions(), &batch);
  if (!s.ok()) std::abort();
  d->db->CompactRange(nullptr, nullptr);
  return d;
}

std::unique_ptr<Db> g_dbs[2];

Db& GetDb(bool builtin) {
  std::unique_ptr<Db>& slot = g_dbs[builtin ? 0 : 1];
  if (!slot) slot = BuildDb(builtin);
  return *slot;
}

void ReadRandom(benchmark::State& state, bool builtin, bool present) {
  Db& d = GetDb(builtin);
  const uint64_t n = NumKeys();
  // n random keys: enough that repeated keys rarely find their blocks still
  // in the block cache.
  std::vector<std::string> keys(std::max<size_t>(kGetsPerIter, n / kGetsPerIter * kGetsPerIter));
  for (size_t j = 0; j < keys.size(); ++j) {
    const uint64_t i = SplitMix64Of(j + (present ? 0 : 1'000'000'007ull)) % n;
    keys[j] = DecimalKey(2 * i + (present ? 0 : 1));
  }
  // Warm the table cache so table opens (index and filter reads) are not
  // counted as per-Get reads.
  std::string value;
  for (size_t j = 0; j < std::min<size_t>(keys.size(), 20'000); ++j) {
    d.db->Get(leveldb::ReadOptions(), keys[j], &value);
  }
  uint64_t gets = 0, found = 0;
  const uint64_t reads_before = g_reads.load();
  const uint64_t probes_before = d.policy->probes(), matches_before = d.policy->matches();
  size_t cursor = 0;
  for (auto _ : state) {
    for (size_t j = 0; j < kGetsPerIter; ++j) {
      found += d.db->Get(leveldb::ReadOptions(), keys[cursor + j], &value).ok();
    }
    gets += kGetsPerIter;
    cursor += kGetsPerIter;
    if (cursor == keys.size()) cursor = 0;
  }
  const uint64_t reads = g_reads.load() - reads_before;
  const uint64_t probes = d.policy->probes() - probes_before;
  const uint64_t matches = d.policy->matches() - matches_before;
  if ((present && found != gets) || (!present && found != 0)) {
    g_failed = true;
    state.SkipWithError(present ? "a present key was not found" : "an absent key was found");
  }
  state.counters["ns_per_get"] = benchmark::Counter(
      static_cast<double>(gets) * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["reads_per_get"] =
      gets == 0 ? 0.0 : static_cast<double>(reads) / static_cast<double>(gets);
  // The disk-bound view, a MODEL: the device time these reads would cost if
  // each were a random 4 KiB NVMe read of kDeviceMicros (the page cache
  // serves them here). Add it to the measured time per Get.
  state.counters["model_device_us_per_get"] = state.counters["reads_per_get"] * kDeviceMicros;
  const double g = gets == 0 ? 1.0 : static_cast<double>(gets);
  state.counters["filter_probes_per_get"] = static_cast<double>(probes) / g;
  // For absent keys every match is a false positive.
  state.counters["filter_matches_per_get"] = static_cast<double>(matches) / g;
  state.counters["keys"] = static_cast<double>(n);
  state.counters["keys_per_iter"] = static_cast<double>(kGetsPerIter);
  state.SetItemsProcessed(static_cast<int64_t>(gets));
}

void RegisterAll() {
  const std::string n = std::to_string(NumKeys());
  for (bool present : {true, false}) {
    for (bool builtin : {true, false}) {
      const std::string name = std::string("e2e/") + (builtin ? "leveldb" : "blockbloom") + "/" +
                               (present ? "readrandom" : "readmissing") + "/" + n;
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) {
        ReadRandom(s, builtin, present);
      })->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace
}  // namespace bench
}  // namespace blockbloom

int main(int argc, char** argv) {
  blockbloom::bench::g_quick = blockbloom::bench::ConsumeQuickFlag(&argc, argv);
  benchmark::AddCustomContext("blockbloom_mode", blockbloom::bench::g_quick ? "quick" : "full");
  blockbloom::bench::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (blockbloom::bench::g_dbs[0] || blockbloom::bench::g_dbs[1]) {
    for (auto& db : blockbloom::bench::g_dbs) db.reset();  // DestroyDB
    blockbloom::bench::GetEnv()->RemoveDir(blockbloom::bench::BaseDir());
  }
  return blockbloom::bench::g_failed ? 1 : 0;
}
