// Pieces of the demo that are not the experiment itself: a FilterPolicy
// decorator that measures, the loader with its progress bar, latency
// summaries, a temporary directory, and the cold-cache machinery (a pread
// Env whose files the page cache can drop, posix_fadvise(DONTNEED), a
// mincore residency check).
#ifndef BLOCKBLOOM_BENCH_DEMO_SUPPORT_H_
#define BLOCKBLOOM_BENCH_DEMO_SUPPORT_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

#include "testing/read_counting_env.h"
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

// What the policy's CreateFilter calls cost. `nanos` is the clock's reading
// around each call, which includes the clock's own cost (TimerCostNanos):
// NanosPerKey takes that out, so that filters of a few keys (values of KiBs)
// are not charged a clock read as large as their build.
struct FilterStats {
  uint64_t keys = 0, bytes = 0, nanos = 0, filters = 0;
  double fpr = 0;
  double BytesPerKey() const { return keys ? static_cast<double>(bytes) / keys : 0; }
  double KeysPerFilter() const { return filters ? static_cast<double>(keys) / filters : 0; }
  double NanosPerKey(double timer_cost_ns) const {
    if (keys == 0) return 0;
    const double work = static_cast<double>(nanos) - timer_cost_ns * static_cast<double>(filters);
    return std::max(0.0, work) / static_cast<double>(keys);
  }
};

// The mean reading of an empty interval of std::chrono::steady_clock (two
// now() calls back to back, as CountingPolicy takes around each build): the
// clock's own share of every interval it times. A mean, not a median: the
// clock ticks coarsely on some virtual machines (10 ns), and the mean of many
// readings is what the sum of the timed builds includes.
inline double TimerCostNanos() {
  constexpr int kReadings = 200000;
  int64_t total = 0;
  for (int i = 0; i < kReadings; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto end = std::chrono::steady_clock::now();
    total += std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
  }
  return static_cast<double>(total) / kReadings;
}

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
    filters_ += 1;
    bytes_ += dst->size() - before;
    nanos_ += nanos.count();
  }
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    const bool match = base_->KeyMayMatch(key, filter);
    probes_.fetch_add(1, std::memory_order_relaxed);
    if (match) positives_.fetch_add(1, std::memory_order_relaxed);
    return match;
  }
  FilterStats Snapshot() const {
    return {keys_.load(), bytes_.load(), nanos_.load(), filters_.load(), 0};
  }
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
  mutable std::atomic<uint64_t> keys_{0}, bytes_{0}, nanos_{0}, filters_{0}, probes_{0},
      positives_{0};
};

// Makes key i's value (every eighth byte from the key number) out of a
// value of 'v's, so that blocks do not compress to nothing.
inline void VaryValue(int64_t i, std::string* value) {
  for (size_t j = 0; j < value->size(); j += 8) (*value)[j] = static_cast<char>('a' + (i + j) % 26);
}

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
      VaryValue(i, &value);
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

// Latencies in microseconds; NaN when nothing was measured (printed "-").
struct LatencySummary {
  double p50 = std::nan(""), p99 = std::nan(""), mean = std::nan("");
};

inline LatencySummary Summarize(std::vector<double>* micros) {
  if (micros->empty()) return {};
  std::sort(micros->begin(), micros->end());
  const auto at = [&](double q) {
    return (*micros)[static_cast<size_t>(q * (micros->size() - 1))];
  };
  double sum = 0;
  for (double m : *micros) sum += m;
  return {at(0.50), at(0.99), sum / static_cast<double>(micros->size())};
}

// The median of `values` (NaN if empty).
inline double Median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// An Env whose table files are read with pread(2) instead of LevelDB's
// default mmap (which it uses for the first 1,000 open tables on 64-bit
// Linux, then pread). Pages a process has mapped cannot be dropped from the
// page cache; pread'd ones can, which is what the cold-cache phase needs.
// Each file is opened with POSIX_FADV_RANDOM (as RocksDB does by default),
// so a cold read fetches its block, not a 128 KiB readahead window that
// would warm the neighbouring blocks for free.
//
// Thread-safety: as leveldb::Env; pread has no shared file offset.
class PreadEnv final : public leveldb::EnvWrapper {
 public:
  PreadEnv() : leveldb::EnvWrapper(leveldb::Env::Default()) {}

  leveldb::Status NewRandomAccessFile(const std::string& name,
                                      leveldb::RandomAccessFile** result) override {
    *result = nullptr;
    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return leveldb::Status::IOError(name, std::strerror(errno));
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    *result = new File(fd, name);
    return leveldb::Status::OK();
  }

 private:
  class File final : public leveldb::RandomAccessFile {
   public:
    File(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
    ~File() override { ::close(fd_); }
    leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                         char* scratch) const override {
      size_t done = 0;
      while (done < n) {
        const ssize_t r = ::pread(fd_, scratch + done, n - done, static_cast<off_t>(offset + done));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return leveldb::Status::IOError(name_, std::strerror(errno));
        if (r == 0) break;  // end of file: a short read, as LevelDB's own
        done += static_cast<size_t>(r);
      }
      *result = leveldb::Slice(scratch, done);
      return leveldb::Status::OK();
    }

   private:
    const int fd_;
    const std::string name_;
  };
};

// The table files (*.ldb, *.sst) of the database in `dir`.
inline std::vector<std::string> TableFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string ext = entry.path().extension().string();
    if (ext == ".ldb" || ext == ".sst") files.push_back(entry.path().string());
  }
  return files;
}

// Asks the kernel to drop every table file of `dir` from the page cache
// (posix_fadvise(POSIX_FADV_DONTNEED); works without root, on clean pages
// no process has mapped). With `drop_all` and root, also writes 3 to
// /proc/sys/vm/drop_caches (the whole machine's page cache: off by default
// on a shared machine). Returns false if a file could not be advised.
inline bool DropFromPageCache(const std::string& dir, bool drop_all) {
  bool ok = true;
  for (const std::string& file : TableFiles(dir)) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      ok = false;
      continue;
    }
    ::fdatasync(fd);  // dirty pages cannot be dropped
    if (::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) ok = false;
    ::close(fd);
  }
  if (drop_all && ::geteuid() == 0) {
    ::sync();
    if (FILE* f = std::fopen("/proc/sys/vm/drop_caches", "w")) {
      std::fputs("3\n", f);
      std::fclose(f);
    }
  }
  return ok;
}

// Share of the table files' pages of `dir` in the page cache (mincore(2)),
// in [0, 1]; NaN if there are none or it cannot be measured.
inline double ResidentFraction(const std::string& dir) {
  const long page = ::sysconf(_SC_PAGESIZE);
  uint64_t pages = 0, resident = 0;
  for (const std::string& file : TableFiles(dir)) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nan("");
    struct stat st;
    if (::fstat(fd, &st) != 0 || st.st_size == 0) {
      ::close(fd);
      continue;
    }
    const size_t len = static_cast<size_t>(st.st_size);
    void* map = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) return std::nan("");
    std::vector<unsigned char> vec((len + page - 1) / page);
    if (::mincore(map, len, vec.data()) == 0) {
      pages += vec.size();
      for (unsigned char v : vec) resident += v & 1;
    }
    ::munmap(map, len);
  }
  return pages ? static_cast<double>(resident) / static_cast<double>(pages) : std::nan("");
}

// A fresh directory under `base` (empty: $TMPDIR), removed on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& base = "") {
    const std::filesystem::path parent =
        base.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(base);
    std::string tmpl = (parent / "blockbloom-demo-XXXXXX").string();
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
