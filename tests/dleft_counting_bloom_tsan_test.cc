// Concurrency contract of DleftCountingBloomFilter (run under ThreadSanitizer
// by CI): lock-free readers racing with writers never miss a key whose
// insert happened before the read; concurrent writers serialize correctly.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "blockbloom/dleft_counting_bloom.h"
#include "test_keys.h"

namespace blockbloom {
namespace {

using testing_keys::Key;

TEST(DleftCountingBloomTsanTest, ReadersNeverMissStableKeysWhileWritersChurn) {
  auto f = DleftCountingBloomFilter::Create(6000, 0.01);
  ASSERT_TRUE(f.ok());
  DleftCountingBloomFilter& filter = **f;
  constexpr int kStable = 2000;
  for (int i = 0; i < kStable; ++i) ASSERT_TRUE(filter.Insert(Key(i)).ok());
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
      while (!stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < kStable; ++i) {
          if (!filter.MayContain(Key(i))) errors.fetch_add(1);
        }
      }
    });
  }
  threads[0].join();
  threads[1].join();
  stop = true;
  for (size_t t = 2; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(filter.stats().keys, static_cast<uint64_t>(kStable));
  EXPECT_EQ(filter.stats().occupied_cells, static_cast<uint64_t>(kStable));
}

}  // namespace
}  // namespace blockbloom
