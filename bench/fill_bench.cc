// What each filter policy's build costs LevelDB's writers, end to end: the
// same keys written into a fresh database with no filter, LevelDB's
// built-in, blockbloom's blocked and compact policies (db_bench's fillrandom
// shape: one Put per key, in random order, snappy on), then a full
// compaction (CompactRange over everything, which rewrites every table and
// so builds every filter again), in rounds, the policies in a shuffled order
// each round.
//
//   fill_bench [--keys=200000] [--value_size=100] [--rounds=5] [--bits_per_key=10] [--dir=DIR]
//
// Per policy, medians over the rounds:
//   fill+compact   wall time of the writes and the full compaction, ns per key
//   vs none        that over the no-filter database's in the same round: the
//                  filter's whole cost to the writer (its builds, the filter
//                  blocks written and the compaction they lengthen)
//   vs built-in    the same over LevelDB's built-in policy
//   build          the policy's CreateFilter time per key written (each
//                  compaction counts its keys again), less the clock's cost
//                  per call (demo_support.h, CountingPolicy)
//   build share    the CreateFilter time over the fill+compact time
// The databases live in a fresh directory under --dir (default /dev/shm when
// it is writable, else $TMPDIR), so that the device's latency is not in the
// figures: the writer's CPU is.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "demo_support.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"
#include "leveldb/options.h"

ABSL_FLAG(int64_t, keys, 200000, "keys written into each database");
ABSL_FLAG(int32_t, value_size, 100, "bytes per value");
ABSL_FLAG(int32_t, rounds, 5, "rounds (each writes one database per policy)");
ABSL_FLAG(
    double, bits_per_key, 10.0,
    "filter bits per key (every policy; LevelDB's built-in takes it truncated to an integer)");
ABSL_FLAG(std::string, dir, "",
          "where to create the databases (default: /dev/shm if writable, else $TMPDIR)");

