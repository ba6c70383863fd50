// FilteredDB on a real LevelDB database on disk, against a std::map oracle:
// every Get agrees with the oracle (so the index never rules out a live key),
// the index holds exactly the live keys (overwrites and deletes of absent
// keys do not skew it), growth rebuilds, reopen, snapshots, properties.
#include "blockbloom/filtered_db.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "leveldb/env.h"
#include "leveldb/write_batch.h"
#include "test_keys.h"
#include "test_paths.h"

namespace blockbloom {
namespace {

using testing_keys::Key;
using testing_keys::SplitMix64;

std::string DbPath(const std::string& name) {
  const std::string path = TestPath(name);
  DestroyFilteredDB(path, leveldb::Options());
  return path;
}

leveldb::Options SmallBufferOptions() {
  leveldb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;  // flush often: keys spread over tables
  return options;
}

uint64_t PropertyNumber(FilteredDB& db, const std::string& name) {
  std::string value;
  EXPECT_TRUE(db.GetProperty(name, &value)) << name;
  return std::strtoull(value.c_str(), nullptr, 10);
}

void ExpectAgrees(FilteredDB& db, const std::map<std::string, std::string>& oracle,
                  uint64_t universe, const std::string& where) {
  for (uint64_t i = 0; i < universe; ++i) {
    const std::string key = Key(i);
    std::string value;
    const leveldb::Status s = db.Get(leveldb::ReadOptions(), key, &value);
    auto it = oracle.find(key);
    if (it == oracle.end()) {
      ASSERT_TRUE(s.IsNotFound()) << where << " key " << key << " " << s.ToString();
    } else {
      ASSERT_TRUE(s.ok()) << where << " live key missing: " << key << " " << s.ToString();
      ASSERT_EQ(value, it->second) << where;
    }
  }
  ASSERT_EQ(PropertyNumber(db, "blockbloom.index-keys"), oracle.size()) << where;
}

class FilteredDBTest : public ::testing::TestWithParam<IndexKind> {};

TEST_P(FilteredDBTest, RandomOperationsAgreeWithMapOracleAndSurviveReopen) {
  const std::string path = DbPath(GetParam() == IndexKind::kDleft ? "oracle_dleft" : "oracle_cbf");
  FilteredDBOptions index_options;
  index_options.kind = GetParam();
  index_options.expected_keys = 50;  // forces several growth rebuilds
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(index_options, SmallBufferOptions(), path, &db).ok());

  std::map<std::string, std::string> oracle;
  SplitMix64 rng(GetParam() == IndexKind::kDleft ? 1 : 2);
  constexpr uint64_t kUniverse = 3000;
  leveldb::WriteOptions write_options;
  for (int step = 0; step < 30000; ++step) {
    const std::string key = Key(rng.Next() % kUniverse);
    const uint64_t op = rng.Next() % 10;
    if (op < 4) {
      const std::string value = "v" + std::to_string(step);
      ASSERT_TRUE(db->Put(write_options, key, value).ok());
      oracle[key] = value;
    } else if (op < 6) {
      ASSERT_TRUE(db->Delete(write_options, key).ok());  // absent keys too
      oracle.erase(key);
    } else if (op < 7) {
      // A batch with repeated keys: put-then-delete, delete-then-put, overwrite.
      leveldb::WriteBatch batch;
      std::map<std::string, std::string> after = oracle;
      for (int j = 0; j < 6; ++j) {
        const std::string k = Key(rng.Next() % kUniverse);
        if (rng.Next() % 2) {
          batch.Put(k, "b" + std::to_string(step * 10 + j));
          after[k] = "b" + std::to_string(step * 10 + j);
        } else {
          batch.Delete(k);
          after.erase(k);
        }
        if (j == 2) {  // same key again within the batch
          batch.Delete(k);
          after.erase(k);
        }
      }
      ASSERT_TRUE(db->Write(write_options, &batch).ok());
      oracle = std::move(after);
    } else {
      std::string value;
      const leveldb::Status s = db->Get(leveldb::ReadOptions(), key, &value);
      auto it = oracle.find(key);
      if (it == oracle.end()) {
        ASSERT_TRUE(s.IsNotFound()) << step;
      } else {
        ASSERT_TRUE(s.ok()) << "live key ruled out at step " << step;
        ASSERT_EQ(value, it->second);
      }
    }
    if (step % 5000 == 0) {
      ExpectAgrees(*db, oracle, kUniverse, "step " + std::to_string(step));
    }
  }
  ExpectAgrees(*db, oracle, kUniverse, "end");
  const FilteredDBStats stats = db->index_stats();
  EXPECT_TRUE(stats.index_active);
  EXPECT_GT(stats.rebuilds, 2u);  // grew from 50 keys
  EXPECT_GT(stats.gets_ruled_out, 1000u);
  EXPECT_EQ(stats.failed_writes, 0u);

