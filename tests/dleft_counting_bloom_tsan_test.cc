// Concurrency contract of DleftCountingBloomFilter (run under ThreadSanitizer
// by CI): lock-free readers (single and batch queries, Count, stats) racing
// with writers never miss a key whose insert happened before the read;
// concurrent writers serialize correctly: once every churned key is erased
// again the tables are byte for byte what they were.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "blockbloom/dleft_counting_bloom.h"
#include "test_keys.h"

namespace blockbloom {
namespace {

using testing_keys::Key;

class DleftCountingBloomTsanTest : public ::testing::TestWithParam<int> {};

// Both cell layouts: 16-bit cells (Create's) and 12-bit ones.
TEST_P(DleftCountingBloomTsanTest, ReadersNeverMissStableKeysWhileWritersChurn) {
  auto f = GetParam() == DleftCountingBloomFilter::kCellBits
               ? DleftCountingBloomFilter::Create(6000, 0.01)
               : DleftCountingBloomFilter::CreateWithGeometry(10, 1, GetParam());
  ASSERT_TRUE(f.ok());
  DleftCountingBloomFilter& filter = **f;
  constexpr int kStable = 2000;
  std::vector<std::string> stable;
  for (int i = 0; i < kStable; ++i) stable.push_back(Key(i));
  const std::vector<std::string_view> views(stable.begin(), stable.end());
  for (const std::string& key : stable) ASSERT_TRUE(filter.Insert(key).ok());
  std::string before;
  filter.AppendTables(&before);
  // One cell per stable key, less the few sharing a whole fingerprint.
  const uint64_t occupied = filter.stats().occupied_cells;
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      for (int round = 0; round < 20; ++round) {
        for (int i = 0; i < 1000; ++i) {
          if (!filter.Insert(Key(100000 + w * 10000 + i)).ok()) errors.fetch_add(1);
        }
        for (int i = 0; i < 1000; ++i) {
          if (!filter.Erase(Key(100000 + w * 10000 + i)).ok()) errors.fetch_add(1);
        }
      }
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&] {
      auto out = std::make_unique<bool[]>(views.size());
      while (!stop.load(std::memory_order_relaxed)) {
        for (const std::string& key : stable) {
          if (!filter.MayContain(key) || filter.Count(key) == 0) errors.fetch_add(1);
        }
        filter.MayContainKeys(views, absl::MakeSpan(out.get(), views.size()));
        for (size_t i = 0; i < views.size(); ++i) errors.fetch_add(!out[i]);
        const DleftStats s = filter.stats();
        if (s.full_bucket_failures + s.counter_overflows != 0) errors.fetch_add(1);
      }
    });
  }
  threads[0].join();
  threads[1].join();
  stop = true;
  for (size_t t = 2; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(filter.stats().keys, static_cast<uint64_t>(kStable));
  EXPECT_EQ(filter.stats().occupied_cells, occupied);
  EXPECT_GT(occupied, static_cast<uint64_t>(kStable) * 99 / 100);
  std::string after;
  filter.AppendTables(&after);
  EXPECT_TRUE(after == before) << "tables changed by inserts and erases that cancel out";
}

INSTANTIATE_TEST_SUITE_P(CellBits, DleftCountingBloomTsanTest,
                         ::testing::Values(DleftCountingBloomFilter::kCellBits,
                                           DleftCountingBloomFilter::kNarrowCellBits));

}  // namespace
}  // namespace blockbloom
