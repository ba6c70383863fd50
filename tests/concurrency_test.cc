// Thread-safety claims, run under TSan by CI (label "tsan"):
//  - BlockedBloomFilter: const methods concurrently from many threads; and
//    separate filters built concurrently, the first builds of the process
//    resolving the dispatched build pointer (blocked/key_probe.h) at once.
//  - The LevelDB policies: immutable, any number of concurrent callers,
//    including LevelDB's own background compaction calling CreateFilter while
//    readers call KeyMayMatch.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "leveldb/db.h"
#include "test_keys.h"
#include "test_paths.h"

namespace blockbloom {
namespace {

using testing_keys::Key;

constexpr int kThreads = 4;

TEST(ConcurrencyTest, ConcurrentQueriesOfOneFilter) {
  std::vector<std::string> keys;
  for (int i = 0; i < 5000; ++i) keys.push_back(Key(2 * i));
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  auto filter = BlockedBloomFilter::BuildFromKeys(views, 10);
  ASSERT_TRUE(filter.ok());
  std::atomic<int> misses{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto out = std::make_unique<bool[]>(views.size());
      for (int round = 0; round < 5; ++round) {
        filter->MayContainKeys(views, absl::MakeSpan(out.get(), views.size()), 16 + t);
        for (size_t i = 0; i < views.size(); ++i) misses += !out[i];
        for (const auto& key : keys) misses += !filter->MayContain(key);
        misses += filter->Serialize().size() != filter->num_bytes() + 3;  // the trailer
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(misses.load(), 0);
}

// Each thread builds its own filters from the same (read-only) keys; ctest
// runs this test in its own process, so the threads' first AddKeys calls race
// to resolve the process-wide build and probe pointers. Every filter is
// byte-identical and finds every key.
TEST(ConcurrencyTest, SeparateFiltersBuiltConcurrently) {
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) keys.push_back(Key(2 * i));
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::string> built(kThreads);
  std::atomic<int> misses{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();  // start together
      for (uint64_t capacity : {uint64_t{100}, uint64_t{3000}, uint64_t{300000}}) {
        auto filter = BlockedBloomFilter::Create(capacity, 10);
        if (!filter.ok()) {
          ++misses;
          continue;
        }
        filter->AddKeys(views);
        for (const std::string_view key : views) misses += !filter->MayContain(key);
        if (capacity == 3000) built[static_cast<size_t>(t)] = filter->Serialize();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(misses.load(), 0);
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(built[static_cast<size_t>(t)], built[0]) << t;
}

TEST(ConcurrencyTest, PolicySharedByReadersAndCompaction) {
  const std::string path = TestPath("db");
  leveldb::DestroyDB(path, leveldb::Options());
  std::unique_ptr<const leveldb::FilterPolicy> policy(NewBlockedBloomFilterPolicy(10));
  leveldb::Options options;
  options.create_if_missing = true;
  options.filter_policy = policy.get();
  options.write_buffer_size = 64 << 10;  // small memtables: many flushes
  leveldb::DB* raw = nullptr;
  ASSERT_TRUE(leveldb::DB::Open(options, path, &raw).ok());
  std::unique_ptr<leveldb::DB> db(raw);
  constexpr int kPerWriter = 3000;
  std::atomic<int> written{0};  // keys [0, written) are durable
  std::atomic<bool> done{false};
  std::atomic<int> errors{0};
  std::thread writer([&] {
    for (int i = 0; i < kPerWriter * kThreads; ++i) {
      if (!db->Put(leveldb::WriteOptions(), Key(i), std::string(100, 'v')).ok()) ++errors;
      written.store(i + 1, std::memory_order_release);
    }
    done = true;
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < kThreads; ++t) {
    readers.emplace_back([&, t] {
      std::string value;
      for (int i = t; !done.load() || i < kPerWriter; i += kThreads) {
        const int limit = written.load(std::memory_order_acquire);
        if (limit == 0) continue;
        if (!db->Get(leveldb::ReadOptions(), Key(i % limit), &value).ok()) ++errors;
        if (i > 4 * kPerWriter * kThreads) break;
      }
    });
  }
  writer.join();
  for (auto& th : readers) th.join();
  db->CompactRange(nullptr, nullptr);
  std::string value;
  for (int i = 0; i < kPerWriter * kThreads; ++i) {
    ASSERT_TRUE(db->Get(leveldb::ReadOptions(), Key(i), &value).ok());
  }
  EXPECT_EQ(errors.load(), 0);
  db.reset();
  leveldb::DestroyDB(path, leveldb::Options());
}

}  // namespace
}  // namespace blockbloom
