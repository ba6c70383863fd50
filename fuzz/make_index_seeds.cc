// Writes the seed corpus of index_file_bytes_fuzz: the BLOCKBLOOM-INDEX files
// real FilteredDBs leave at close (counting, d-left with the default
// target's 12-bit cells and, as dleft16_*, with 16-bit cells; 0, 3 and 40 keys, so
// empty, tiny and grown indexes), each whole behind mode byte 0 (file_*) and
// as its bare payload behind mode byte 3 (payload_*: the fuzzer wraps it in a
// valid file). Not part of the default build:
//   cmake --build build/asan --target make_index_seeds &&
//   build/asan/fuzz/make_index_seeds fuzz/corpus/index_file_bytes
// Databases are made under $TMPDIR (or /tmp) and destroyed. Deterministic in
// the payloads; the listings hold inodes and mtimes, so files differ per run.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "blockbloom/filtered_db.h"
#include "filtered_db/index_file.h"
#include "filtered_db/testing_hooks.h"
#include "leveldb/options.h"

namespace {

bool WriteSeed(const std::string& path, char mode, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.put(mode);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::string out_dir = argv[1];
  // One fixed index seed: the payloads are the same on every run.
  blockbloom::filtered_db::SetIndexSeedForTesting(true, 0x5EED);
  const char* tmp = std::getenv("TMPDIR");
  const std::string db_path = std::string(tmp != nullptr ? tmp : "/tmp") +
                              "/blockbloom_index_seeds_" + std::to_string(::getpid());
  struct Config {
    blockbloom::IndexKind kind;
    double target_fpr;
    const char* name;
  };
  for (const Config& config : {Config{blockbloom::IndexKind::kCounting, 0.002, "counting"},
                               Config{blockbloom::IndexKind::kDleft, 0.002, "dleft"},
                               Config{blockbloom::IndexKind::kDleft, 1e-4, "dleft16"}}) {
    const blockbloom::IndexKind kind = config.kind;
    const char* kind_name = config.name;
    for (const int keys : {0, 3, 40}) {
      blockbloom::DestroyFilteredDB(db_path, leveldb::Options());
      blockbloom::FilteredDBOptions fdb_options;
      fdb_options.kind = kind;
      fdb_options.target_fpr = config.target_fpr;
      fdb_options.expected_keys = 8;  // 40 keys grow it
      leveldb::Options options;
      options.create_if_missing = true;
      {
        std::unique_ptr<blockbloom::FilteredDB> db;
        leveldb::Status s = blockbloom::FilteredDB::Open(fdb_options, options, db_path, &db);
        for (int i = 0; s.ok() && i < keys; ++i) {
          s = db->Put(leveldb::WriteOptions(), "key" + std::to_string(i), "v");
        }
        if (s.ok() && keys == 40) s = db->Delete(leveldb::WriteOptions(), "key7");
        if (!s.ok()) {
          std::fprintf(stderr, "%s\n", s.ToString().c_str());
          return 1;
        }
        db->WaitForGrowth();
      }  // closed: the index file is written
      std::ifstream in(db_path + "/" + blockbloom::filtered_db::kIndexFileName, std::ios::binary);
      const std::string file((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      const auto parsed = blockbloom::filtered_db::ParseIndexFile(file);
      if (!parsed.ok()) {
        std::fprintf(stderr, "%s\n", parsed.status().ToString().c_str());
        return 1;
      }
      const std::string name = std::string(kind_name) + "_" + std::to_string(keys);
      if (!WriteSeed(out_dir + "/file_" + name, 0, file) ||
          !WriteSeed(out_dir + "/payload_" + name, 3, std::string(parsed->payload))) {
        std::fprintf(stderr, "cannot write into %s\n", out_dir.c_str());
        return 1;
      }
    }
  }
  blockbloom::DestroyFilteredDB(db_path, leveldb::Options());
  return 0;
}
