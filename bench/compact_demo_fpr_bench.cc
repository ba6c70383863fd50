// FPR and build time of the compact policy on the demo's filters: keys shaped like bench/demo.cc's
// ("user%016lld", present keys even, absent keys odd), every policy at the same bits/key, in one
// run.
//
// Two sets of filters:
//  - "synthetic": runs of --keys_per_filter consecutive present keys (the
//    issue's ~16 keys per filter), --filters of them;
//  - "real": the filters LevelDB itself builds for the demo's database
//    (--db_keys keys, 100-byte values of 'v' as the demo writes, in
//    leveldb::NewMemEnv), every CreateFilter of its flushes and
//    compactions, captured with a recording policy wrapper.
// Each filter is probed with --probes absent keys drawn from the whole key
// space. FPR = positives / probes over all filters; bytes/key = all filter
// bytes (trailers included) / all keys; build ns/key = CreateFilter time
// (this thread's CPU time, so other jobs on a shared machine do not count),
// median of --reps passes over the same filters, policies interleaved.
//
//   build/release/bench/compact_demo_fpr_bench [--bits_per_key=10]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "leveldb/db.h"
#include "leveldb/env.h"
#include "leveldb/helpers/memenv.h"
#include "leveldb/filter_policy.h"
#include "leveldb/write_batch.h"

namespace {

std::string DemoKey(int64_t i, bool present) {  // as bench/demo_support.h
  char buf[32];
  std::snprintf(buf, sizeof(buf), "user%016lld", static_cast<long long>(2 * i + (present ? 0 : 1)));
  return buf;
}

using Filter = std::vector<std::string>;

// Records the key sets LevelDB hands to CreateFilter.
class RecordingPolicy final : public leveldb::FilterPolicy {
 public:
  explicit RecordingPolicy(const leveldb::FilterPolicy* base) : base_(base) {}
  const char* Name() const override { return base_->Name(); }
  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    Filter f;
    for (int i = 0; i < n; ++i) f.push_back(keys[i].ToString());
    filters_.push_back(std::move(f));
    base_->CreateFilter(keys, n, dst);
  }
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    return base_->KeyMayMatch(key, filter);
  }
  std::vector<Filter>& filters() const { return filters_; }

 private:
  const leveldb::FilterPolicy* base_;
  mutable std::vector<Filter> filters_;
};

// The filters of the last compaction of a demo-shaped database.
std::vector<Filter> RealFilters(int64_t num_keys, double bpk) {
  std::unique_ptr<leveldb::Env> env(leveldb::NewMemEnv(leveldb::Env::Default()));
  std::unique_ptr<const leveldb::FilterPolicy> base(blockbloom::NewBlockedBloomFilterPolicy(bpk));
  RecordingPolicy policy(base.get());
  leveldb::Options options;
  options.env = env.get();
  options.create_if_missing = true;
  options.filter_policy = &policy;
  leveldb::DB* raw = nullptr;
  if (!leveldb::DB::Open(options, "/demo", &raw).ok()) std::abort();
  std::unique_ptr<leveldb::DB> db(raw);
  const std::string value(100, 'v');  // as the demo
  for (int64_t start = 0; start < num_keys; start += 1000) {
    leveldb::WriteBatch batch;
    for (int64_t i = start; i < std::min(num_keys, start + 1000); ++i) {
      batch.Put(DemoKey(i, true), value);
    }
    if (!db->Write(leveldb::WriteOptions(), &batch).ok()) std::abort();
  }
  db->CompactRange(nullptr, nullptr);  // every filter of flushes and compactions counts
  return std::move(policy.filters());
}

struct Result {
  uint64_t keys = 0, bytes = 0, probes = 0, positives = 0;
  std::vector<double> build_ns_per_key;
};

