// FilteredDB under concurrent readers and writers (run under ThreadSanitizer
// by CI), starting from a tiny capacity so growth rebuilds publish new
// indexes and free retired ones while readers probe them. Each index kind
// runs with both reader protocols: the membarrier(2) asymmetric fence (the
// default on Linux) and the seq_cst announce (the fallback), see
// docs/FILTERED_DB.md "Readers"; and through shrinks after mass deletes. Also: concurrent SaveIndex
// calls, more reader threads than owned reader slots, and the table filter policy's counters read
// through GetProperty while Gets probe them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "blockbloom/filter_stats.h"
#include "blockbloom/filtered_db.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "filtered_db/key_index.h"
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

// Opens a new FilteredDB at `path` (whatever was there destroyed first), its
// index sized for `expected_keys`, and puts Key(0..keys) with value "v".
void OpenFreshWithKeys(const std::string& path, const leveldb::Options& options,
                       uint64_t expected_keys, uint64_t keys, std::unique_ptr<FilteredDB>* db) {
  DestroyFilteredDB(path, leveldb::Options());
  FilteredDBOptions index_options;
  index_options.expected_keys = expected_keys;
  ASSERT_TRUE(FilteredDB::Open(index_options, options, path, db).ok());
  for (uint64_t i = 0; i < keys; ++i) {
    ASSERT_TRUE((*db)->Put(leveldb::WriteOptions(), Key(i), "v").ok()) << i;
  }
}

leveldb::Options CreateIfMissing() {
  leveldb::Options options;
  options.create_if_missing = true;
  return options;
}

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

// Growth and shrink under concurrent writers and readers (no fixed memory
// budget here, so both happen at a few thousand keys): two writers each put
// their own range, reading every key back right after its Put, then delete
// it, reading it back as NotFound; readers meanwhile Get keys that are live
// throughout. No Get of a live key may miss, whichever index it meets.
TEST_P(FilteredDBTsanTest, LiveKeysAreFoundWhileTheIndexGrowsAndShrinks) {
  filtered_db::SetIndexBudgetSlackForTesting(0);
  const std::string path = TestPath("db");
  DestroyFilteredDB(path, leveldb::Options());
  leveldb::Options options = CreateIfMissing();
  options.write_buffer_size = 64 << 10;
  FilteredDBOptions index_options;
  index_options.kind = GetParam().kind;
  index_options.expected_keys = 16;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(index_options, options, path, &db).ok());
  constexpr uint64_t kStable = 200, kPerWriter = 2500;
  for (uint64_t i = 0; i < kStable; ++i) {
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), "stable").ok());
  }
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::vector<std::thread> writers, readers;
  for (uint64_t w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      const uint64_t base = 1000000 * (w + 1);
      std::string value;
      for (uint64_t i = 0; i < kPerWriter; ++i) {
        if (!db->Put(leveldb::WriteOptions(), Key(base + i), "v").ok()) errors.fetch_add(1);
        if (!db->Get(leveldb::ReadOptions(), Key(base + i), &value).ok()) errors.fetch_add(1);
      }
      for (uint64_t i = 0; i < kPerWriter; ++i) {
        if (!db->Delete(leveldb::WriteOptions(), Key(base + i)).ok()) errors.fetch_add(1);
        if (!db->Get(leveldb::ReadOptions(), Key(base + i), &value).IsNotFound()) {
          errors.fetch_add(1);
        }
      }
    });
  }
  for (uint64_t r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      std::string value;
      for (uint64_t i = r; !stop.load(std::memory_order_relaxed); i += 7) {
        if (!db->Get(leveldb::ReadOptions(), Key(i % kStable), &value).ok()) errors.fetch_add(1);
      }
    });
  }
  for (std::thread& t : writers) t.join();
  // A shrink starts on a delete when no growth runs: one more after the last
  // rebuild settles it.
  for (int round = 0; round < 4; ++round) {
    db->WaitForGrowth();
    if (db->index_stats().memory_bytes <=
        std::max(2 * KeyIndex::BudgetBytes(kStable), KeyIndex::kMinShrinkBytes))
      break;
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(3000000), "v").ok());
    ASSERT_TRUE(db->Delete(leveldb::WriteOptions(), Key(3000000)).ok());
  }
  stop = true;
  for (std::thread& t : readers) t.join();
  filtered_db::SetIndexBudgetSlackForTesting(KeyIndex::kDefaultBudgetSlackBytes);
  EXPECT_EQ(errors.load(), 0);
  const FilteredDBStats stats = db->index_stats();
  EXPECT_TRUE(stats.index_active);
  EXPECT_EQ(stats.keys, kStable);
  // Open's, at least one growth from the empty database's index, a shrink.
  EXPECT_GE(stats.rebuilds, 3u);
  EXPECT_LE(stats.memory_bytes,
            std::max(2 * KeyIndex::BudgetBytes(kStable), KeyIndex::kMinShrinkBytes));
  db.reset();
  DestroyFilteredDB(path, leveldb::Options());
}

