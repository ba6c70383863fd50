// The policy workload matrix: for every value size, block size, bits/key
// and key shape, a real LevelDB database on disk written with LevelDB's
// built-in filter and with each blockbloom policy (bench/policy_matrix.h),
// and the data-block reads of absent Gets with the block cache off.
// Writes one JSON object per line (cell, policy, counts); the table, the
// worst cell and the heat map come from scripts/policy_matrix.py:
//
//   build/release/bench/policy_matrix_bench --out=bench/results/policy_matrix.json
//   python3 scripts/policy_matrix.py bench/results/policy_matrix.json
//
// Exits 1 if any Get answered wrongly (a present key not found, an absent
// one found); the reads rule itself is checked by the script.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "policy_matrix.h"
#include "targets.h"

ABSL_FLAG(std::string, out, "policy_matrix.json", "JSON lines output");
ABSL_FLAG(std::string, dir, "/tmp", "where the databases are written");
ABSL_FLAG(std::string, value_sizes, "16,100,1024,4096,65536", "value sizes in bytes");
ABSL_FLAG(std::string, block_sizes, "1024,4096,65536", "LevelDB block_size values");
ABSL_FLAG(std::string, bits, "1,2,4,6,8,10,12,16,20,24,30", "bits_per_key values");
ABSL_FLAG(std::string, shapes, "sequential,random,prefix,short", "key shapes");
ABSL_FLAG(std::string, policies, "builtin,blocked,compact", "policies of every cell");
ABSL_FLAG(int, filtereddb_bits, 10, "bits_per_key at which FilteredDB also runs (0: never)");
ABSL_FLAG(int64_t, data_kib, 8192, "data per database (keys x (key + value)), KiB");
ABSL_FLAG(int64_t, min_keys, 128, "at least this many keys per database");
ABSL_FLAG(int64_t, gets, 50000, "absent Gets per database");

namespace bb = blockbloom::matrix;

namespace {

std::vector<int64_t> Numbers(const std::string& list) {
  std::vector<int64_t> out;
  for (absl::string_view part : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v)) {
      std::cerr << "not a number: " << part << "\n";
      std::exit(2);
    }
    out.push_back(v);
  }
  return out;
}

template <typename T>
std::vector<T> Names(const std::string& list, const char* (*name)(T), int count) {
  std::vector<T> out;
  for (absl::string_view part : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    bool found = false;
    for (int i = 0; i < count; ++i) {
      if (part == name(static_cast<T>(i))) {
        out.push_back(static_cast<T>(i));
        found = true;
      }
    }
    if (!found) {
      std::cerr << "unknown name: " << part << "\n";
      std::exit(2);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const auto values = Numbers(absl::GetFlag(FLAGS_value_sizes));
  const auto blocks = Numbers(absl::GetFlag(FLAGS_block_sizes));
  const auto bits = Numbers(absl::GetFlag(FLAGS_bits));
  const auto shapes = Names<bb::KeyShape>(absl::GetFlag(FLAGS_shapes), bb::ShapeName, 4);
  const auto policies = Names<bb::Policy>(absl::GetFlag(FLAGS_policies), bb::PolicyName, 4);
  const int fdb_bits = absl::GetFlag(FLAGS_filtereddb_bits);
  const std::string dir = absl::GetFlag(FLAGS_dir) + "/policy_matrix." + std::to_string(getpid());
  leveldb::Env::Default()->CreateDir(dir);
  std::ofstream out(absl::GetFlag(FLAGS_out));
  std::string cpu = "unknown CPU";
  {
    std::ifstream info("/proc/cpuinfo");
    for (std::string line; std::getline(info, line);) {
      if (line.rfind("model name", 0) == 0) {
        cpu = line.substr(line.find(':') + 2);
        break;
      }
    }
  }
  out << "{\"meta\": {\"machine\": \"" << cpu << ", " << sysconf(_SC_NPROCESSORS_ONLN)
      << " CPUs\", \"simd_target\": \"" << blockbloom::simd::ActiveTargetName()
      << "\", \"data_kib\": " << absl::GetFlag(FLAGS_data_kib)
      << ", \"gets\": " << absl::GetFlag(FLAGS_gets) << "}}\n";
  const auto start = std::chrono::steady_clock::now();
  int failures = 0, cells = 0;
  for (int64_t value : values) {
    for (int64_t block : blocks) {
      for (bb::KeyShape shape : shapes) {
        for (int64_t b : bits) {
          std::vector<bb::Policy> run = policies;
          if (b == fdb_bits) run.push_back(bb::Policy::kFilteredDB);
          for (bb::Policy p : run) {
            const bb::Cell cell{static_cast<size_t>(value), static_cast<size_t>(block),
                                static_cast<int>(b), shape};
            bb::Result r;
            std::string error;
            if (!bb::RunCell(cell, p, leveldb::Env::Default(), dir,
                             static_cast<uint64_t>(absl::GetFlag(FLAGS_data_kib)) << 10,
                             static_cast<uint64_t>(absl::GetFlag(FLAGS_min_keys)),
                             static_cast<uint64_t>(absl::GetFlag(FLAGS_gets)), &r, &error)) {
              std::cerr << "FAILED value=" << value << " block=" << block
                        << " shape=" << bb::ShapeName(shape) << " bits=" << b
                        << " policy=" << bb::PolicyName(p) << ": " << error << "\n";
              ++failures;
              continue;
            }
            out << "{\"value_size\": " << value << ", \"block_size\": " << block
                << ", \"shape\": \"" << bb::ShapeName(shape) << "\", \"bits_per_key\": " << b
                << ", \"policy\": \"" << bb::PolicyName(p) << "\", \"keys\": " << r.keys
                << ", \"gets\": " << r.gets << ", \"reads\": " << r.reads
                << ", \"filters\": " << r.filters << ", \"filter_keys\": " << r.filter_keys
                << ", \"filter_bytes\": " << r.filter_bytes << "}\n";
            out.flush();
            ++cells;
          }
        }
      }
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::cerr << "value " << value << " block " << block << ": " << cells << " runs, " << s
                << " s\n";
    }
  }
  leveldb::Env::Default()->RemoveDir(dir);
  return failures == 0 ? 0 : 1;
}
