// Thread-safety claims, run under TSan by CI (label "tsan"):
//  - BlockedBloomFilter: const methods (and blocked_bloom_inline.h's probes)
//    concurrently from many threads; separate filters built concurrently,
//    the first builds of the process resolving the dispatched build pointer
//    (blocked/key_probe.h) at once; BlockedBloomProbes' cache filled from
//    many threads at once.
//  - The LevelDB policies: immutable, any number of concurrent callers,
//    including LevelDB's own background compaction calling CreateFilter while
//    readers call KeyMayMatch, and several databases' compactions calling
//    CreateFilter on one policy at once; GetFilterPolicyStats of a live
//    policy while other policies are created and destroyed.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/blocked_bloom_inline.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/filter_stats.h"
#include "blockbloom/hash.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "blockbloom/math.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"
#include "test_keys.h"
#include "test_paths.h"

namespace blockbloom {
namespace {

using testing_keys::Key;

constexpr int kThreads = 4;

// Spins until all kThreads threads have called it, so their work overlaps.
void StartTogether(std::atomic<int>& ready) {
  ready.fetch_add(1);
  while (ready.load() < kThreads) std::this_thread::yield();
}

TEST(ConcurrencyTest, ConcurrentQueriesOfOneFilter) {
  std::vector<std::string> keys;
  for (int i = 0; i < 5000; ++i) keys.push_back(Key(2 * i));
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<uint64_t> hashes;
  for (const std::string_view key : views) hashes.push_back(HashKey(key));
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
        filter->MayContainHashes(hashes, absl::MakeSpan(out.get(), hashes.size()), 8 + t);
        for (size_t i = 0; i < hashes.size(); ++i) misses += !out[i];
        for (const auto& key : keys) misses += !filter->MayContain(key);
        for (const uint64_t h : hashes) {
          misses += !filter->MayContainHash(h) + !InlineMayContainHash(*filter, h);
        }
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
      StartTogether(ready);
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

// BlockedBloomProbes caches its model search per process: whole
// bits-per-key values in a lock-free table, others in a locked map. Threads
// asking for the same values in different orders race to fill both (this
// process has asked for none before); every answer is the uncached search's.
TEST(ConcurrencyTest, ProbeCountCacheFillsFromManyThreads) {
  const std::vector<double> bits = {6.5, 7.0, 9.25, 11.0, 12.75, 14.5, 17.0, 23.3};
  std::vector<std::vector<int>> got(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      StartTogether(ready);
      for (size_t i = 0; i < bits.size(); ++i) {
        const double b = bits[(i + static_cast<size_t>(t)) % bits.size()];
        got[t].push_back(BlockedBloomProbes(b));
        auto filter = BlockedBloomFilter::Create(100, b);
        got[t].push_back(filter.ok() ? filter->num_probes() : -1);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(got[t].size(), 2 * bits.size());
    for (size_t i = 0; i < bits.size(); ++i) {
      const int want = OptimalBlockedProbes(bits[(i + static_cast<size_t>(t)) % bits.size()]);
      EXPECT_EQ(got[t][2 * i], want) << t << " " << i;
      EXPECT_EQ(got[t][2 * i + 1], want) << t << " " << i;
    }
  }
}

// LevelDB calls CreateFilter from each database's compaction thread, so
// databases sharing a policy call it at once (c.h: "any number of databases
// and threads may use one policy"). Every policy kind builds the same bytes
// from every thread (the compact builder's per-thread scratch, small and
// large), and its own filters pass every key.
TEST(ConcurrencyTest, OnePolicyBuildsFiltersOnManyThreadsAtOnce) {
  std::vector<std::unique_ptr<const leveldb::FilterPolicy>> policies;
  policies.emplace_back(NewBlockedBloomFilterPolicy(10));
  policies.emplace_back(NewMigratingFilterPolicy(10));
  policies.emplace_back(NewCompactFilterPolicy(10));
  policies.emplace_back(NewMigratingCompactFilterPolicy(10));
  std::vector<std::vector<std::string>> sets;
  for (int n : {0, 1, 20, 300, 2000}) {
    sets.emplace_back();
    for (int i = 0; i < n; ++i) sets.back().push_back(Key(n + 2 * i));
  }
  const auto build = [&](size_t p, size_t s) {
    std::vector<leveldb::Slice> slices(sets[s].begin(), sets[s].end());
    std::string filter;
    policies[p]->CreateFilter(slices.data(), static_cast<int>(slices.size()), &filter);
    return filter;
  };
  std::vector<std::vector<std::string>> expected(policies.size());
  for (size_t p = 0; p < policies.size(); ++p) {
    for (size_t s = 0; s < sets.size(); ++s) expected[p].push_back(build(p, s));
  }
  std::atomic<int> failures{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      StartTogether(ready);
      const size_t cells = policies.size() * sets.size();
      for (size_t c = 0; c < cells; ++c) {
        const size_t cell = (c + static_cast<size_t>(t) * 7) % cells;
        const size_t p = cell / sets.size(), s = cell % sets.size();
        const std::string filter = build(p, s);
        failures += filter != expected[p][s];
        for (const std::string& key : sets[s]) failures += !policies[p]->KeyMayMatch(key, filter);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// GetFilterPolicyStats tells blockbloom's policies from others through a
// registry of live policies: here it reads one live policy while other
// threads probe that policy and create and destroy policies of every kind
// (registering and unregistering them). The live policy is always found, a
// policy that is not blockbloom's never is, and the counts end exact.
TEST(ConcurrencyTest, StatsOfALivePolicyWhileOtherPoliciesComeAndGo) {
  const std::unique_ptr<const leveldb::FilterPolicy> policy(NewBlockedBloomFilterPolicy(10));
  const std::unique_ptr<const leveldb::FilterPolicy> builtin(leveldb::NewBloomFilterPolicy(10));
  std::vector<std::string> keys;
  for (int i = 0; i < 100; ++i) keys.push_back(Key(2 * i));
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string filter;
  policy->CreateFilter(slices.data(), static_cast<int>(slices.size()), &filter);
  constexpr int kProbers = 2, kProbes = 2000, kChurners = 2, kRounds = 25;
  std::atomic<int> done{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kProbers; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kProbes; ++i) (void)policy->KeyMayMatch(Key(i % 200), filter);
      done.fetch_add(1);
    });
  }
  for (int t = 0; t < kChurners; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < kRounds; ++r) {
        std::unique_ptr<const leveldb::FilterPolicy> other(
            r % 4 == 0   ? NewBlockedBloomFilterPolicy(r)
            : r % 4 == 1 ? NewMigratingFilterPolicy(r)
            : r % 4 == 2 ? NewCompactFilterPolicy(r)
                         : NewMigratingCompactFilterPolicy(r));
        (void)other->KeyMayMatch(Key(r), filter);
        const FilterPolicyStats s = GetFilterPolicyStats(other.get());
        failures += !s.available || s.probes != 1;
      }
      done.fetch_add(1);
    });
  }
  threads.emplace_back([&] {
    uint64_t last = 0;
    do {
      const FilterPolicyStats s = GetFilterPolicyStats(policy.get());
      failures += !s.available || s.probes < last || s.negatives > s.probes;
      last = s.probes;
      failures += GetFilterPolicyStats(builtin.get()).available;
    } while (done.load() < kProbers + kChurners);
  });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(GetFilterPolicyStats(policy.get()).probes, uint64_t{kProbers} * kProbes);
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
