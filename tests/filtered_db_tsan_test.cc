// FilteredDB under concurrent readers and writers (run under ThreadSanitizer
// by CI), starting from a tiny capacity so growth rebuilds publish new
// indexes and free retired ones while readers probe them. Each index kind
// runs with both reader protocols: the membarrier(2) asymmetric fence (the
// default on Linux) and the seq_cst announce (the fallback), see
// docs/FILTERED_DB.md "Readers".
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "blockbloom/filtered_db.h"
#include "filtered_db/testing_hooks.h"
#include "leveldb/env.h"
#include "leveldb/write_batch.h"
#include "test_keys.h"
#include "test_paths.h"

namespace blockbloom {
namespace {

using testing_keys::Key;

struct TsanCase {
  IndexKind kind;
  bool seq_cst_readers;  // force the fallback reader announce
};

class FilteredDBTsanTest : public ::testing::TestWithParam<TsanCase> {
 protected:
  void SetUp() override { filtered_db::ForceSeqCstReadersForTesting(GetParam().seq_cst_readers); }
  void TearDown() override { filtered_db::ForceSeqCstReadersForTesting(false); }
};

TEST_P(FilteredDBTsanTest, ReadersNeverMissCommittedKeysWhileWritersChurnAndGrow) {
  const std::string path = TestPath("db");
  DestroyFilteredDB(path, leveldb::Options());
  leveldb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;
  FilteredDBOptions index_options;
  index_options.kind = GetParam().kind;
  index_options.expected_keys = 16;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(index_options, options, path, &db).ok());

  constexpr uint64_t kCommitted = 3000;
  std::atomic<uint64_t> committed{0};  // keys [0, committed) are live forever
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  threads.emplace_back([&] {  // grows the live set
    for (uint64_t i = 0; i < kCommitted; ++i) {
      if (!db->Put(leveldb::WriteOptions(), Key(i), "stable").ok()) errors.fetch_add(1);
      committed.store(i + 1, std::memory_order_release);
    }
  });
  threads.emplace_back([&] {  // churns another range with batches
    for (uint64_t round = 0; round < 300; ++round) {
      leveldb::WriteBatch batch;
      for (uint64_t j = 0; j < 10; ++j) batch.Put(Key(1000000 + round * 10 + j), "churn");
      if (round >= 2) {
        for (uint64_t j = 0; j < 10; ++j) batch.Delete(Key(1000000 + (round - 2) * 10 + j));
      }
      if (!db->Write(leveldb::WriteOptions(), &batch).ok()) errors.fetch_add(1);
    }
  });
  threads.emplace_back([&] {  // rebuilds and saves while the others run
    while (committed.load(std::memory_order_acquire) < kCommitted / 4) std::this_thread::yield();
    for (int i = 0; i < 3; ++i) {
      if (!db->RebuildIndex().ok()) errors.fetch_add(1);
      const leveldb::Status s = db->SaveIndex();
      if (!s.ok() && !s.IsInvalidArgument()) errors.fetch_add(1);  // refused while saturated
    }
  });
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      std::string value;
      uint64_t x = r;
      while (!stop.load(std::memory_order_relaxed)) {
        const uint64_t limit = committed.load(std::memory_order_acquire);
        if (limit == 0) continue;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const uint64_t i = (x >> 33) % limit;
        if (!db->Get(leveldb::ReadOptions(), Key(i), &value).ok()) errors.fetch_add(1);
        const leveldb::Status absent = db->Get(leveldb::ReadOptions(), Key(kCommitted + i), &value);
        if (!absent.IsNotFound()) errors.fetch_add(1);
        std::string property;
        if ((x >> 20) % 64 == 0) db->GetProperty("blockbloom.index-stats", &property);
      }
    });
  }
  threads[0].join();
  threads[1].join();
  threads[2].join();
  stop = true;
  for (size_t t = 3; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(errors.load(), 0);
  db->WaitForGrowth();
  const FilteredDBStats stats = db->index_stats();
  EXPECT_TRUE(stats.index_active);
  EXPECT_EQ(stats.keys, kCommitted + 20);  // the last two churn rounds stay live
  EXPECT_GE(stats.rebuilds, 1u + 3u);      // Open's, the RebuildIndex calls, growths
  EXPECT_GT(stats.gets_ruled_out, 0u);

  // With no reader inside a probe, a rebuild frees the index it retires at
  // once (through the membarrier or the seq_cst path): two rebuilds of the
  // same keys leave the memory of one index, not two.
  ASSERT_TRUE(db->RebuildIndex().ok());
  const uint64_t one_index = db->index_stats().memory_bytes;
  ASSERT_TRUE(db->RebuildIndex().ok());
  EXPECT_EQ(db->index_stats().memory_bytes, one_index);
  EXPECT_GT(one_index, 0u);
  db.reset();
  DestroyFilteredDB(path, leveldb::Options());
}

// "Any method from any number of threads" includes SaveIndex: concurrent
// saves (each writes the index file through the same temporary name) must
// all succeed, and the file they leave must be used by the next Open.
TEST(FilteredDBSaveTest, ConcurrentSaveIndexCallsAllSucceed) {
  const std::string path = TestPath("db");
  DestroyFilteredDB(path, leveldb::Options());
  leveldb::Options options;
  options.create_if_missing = true;
  FilteredDBOptions index_options;
  index_options.expected_keys = 1000;
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(index_options, options, path, &db).ok());
    for (uint64_t i = 0; i < 500; ++i)
      ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), "v").ok());
    std::atomic<int> failures{0};
    std::vector<std::thread> savers;
    for (int t = 0; t < 3; ++t) {
      savers.emplace_back([&] {
        for (int i = 0; i < 15; ++i) {
          const leveldb::Status s = db->SaveIndex();
          if (!s.ok()) {
            failures.fetch_add(1);
            ADD_FAILURE() << s.ToString();
          }
        }
      });
    }
    for (std::thread& t : savers) t.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(db->index_stats().index_saves, 45u);
  }
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(index_options, options, path, &db).ok());
  EXPECT_EQ(db->index_stats().opened_from, IndexSource::kFile);
  std::string value;
  for (uint64_t i = 0; i < 500; ++i)
    ASSERT_TRUE(db->Get(leveldb::ReadOptions(), Key(i), &value).ok());
  db.reset();
  DestroyFilteredDB(path, leveldb::Options());
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, FilteredDBTsanTest,
    ::testing::Values(TsanCase{IndexKind::kDleft, false}, TsanCase{IndexKind::kCounting, false},
                      TsanCase{IndexKind::kDleft, true}, TsanCase{IndexKind::kCounting, true}),
    [](const auto& info) {
      return std::string(info.param.kind == IndexKind::kDleft ? "Dleft" : "Counting") +
             (info.param.seq_cst_readers ? "SeqCstReaders" : "");
    });

}  // namespace
}  // namespace blockbloom