// "Any method from any number of threads" includes SaveIndex: concurrent
// saves (each writes the index file through the same temporary name) must
// all succeed, and the file they leave must be used by the next Open.
TEST(FilteredDBSaveTest, ConcurrentSaveIndexCallsAllSucceed) {
  const std::string path = TestPath("db");
  const leveldb::Options options = CreateIfMissing();
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_NO_FATAL_FAILURE(OpenFreshWithKeys(path, options, 1000, 500, &db));
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
  FilteredDBOptions index_options;
  index_options.expected_keys = 1000;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(index_options, options, path, &db).ok());
  EXPECT_EQ(db->index_stats().opened_from, IndexSource::kFile);
  std::string value;
  for (uint64_t i = 0; i < 500; ++i)
    ASSERT_TRUE(db->Get(leveldb::ReadOptions(), Key(i), &value).ok());
  db.reset();
  DestroyFilteredDB(path, leveldb::Options());
}

// Readers beyond the 64 owned slots share one slot, announcing themselves
// with read-modify-writes (filtered_db.h, "Readers"). 72 threads hold a slot
// each at once (each Gets once, then waits for all), so at least 8 share it,
// and all Get while another thread republishes the index (RebuildIndex frees
// each retired index once every slot, the shared one included, was seen
// idle). Every answer is right and every Get is counted exactly once.
TEST(FilteredDBSharedSlotTest, ReadersBeyondTheOwnedSlotsWhileTheIndexIsRepublished) {
  const std::string path = TestPath("db");
  constexpr uint64_t kKeys = 500;
  std::unique_ptr<FilteredDB> db;
  ASSERT_NO_FATAL_FAILURE(OpenFreshWithKeys(path, CreateIfMissing(), 1000, kKeys, &db));
  const FilteredDBStats before = db->index_stats();
  constexpr int kThreads = 72, kGets = 40;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0, finished = 0;
  const auto wait_for_all = [&](int* count) {
    std::unique_lock<std::mutex> lock(mu);
    if (++*count == kThreads) cv.notify_all();
    cv.wait(lock, [&] { return *count == kThreads; });
  };
  std::atomic<int> errors{0};
  std::atomic<bool> readers_done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string value;
      const uint64_t first = static_cast<uint64_t>(t) * 7;
      if (!db->Get(leveldb::ReadOptions(), Key(first % kKeys), &value).ok()) errors.fetch_add(1);
      wait_for_all(&arrived);  // every thread holds its slot from here on
      for (uint64_t i = 0; i < kGets; ++i) {
        const uint64_t k = (first + i) % kKeys;
        const bool present = i % 2 == 0;
        const leveldb::Status s =
            db->Get(leveldb::ReadOptions(), Key(present ? k : kKeys + 1000 * k), &value);
        if (present ? !s.ok() : !s.IsNotFound()) errors.fetch_add(1);
      }
      wait_for_all(&finished);
    });
  }
  std::thread rebuilder([&] {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return arrived == kThreads; });
    }
    do {
      if (!db->RebuildIndex().ok()) errors.fetch_add(1);
      std::unique_lock<std::mutex> lock(mu);
      readers_done = finished == kThreads;
    } while (!readers_done);
  });
  for (std::thread& th : threads) th.join();
  rebuilder.join();
  EXPECT_EQ(errors.load(), 0);
  const FilteredDBStats stats = db->index_stats();
  EXPECT_TRUE(stats.index_active);
  EXPECT_EQ(stats.keys, kKeys);
  EXPECT_EQ(stats.gets_checked - before.gets_checked, uint64_t{kThreads} * (1 + kGets));
  EXPECT_GE(stats.gets_ruled_out - before.gets_ruled_out + stats.passes_not_found -
                before.passes_not_found,
            uint64_t{kThreads} * kGets / 2);  // every absent Get, ruled out or not
  EXPECT_GE(stats.rebuilds, 2u);              // Open's and at least one RebuildIndex
  // The shared slot was left idle: the next rebuild frees every retired
  // index, leaving one index's memory.
  ASSERT_TRUE(db->RebuildIndex().ok());
  const uint64_t one_index = db->index_stats().memory_bytes;
  ASSERT_TRUE(db->RebuildIndex().ok());
  EXPECT_EQ(db->index_stats().memory_bytes, one_index);
  db.reset();
  DestroyFilteredDB(path, leveldb::Options());
}

