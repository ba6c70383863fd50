// Concurrency contract of CountingBloomFilter (run under ThreadSanitizer by
// CI): readers (single and batch queries, CountUpperBound, stats) racing with
// writers never see a false negative for a key whose insert happened before
// the read, and concurrent writers lose no update: once every churned key is
// erased again the counters are byte for byte what they were.
// The parameter search (CountersPerKeyForFpr, CreateForFpr) is safe to call
// from many threads at once, including while its process-wide cache fills,
// and so is the model behind it (ModelFpr; stats()).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "blockbloom/counting_bloom.h"
#include "test_keys.h"

namespace blockbloom {
namespace {

using testing_keys::Key;

TEST(CountingBloomTsanTest, ReadersNeverMissStableKeysWhileWritersChurn) {
  auto f = CountingBloomFilter::Create(4000, 6.0);
  ASSERT_TRUE(f.ok());
  CountingBloomFilter& filter = **f;
  constexpr int kStable = 1000;
  std::vector<std::string> stable;
  for (int i = 0; i < kStable; ++i) stable.push_back(Key(i));
  const std::vector<std::string_view> views(stable.begin(), stable.end());
  for (const std::string& key : stable) filter.Insert(key);
  std::string before;
  filter.AppendCounters(&before);
  std::atomic<bool> stop{false};
  std::atomic<int> misses{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {  // two writers on disjoint churn keys
    threads.emplace_back([&, w] {
      for (int round = 0; round < 30; ++round) {
        for (int i = 0; i < 1000; ++i) filter.Insert(Key(100000 + w * 10000 + i));
        for (int i = 0; i < 1000; ++i) {
          if (!filter.Erase(Key(100000 + w * 10000 + i)).ok()) misses.fetch_add(1);
        }
      }
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&] {
      auto out = std::make_unique<bool[]>(views.size());
      while (!stop.load(std::memory_order_relaxed)) {
        for (const std::string& key : stable) {
          if (!filter.MayContain(key) || filter.CountUpperBound(key) == 0) misses.fetch_add(1);
        }
        filter.MayContainKeys(views, absl::MakeSpan(out.get(), views.size()));
        for (size_t i = 0; i < views.size(); ++i) misses.fetch_add(!out[i]);
        const CountingBloomStats s = filter.stats();
        if (s.underflows != 0 || s.keys < kStable) misses.fetch_add(1);
      }
    });
  }
  threads[0].join();
  threads[1].join();
  stop = true;
  for (size_t t = 2; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(misses.load(), 0);
  EXPECT_EQ(filter.stats().keys, static_cast<uint64_t>(kStable));
  EXPECT_EQ(filter.stats().underflows, 0u);
  EXPECT_EQ(filter.stats().saturated_counters, 0u);
  // Concurrent writers lost nothing: every churn key's counters are back down.
  std::string after;
  filter.AppendCounters(&after);
  EXPECT_TRUE(after == before) << "counters changed by inserts and erases that cancel out";
}

TEST(CountingBloomTsanTest, ModelFprFromManyThreadsAgreesWithOneThread) {
  // The Poisson-mixture model (BlockedBloomFpr) once used std::lgamma, which
  // writes the global `signgam`: a data race between any two threads asking
  // for a model FPR (two filters' stats(), two FilteredDB rebuilds).
  std::vector<double> expected;
  for (double c = 1.0; c <= 24.0; c += 0.5) expected.push_back(CountingBloomFilter::ModelFpr(c));
  constexpr int kThreads = 4;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      size_t i = 0;
      for (double c = 1.0; c <= 24.0; c += 0.5, ++i) {
        if (CountingBloomFilter::ModelFpr(c) != expected[i]) mismatches.fetch_add(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(CountingBloomTsanTest, ParameterSearchIsSafeWhileItsCacheFills) {
  // Each thread asks for a different mix of targets, so the threads race to
  // extend the cache (this process has not filled it before).
  const std::vector<double> targets = {1e-6, 0.01, 0.3, 1e-4, 0.002, 1e-5};
  constexpr int kThreads = 4;
  std::vector<std::vector<double>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < targets.size(); ++i) {
        const double p = targets[(i + t) % targets.size()];
        got[t].push_back(CountingBloomFilter::CountersPerKeyForFpr(p));
        auto f = CountingBloomFilter::CreateForFpr(1000, p);
        if (f.ok()) got[t].push_back(static_cast<double>((*f)->num_probes()));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  // Against the exhaustive search through the uncached ModelFpr.
  const auto exhaustive = [](double p) {
    for (double c = CountingBloomFilter::kMinCountersPerKey;
         c < CountingBloomFilter::kMaxCountersPerKey; c += 0.25) {
      if (CountingBloomFilter::ModelFpr(c) <= p) return c;
    }
    return CountingBloomFilter::kMaxCountersPerKey;
  };
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(got[t].size(), 2 * targets.size()) << t;
    for (size_t i = 0; i < targets.size(); ++i) {
      const double p = targets[(i + t) % targets.size()];
      EXPECT_EQ(got[t][2 * i], exhaustive(p)) << p;
      EXPECT_GE(got[t][2 * i + 1], 1.0);
    }
  }
}

}  // namespace
}  // namespace blockbloom
