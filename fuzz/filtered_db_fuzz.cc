// FilteredDB (the delete-aware index in front of LevelDB) on LevelDB's
// in-memory Env, against a std::map oracle: Put, Delete, Write of batches
// that touch a key several times, Get, Get at a snapshot, full scans,
// RebuildIndex, close and reopen. The index starts tiny (1..16 keys), so it
// grows by rebuilds; its kind (counting or d-left) and LevelDB's own filter
// policy are chosen by the input. Every Get must agree with the map (a live
// key ruled out by the index is a false negative and aborts), and the index
// must hold exactly the live keys. Every index takes one fixed seed
// (testing_hooks.h), so that an input replays exactly as it ran.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "blockbloom/filtered_db.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "filtered_db/testing_hooks.h"
#include "fuzz_input.h"
#include "leveldb/env.h"
#include "leveldb/helpers/memenv.h"
#include "leveldb/iterator.h"
#include "leveldb/write_batch.h"

using blockbloom::FilteredDB;
using blockbloom::fuzz::Fail;
using blockbloom::fuzz::FuzzInput;

namespace {

// Bounds the work per input: LevelDB writes are not free even in memory.
constexpr int kMaxOps = 300;
const leveldb::FilterPolicy* const kPolicy = blockbloom::NewBlockedBloomFilterPolicy(10);

using Oracle = std::map<std::string, std::string>;

// Most keys come from a small set, so overwrites and deletes of live keys
// are common; the rest are arbitrary (including empty).
std::string PickKey(FuzzInput& in) {
  const uint8_t b = in.Byte();
  if (b < 192) return "k" + std::to_string(b % 48);
  return in.Key();
}

// Mostly short values; sometimes 2 KB ones, so memtables fill (LevelDB
// clamps write_buffer_size to >= 64 KB) and tables are flushed and compacted.
std::string PickValue(FuzzInput& in, int op) {
  const uint8_t b = in.Byte();
  std::string value = "v" + std::to_string(op) + ":";
  value.append(b % 8 == 0 ? 2000 : b % 32, static_cast<char>('a' + b % 26));
  return value;
}

void CheckGet(FilteredDB& db, const leveldb::ReadOptions& options, const Oracle& oracle,
              const std::string& key) {
  std::string value;
  const leveldb::Status s = db.Get(options, key, &value);
  const auto it = oracle.find(key);
  if (it == oracle.end()) {
    if (!s.IsNotFound()) Fail("Get of an absent key was not NotFound", key);
  } else {
    if (s.IsNotFound()) Fail("Get of a live key: NotFound (false negative)", key);
    if (!s.ok()) Fail("Get of a live key failed", key);
    if (value != it->second) Fail("Get returned the wrong value", key);
  }
}

void CheckIndexKeys(FilteredDB& db, const Oracle& oracle) {
  db.WaitForGrowth();  // a background growth publishes an exact index
  const blockbloom::FilteredDBStats stats = db.index_stats();
  if (stats.index_active && stats.keys != oracle.size())
    Fail("index key count differs from the map", "");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  blockbloom::filtered_db::SetIndexSeedForTesting(true, 0x5EED);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  const uint8_t config = in.Byte();
  blockbloom::FilteredDBOptions index_options;
  index_options.kind =
      (config & 1) != 0 ? blockbloom::IndexKind::kDleft : blockbloom::IndexKind::kCounting;
  index_options.expected_keys = 1 + (config >> 1) % 16;
  static constexpr double kFprs[] = {0.01, 0.3, 1e-4, 0.0};
  index_options.target_fpr = kFprs[(config >> 5) % 4];
  index_options.progress_interval = 7;
  index_options.progress = [](uint64_t) {};

  const std::unique_ptr<leveldb::Env> env(leveldb::NewMemEnv(leveldb::Env::Default()));
  leveldb::Options options;
  options.env = env.get();
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;
  if ((config & 0x80) != 0) options.filter_policy = kPolicy;
  const std::string name = "/fuzzdb";

  std::unique_ptr<FilteredDB> db;
  const auto open = [&] {
    if (!FilteredDB::Open(index_options, options, name, &db).ok()) Fail("Open failed", "");
  };
  open();

  Oracle oracle;
  Oracle at_snapshot;
  const leveldb::Snapshot* snapshot = nullptr;
  const leveldb::WriteOptions write_options;
  const leveldb::ReadOptions read_options;

  for (int op = 0; op < kMaxOps && !in.empty(); ++op) {
    switch (in.Byte() % 10) {
      case 0:
      case 1: {  // Put
        const std::string key = PickKey(in);
        const std::string value = PickValue(in, op);
        if (!db->Put(write_options, key, value).ok()) Fail("Put failed", key);
        oracle[key] = value;
        break;
      }
      case 2: {  // Delete (of a live key or not)
        const std::string key = PickKey(in);
        if (!db->Delete(write_options, key).ok()) Fail("Delete failed", key);
        oracle.erase(key);
        break;
      }
      case 3: {  // Write: a batch of puts and deletes, maybe of the same key
        leveldb::WriteBatch batch;
        Oracle after = oracle;
        for (int i = 1 + in.Byte() % 8; i > 0; --i) {
          const std::string key = PickKey(in);
          if ((in.Byte() & 1) != 0) {
            const std::string value = PickValue(in, op);
            batch.Put(key, value);
            after[key] = value;
          } else {
            batch.Delete(key);
            after.erase(key);
          }
        }
        if (!db->Write(write_options, &batch).ok()) Fail("Write failed", "");
        oracle.swap(after);
        break;
      }
      case 4:
      case 5:  // Get
        CheckGet(*db, read_options, oracle, PickKey(in));
        break;
      case 6: {  // a snapshot: reads at it see the map as it was
        if (snapshot == nullptr) {
          snapshot = db->GetSnapshot();
          at_snapshot = oracle;
        }
        leveldb::ReadOptions at;
        at.snapshot = snapshot;
        CheckGet(*db, at, at_snapshot, PickKey(in));
        break;
      }
      case 7: {  // every live key, and a full scan equal to the map
        for (const auto& [key, value] : oracle) CheckGet(*db, read_options, oracle, key);
        CheckIndexKeys(*db, oracle);
        std::unique_ptr<leveldb::Iterator> it(db->NewIterator(read_options));
        auto expected = oracle.begin();
        for (it->SeekToFirst(); it->Valid(); it->Next(), ++expected) {
          if (expected == oracle.end() || it->key().ToString() != expected->first ||
              it->value().ToString() != expected->second) {
            Fail("scan differs from the map", it->key().ToString());
          }
        }
        if (expected != oracle.end()) Fail("scan ended early", expected->first);
        break;
      }
      case 8:  // close and reopen: the index is rebuilt from a scan
        if (snapshot != nullptr) db->ReleaseSnapshot(snapshot);
        snapshot = nullptr;
        db.reset();
        open();
        CheckIndexKeys(*db, oracle);
        break;
      case 9:
        if (!db->RebuildIndex().ok()) Fail("RebuildIndex failed", "");
        CheckIndexKeys(*db, oracle);
        break;
    }
  }
  for (const auto& [key, value] : oracle) CheckGet(*db, read_options, oracle, key);
  CheckIndexKeys(*db, oracle);
  if (snapshot != nullptr) db->ReleaseSnapshot(snapshot);
  db.reset();  // before the Env it uses
  return 0;
}