// "blockbloom.filter-policy-stats" reads the table filter policy's counters
// (GetFilterPolicyStats) while readers' Gets probe that policy's filters:
// the counts it shows never go down nor show more negatives than probes, and
// once the readers are joined every present-key Get has probed at least one
// table filter (every key is in a table).
TEST(FilteredDBPolicyStatsTest, FilterPolicyStatsPropertyWhileGetsProbeThePolicy) {
  const std::string path = TestPath("db");
  const std::unique_ptr<const leveldb::FilterPolicy> policy(NewBlockedBloomFilterPolicy(10));
  leveldb::Options options = CreateIfMissing();
  options.filter_policy = policy.get();
  constexpr uint64_t kKeys = 400;
  std::unique_ptr<FilteredDB> db;
  ASSERT_NO_FATAL_FAILURE(OpenFreshWithKeys(path, options, 2000, kKeys, &db));
  db->CompactRange(nullptr, nullptr);  // every key in a table, the memtable empty
  const auto read_stats = [&](uint64_t* probes, uint64_t* negatives) {
    std::string value;
    return db->GetProperty("blockbloom.filter-policy-stats", &value) &&
           std::sscanf(value.c_str(), "probes: %" SCNu64 "\nnegatives: %" SCNu64, probes,
                       negatives) == 2;
  };
  uint64_t probes_before = 0, negatives_before = 0;
  ASSERT_TRUE(read_stats(&probes_before, &negatives_before));
  constexpr int kReaders = 2;
  constexpr uint64_t kGets = 300;
  std::atomic<int> errors{0};
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([&, t] {
      std::string value;
      for (uint64_t i = 0; i < kGets; ++i) {
        if (!db->Get(leveldb::ReadOptions(), Key((i * 3 + t) % kKeys), &value).ok()) {
          errors.fetch_add(1);
        }
      }
      done.fetch_add(1);
    });
  }
  threads.emplace_back([&] {
    uint64_t last = probes_before;
    do {
      uint64_t probes = 0, negatives = 0;
      if (!read_stats(&probes, &negatives) || probes < last || negatives > probes) {
        errors.fetch_add(1);
      }
      last = probes;
      std::this_thread::yield();  // the readers have the cores
    } while (done.load() < kReaders);
  });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  uint64_t probes = 0, negatives = 0;
  ASSERT_TRUE(read_stats(&probes, &negatives));
  EXPECT_GE(probes - probes_before, uint64_t{kReaders} * kGets);
  const FilterPolicyStats direct = GetFilterPolicyStats(policy.get());
  EXPECT_EQ(direct.probes, probes);
  EXPECT_EQ(direct.negatives, negatives);
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