double ThreadCpuNanos() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e9 * static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void Run(const char* label, const std::vector<Filter>& filters, double bpk, int probes, int reps,
         int64_t key_space) {
  struct Contender {
    const char* name;
    std::unique_ptr<const leveldb::FilterPolicy> policy;
    Result r;
  };
  Contender cs[] = {
      {"leveldb built-in",
       std::unique_ptr<const leveldb::FilterPolicy>(
           leveldb::NewBloomFilterPolicy(static_cast<int>(bpk))),
       {}},
      {"blockbloom blocked",
       std::unique_ptr<const leveldb::FilterPolicy>(blockbloom::NewBlockedBloomFilterPolicy(bpk)),
       {}},
      {"blockbloom compact",
       std::unique_ptr<const leveldb::FilterPolicy>(blockbloom::NewCompactFilterPolicy(bpk)),
       {}},
  };
  std::vector<std::vector<leveldb::Slice>> slices;
  uint64_t total_keys = 0;
  for (const Filter& f : filters) {
    slices.emplace_back(f.begin(), f.end());
    total_keys += f.size();
  }
  std::mt19937_64 rng(42);
  std::vector<std::string> absent(static_cast<size_t>(probes));
  for (Contender& c : cs) {
    std::string dst;
    for (size_t i = 0; i < filters.size(); ++i) {
      dst.clear();
      c.policy->CreateFilter(slices[i].data(), static_cast<int>(slices[i].size()), &dst);
      c.r.keys += filters[i].size();
      c.r.bytes += dst.size();
      for (std::string& a : absent) a = DemoKey(static_cast<int64_t>(rng() % key_space), false);
      for (const std::string& a : absent) {
        ++c.r.probes;
        c.r.positives += c.policy->KeyMayMatch(a, dst);
      }
    }
  }
  std::string dst;
  for (int rep = 0; rep < reps; ++rep) {
    for (Contender& c : cs) {
      dst.clear();
      const double start = ThreadCpuNanos();
      for (auto& s : slices) {
        dst.clear();
        c.policy->CreateFilter(s.data(), static_cast<int>(s.size()), &dst);
      }
      const double ns = ThreadCpuNanos() - start;
      c.r.build_ns_per_key.push_back(ns / static_cast<double>(total_keys));
    }
  }
  std::printf(
      "\n%s: %zu filters, %.1f keys/filter on average, %.1f bits/key, %d absent probes "
      "per filter\n",
      label, filters.size(), static_cast<double>(total_keys) / filters.size(), bpk, probes);
  std::printf(
      "| policy             | bits/key all-in | FPR     | build ns/key (median of %d) | "
      "build / blocked |\n|---|---|---|---|---|\n",
      reps);
  const double blocked_ns = Median(cs[1].r.build_ns_per_key);
  for (Contender& c : cs) {
    const double ns = Median(c.r.build_ns_per_key);
    std::printf("| %-18s | %15.3f | %.3f%% | %27.1f | %15.2fx |\n", c.name,
                8.0 * c.r.bytes / c.r.keys, 100.0 * c.r.positives / c.r.probes, ns,
                ns / blocked_ns);
  }
}

int Flag(int argc, char** argv, const char* name, int fallback) {
  const size_t len = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, len) == 0 && argv[i][len] == '=')
      return std::atoi(argv[i] + len + 1);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const double bpk = Flag(argc, argv, "--bits_per_key", 10);
  const int per_filter = Flag(argc, argv, "--keys_per_filter", 16);
  const int num_filters = Flag(argc, argv, "--filters", 4000);
  const int probes = Flag(argc, argv, "--probes", 2000);
  const int reps = Flag(argc, argv, "--reps", 7);
  const int db_keys = Flag(argc, argv, "--db_keys", 200000);
  std::vector<Filter> synthetic;
  for (int f = 0; f < num_filters; ++f) {
    Filter keys;
    for (int i = 0; i < per_filter; ++i) keys.push_back(DemoKey(int64_t{f} * per_filter + i, true));
    synthetic.push_back(std::move(keys));
  }
  Run("synthetic", synthetic, bpk, probes, reps, int64_t{num_filters} * per_filter * 4);
  if (db_keys > 0) {
    const std::vector<Filter> real = RealFilters(db_keys, bpk);
    Run("real (LevelDB's own filters for the demo's database)", real, bpk, probes / 4, reps,
        db_keys * 4);
  }
  return 0;
}