namespace blockbloom {
namespace demo {
namespace {

struct Policy {
  std::string label;
  std::unique_ptr<const leveldb::FilterPolicy> policy;  // null: no filter
};

struct Round {
  double total_ns = 0;  // fill + full compaction, wall time
  FilterStats stats;
};

// Writes `order` (key numbers) with one Put each, then compacts everything;
// returns the wall time and the policy's CreateFilter work.
Round Fill(const std::string& dir, const leveldb::FilterPolicy* base,
           const std::vector<int64_t>& order, int value_size) {
  CountingPolicy counting(base);
  leveldb::Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.filter_policy = base != nullptr ? &counting : nullptr;
  leveldb::DB* raw = nullptr;
  leveldb::Status s = leveldb::DB::Open(options, dir, &raw);
  if (!s.ok()) Die("open " + dir + ": " + s.ToString());
  std::unique_ptr<leveldb::DB> db(raw);
  std::string value(static_cast<size_t>(value_size), 'v');
  const leveldb::WriteOptions write_options;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i : order) {
    VaryValue(i, &value);
    s = db->Put(write_options, DemoKey(i, true), value);
    if (!s.ok()) Die("put: " + s.ToString());
  }
  db->CompactRange(nullptr, nullptr);
  const auto end = std::chrono::steady_clock::now();
  db.reset();
  leveldb::DestroyDB(dir, leveldb::Options());
  Round r;
  r.total_ns = std::chrono::duration<double, std::nano>(end - start).count();
  r.stats = counting.Snapshot();
  return r;
}

std::string BaseDir() {
  const std::string flag = absl::GetFlag(FLAGS_dir);
  if (!flag.empty()) return flag;
  if (access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return "";
}

int Main() {
  const int64_t n = absl::GetFlag(FLAGS_keys);
  const int value_size = absl::GetFlag(FLAGS_value_size);
  const int rounds = absl::GetFlag(FLAGS_rounds);
  const double bits = absl::GetFlag(FLAGS_bits_per_key);
  if (n <= 0 || value_size < 0 || rounds <= 0) {
    Die("--keys and --rounds must be positive and --value_size not negative");
  }

  std::vector<Policy> policies;
  policies.push_back({"no filter", nullptr});
  policies.push_back(
      {"leveldb built-in bloom", std::unique_ptr<const leveldb::FilterPolicy>(
                                     leveldb::NewBloomFilterPolicy(static_cast<int>(bits)))});
  policies.push_back({"blockbloom blocked bloom", std::unique_ptr<const leveldb::FilterPolicy>(
                                                      NewBlockedBloomFilterPolicy(bits))});
  policies.push_back({"blockbloom compact",
                      std::unique_ptr<const leveldb::FilterPolicy>(NewCompactFilterPolicy(bits))});
  constexpr size_t kNone = 0, kBuiltin = 1;

  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::mt19937_64 rng(20260101);
  std::shuffle(order.begin(), order.end(), rng);

  const TempDir tmp(BaseDir());
  const bool tty = isatty(STDERR_FILENO);
  const double timer_ns = TimerCostNanos();
  std::vector<std::vector<Round>> runs(policies.size());
  std::vector<size_t> turn(policies.size());
  for (size_t p = 0; p < turn.size(); ++p) turn[p] = p;
  for (int r = 0; r < rounds; ++r) {
    std::shuffle(turn.begin(), turn.end(), rng);
    for (size_t p : turn) {
      const std::string dir = tmp.path() + "/" + std::to_string(r) + "-" + std::to_string(p);
      runs[p].push_back(Fill(dir, policies[p].policy.get(), order, value_size));
    }
    std::fprintf(stderr, "%sround %d of %d done%s", tty ? "\r" : "", r + 1, rounds,
                 tty && r + 1 < rounds ? "" : "\n");
  }

  std::printf(
      "%lld keys of %d-byte values, fillrandom order, one Put each, then a full "
      "compaction; %.4g bits/key; %d rounds, medians\n\n",
      static_cast<long long>(n), value_size, bits, rounds);
  std::printf(
      "| filter                     | fill+compact ns/key | vs none | vs built-in | "
      "build ns/key | build share | keys/filter |\n");
  std::printf(
      "|----------------------------|---------------------|---------|-------------|"
      "--------------|-------------|-------------|\n");
  for (size_t p = 0; p < policies.size(); ++p) {
    std::vector<double> total, vs_none, vs_builtin, build, share;
    double keys_per_filter = 0;
    for (int r = 0; r < rounds; ++r) {
      const Round& x = runs[p][static_cast<size_t>(r)];
      total.push_back(x.total_ns / static_cast<double>(n));
      vs_none.push_back(x.total_ns / runs[kNone][static_cast<size_t>(r)].total_ns);
      vs_builtin.push_back(x.total_ns / runs[kBuiltin][static_cast<size_t>(r)].total_ns);
      if (x.stats.keys > 0) {
        const double build_ns = x.stats.NanosPerKey(timer_ns) * static_cast<double>(x.stats.keys);
        build.push_back(build_ns / static_cast<double>(n));
        share.push_back(build_ns / x.total_ns);
        keys_per_filter = x.stats.KeysPerFilter();
      }
    }
    const bool filtered = !build.empty();
    std::printf("| %-26s | %19.0f | %7.3f | %11.3f | %12s | %11s | %11s |\n",
                policies[p].label.c_str(), Median(total), Median(vs_none), Median(vs_builtin),
                filtered ? Format("%.1f", Median(build)).c_str() : "-",
                filtered ? Format("%.2f%%", 100 * Median(share)).c_str() : "-",
                filtered ? Format("%.1f", keys_per_filter).c_str() : "-");
  }
  std::printf(
      "\nbuild ns/key: CreateFilter time over the keys written (each compaction "
      "builds its tables' filters again), less the clock's %.1f ns per call.\n",
      timer_ns);
  return 0;
}

}  // namespace
}  // namespace demo
}  // namespace blockbloom

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "What each filter policy's build costs LevelDB's writers: fill + full compaction of the "
      "same keys with no filter, LevelDB's built-in, blockbloom's blocked and compact policies, "
      "in alternating rounds.\nUsage: fill_bench [--keys=N] [--value_size=B] [--rounds=R] ...");
  absl::ParseCommandLine(argc, argv);
  return blockbloom::demo::Main();
}
