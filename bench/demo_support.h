// Pieces of the demo that are not the experiment itself: a FilterPolicy
// decorator that measures, the loader with its progress bar, latency
// summaries, a temporary directory.
#ifndef BLOCKBLOOM_BENCH_DEMO_SUPPORT_H_
#define BLOCKBLOOM_BENCH_DEMO_SUPPORT_H_

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "blockbloom/read_counting_env.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"
#include "leveldb/write_batch.h"

namespace blockbloom {
namespace demo {

[[noreturn]] inline void Die(const std::string& message) {
  std::fprintf(stderr, "blockbloom-demo: %s\n", message.c_str());
  std::exit(1);
}

inline std::string Format(const char* fmt, ...) {
  char buf[128];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return buf;
}

// Present keys are "user%016d" with an even number, absent ones odd: the
// absent keys fall between present ones, inside every table's key range.
inline std::string DemoKey(int64_t i, bool present) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "user%016lld", static_cast<long long>(2 * i + (present ? 0 : 1)));
  return buf;
}

struct FilterStats {
  uint64_t keys = 0, bytes = 0, nanos = 0;
  double fpr = 0;
  double BytesPerKey() const { return keys ? static_cast<double>(bytes) / keys : 0; }
  double NanosPerKey() const { return keys ? static_cast<double>(nanos) / keys : 0; }
};

// Decorates a policy (same Name(), same bytes) and measures it. Per-key
// ratios stay exact even when compaction rewrites a table: its keys and bytes
// are then counted again, both.
class CountingPolicy final : public leveldb::FilterPolicy {
 public:
  explicit CountingPolicy(const leveldb::FilterPolicy* base) : base_(base) {}
  const char* Name() const override { return base_ ? base_->Name() : "none"; }
  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    const size_t before = dst->size();
    const auto start = std::chrono::steady_clock::now();
    base_->CreateFilter(keys, n, dst);
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - start);
    keys_ += n;
    bytes_ += dst->size() - before;
    nanos_ += nanos.count();
  }
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    const bool match = base_->KeyMayMatch(key, filter);
    probes_.fetch_add(1, std::memory_order_relaxed);
    if (match) positives_.fetch_add(1, std::memory_order_relaxed);
    return match;
  }
  FilterStats Snapshot() const { return {keys_.load(), bytes_.load(), nanos_.load(), 0}; }
  void ResetProbes() {
    probes_ = 0;
    positives_ = 0;
  }
  // NaN when no probe reached the filter (e.g. an index answered every Get).
  double ProbeFpr() const {
    return probes_ ? static_cast<double>(positives_) / probes_ : std::nan("");
  }

 private:
  const leveldb::FilterPolicy* base_;
  mutable std::atomic<uint64_t> keys_{0}, bytes_{0}, nanos_{0}, probes_{0}, positives_{0};
};

// What the demo needs of a database: plain leveldb::DB or FilteredDB.
struct Store {
  std::function<leveldb::Status(leveldb::WriteBatch*)> write;
  std::function<leveldb::Status(const std::string&, std::string*)> get;
  std::function<void()> compact;
};

// Loads keys 0..n-1 in key order in batches, then compacts everything.
inline void Load(const Store& db, int64_t n, int value_size, const std::string& label) {
  const bool tty = isatty(STDERR_FILENO);
  std::string value(static_cast<size_t>(value_size), 'v');
  constexpr int64_t kBatch = 1000;
  int last_percent = -1;
  for (int64_t start = 0; start < n; start += kBatch) {
    leveldb::WriteBatch batch;
    for (int64_t i = start; i < std::min(n, start + kBatch); ++i) {
      // Vary values so blocks do not compress to nothing.
      for (size_t j = 0; j < value.size(); j += 8) value[j] = static_cast<char>('a' + (i + j) % 26);
      batch.Put(DemoKey(i, true), value);
    }
    leveldb::Status s = db.write(&batch);
    if (!s.ok()) Die("write: " + s.ToString());
    const int percent = static_cast<int>(100 * std::min(n, start + kBatch) / n);
    if (percent != last_percent && (tty || percent % 25 == 0)) {
      last_percent = percent;
      const int bars = percent / 4;
      std::fprintf(stderr, "%sloading %-26s [%s%s] %3d%%%s", tty ? "\r" : "", label.c_str(),
                   std::string(bars, '#').c_str(), std::string(25 - bars, ' ').c_str(), percent,
                   tty ? "" : "\n");
    }
  }
  db.compact();
  if (tty) std::fprintf(stderr, "\n");
}

struct LatencySummary {
  double p50 = 0, p99 = 0;
};

inline LatencySummary Summarize(std::vector<double>* micros) {
  if (micros->empty()) return {};
  std::sort(micros->begin(), micros->end());
  const auto at = [&](double q) { return (*micros)[static_cast<size_t>(q * (micros->size() - 1))]; };
  return {at(0.50), at(0.99)};
}

// A fresh directory under $TMPDIR, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "blockbloom-demo-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) Die("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace demo
}  // namespace blockbloom

#endif  // BLOCKBLOOM_BENCH_DEMO_SUPPORT_H_