  // Reopen after a clean close: the saved index is loaded, no scan.
  db.reset();
  uint64_t last_progress = 0;
  index_options.progress = [&](uint64_t scanned) { last_progress = scanned; };
  index_options.progress_interval = 100;
  ASSERT_TRUE(FilteredDB::Open(index_options, SmallBufferOptions(), path, &db).ok());
  EXPECT_EQ(db->index_stats().opened_from, IndexSource::kFile);
  EXPECT_EQ(last_progress, 0u);
  ExpectAgrees(*db, oracle, kUniverse, "reopen from the index file");

  // Reopen without persistence: the scan rebuilds exactly the live keys.
  db.reset();
  index_options.persist_index = false;
  ASSERT_TRUE(FilteredDB::Open(index_options, SmallBufferOptions(), path, &db).ok());
  EXPECT_EQ(db->index_stats().opened_from, IndexSource::kScan);
  EXPECT_EQ(last_progress, oracle.size());
  ExpectAgrees(*db, oracle, kUniverse, "reopen by scan");
  db.reset();
  DestroyFilteredDB(path, leveldb::Options());
}

TEST_P(FilteredDBTest, SnapshotGetsPassThrough) {
  FilteredDBOptions index_options;
  index_options.kind = GetParam();
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(index_options, SmallBufferOptions(), DbPath("snapshot"), &db).ok());
  ASSERT_TRUE(db->Put(leveldb::WriteOptions(), "k", "old").ok());
  const leveldb::Snapshot* snapshot = db->GetSnapshot();
  ASSERT_TRUE(db->Delete(leveldb::WriteOptions(), "k").ok());
  std::string value;
  EXPECT_TRUE(db->Get(leveldb::ReadOptions(), "k", &value).IsNotFound());
  leveldb::ReadOptions at_snapshot;
  at_snapshot.snapshot = snapshot;
  ASSERT_TRUE(db->Get(at_snapshot, "k", &value).ok());
  EXPECT_EQ(value, "old");
  db->ReleaseSnapshot(snapshot);
  EXPECT_EQ(PropertyNumber(*db, "blockbloom.index-keys"), 0u);
}

TEST_P(FilteredDBTest, IteratorAndPropertiesAreLevelDBs) {
  FilteredDBOptions index_options;
  index_options.kind = GetParam();
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(index_options, SmallBufferOptions(), DbPath("props"), &db).ok());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), "v").ok());
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator(leveldb::ReadOptions()));
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  EXPECT_EQ(n, 100);
  it.reset();
  std::string value;
  EXPECT_TRUE(db->GetProperty("leveldb.stats", &value));
  EXPECT_FALSE(db->GetProperty("blockbloom.no-such-thing", &value));
  ASSERT_TRUE(db->GetProperty("blockbloom.index-stats", &value));
  EXPECT_NE(value.find("keys: 100\n"), std::string::npos) << value;
  EXPECT_GT(PropertyNumber(*db, "blockbloom.index-memory-bytes"), 0u);
  ASSERT_TRUE(db->GetProperty("blockbloom.index-estimated-fpr", &value));
  EXPECT_LT(std::strtod(value.c_str(), nullptr), 0.02);
  EXPECT_TRUE(db->Get(leveldb::ReadOptions(), Key(5), &value).ok());
  for (int i = 100; i < 1100; ++i) {
    EXPECT_TRUE(db->Get(leveldb::ReadOptions(), Key(i), &value).IsNotFound());
  }
  EXPECT_GT(PropertyNumber(*db, "blockbloom.index-gets-ruled-out"), 950u);
  ASSERT_TRUE(db->RebuildIndex().ok());
  EXPECT_EQ(PropertyNumber(*db, "blockbloom.index-keys"), 100u);
}

INSTANTIATE_TEST_SUITE_P(Kinds, FilteredDBTest,
                         ::testing::Values(IndexKind::kDleft, IndexKind::kCounting),
                         [](const auto& info) {
                           return info.param == IndexKind::kDleft ? std::string("Dleft")
                                                                  : std::string("Counting");
                         });

}  // namespace
}  // namespace blockbloom
