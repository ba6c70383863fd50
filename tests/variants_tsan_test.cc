// What the variants' headers claim about threads: const methods (queries,
// Serialize) may run concurrently; separate filters may be used on separate
// threads (their process-wide caches); the set operations read shared
// operands; the .bbf functions are thread-safe. Run under ThreadSanitizer by
// CI (label tsan); here also checks that concurrent answers equal serial
// ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <vector>

#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/filter_file.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "blockbloom/set_ops.h"
#include "test_keys.h"
#include "variant_adapters.h"
#include "test_paths.h"
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"

namespace blockbloom {
namespace {

using testing_keys::Key;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(VariantsThreadSafetyTest, ConcurrentQueriesAndSerializeAgreeWithSerial) {
  for (const testing_variants::Variant& v : testing_variants::AllVariants()) {
    std::unique_ptr<testing_variants::AnyFilter> filter = v.make(2000, 0.01);
    for (uint64_t i = 0; i < 8000; ++i) filter->Add(Key(2 * i));
    std::vector<char> expected(20000);
    for (uint64_t i = 0; i < expected.size(); ++i) expected[i] = filter->MayContain(Key(i));
    const std::string bytes = filter->Serialize();
    std::vector<std::thread> threads;
    std::vector<int> mismatches(4, 0);
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (uint64_t i = 0; i < expected.size(); ++i) {
          mismatches[t] += filter->MayContain(Key(i)) != (expected[i] != 0);
        }
        mismatches[t] += filter->Serialize() != bytes;
      });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << v.name << " thread " << t;
  }
}

TEST(VariantsThreadSafetyTest, LoadedFilterAndLoadsFromManyThreads) {
  auto f = StandardBloomFilter::CreateForFpr(5000, 0.01);
  for (uint64_t i = 0; i < 5000; ++i) f->AddKey(Key(i));
  const std::string path = TestPath("tsan.bbf");
  ASSERT_TRUE(SaveFilterFile(path, *f, 5000).ok());
  absl::StatusOr<LoadedFilter> shared = LoadFilterFile(path);
  ASSERT_TRUE(shared.ok());
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      LoadOptions o;
      o.mmap_threshold = t % 2 == 0 ? 0 : UINT64_MAX;  // both load paths at once
      absl::StatusOr<LoadedFilter> own = LoadFilterFile(path, o);
      failures[t] += !own.ok();
      for (uint64_t i = 0; i < 5000 && own.ok(); ++i) {
        failures[t] += !shared->MayContain(Key(i)) || !own->MayContain(Key(i));
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << t;
}

// blockbloom/set_ops.h: the operands may be read by other threads while a
// Union or Intersection reads them (and two set operations may share one).
TEST(VariantsThreadSafetyTest, SetOperationsWhileOperandsAreQueried) {
  auto a = BlockedBloomFilter::Create(4000, 10);
  auto b = BlockedBloomFilter::Create(4000, 10);
  auto sa = StandardBloomFilter::CreateForFpr(4000, 0.01);
  auto sb = StandardBloomFilter::CreateForFpr(4000, 0.01);
  ASSERT_TRUE(a.ok() && b.ok() && sa.ok() && sb.ok());
  for (uint64_t i = 0; i < 4000; ++i) {
    a->AddKey(Key(i));
    b->AddKey(Key(4000 + i));
    sa->AddKey(Key(i));
    sb->AddKey(Key(4000 + i));
  }
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        if (t % 2 == 0) {
          for (uint64_t i = 0; i < 4000; ++i) {
            failures[t] += !a->MayContain(Key(i)) || !b->MayContain(Key(4000 + i)) ||
                           !sa->MayContain(Key(i)) || !sb->MayContain(Key(4000 + i));
          }
        } else {
          absl::StatusOr<BlockedBloomFilter> u = Union(*a, *b);
          absl::StatusOr<StandardBloomFilter> su = Union(*sa, *sb);
          absl::StatusOr<StandardBloomFilter> sx = Intersection(*sa, *sb);
          failures[t] += !u.ok() || !su.ok() || !sx.ok();
          for (uint64_t i = 0; i < 8000 && u.ok() && su.ok(); ++i) {
            failures[t] += !u->MayContain(Key(i)) || !su->MayContain(Key(i));
          }
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << t;
}

// Runs body(t) on `threads` threads that start together (each waits until
// all are running, so their first calls race), and joins them.
template <typename Body>
void RunTogether(int threads, Body body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();
      body(t);
    });
  }
  for (std::thread& th : running) th.join();
}

// LevelDB policies made on many threads at once (their sizing comes from
// FilterSizing::For's process-wide cache, filled here by racing threads)
// write the bytes of policies made afterwards on one thread.
TEST(VariantsThreadSafetyTest, PoliciesMadeConcurrentlyWriteTheSameFilters) {
  constexpr int kThreads = 8;
  const double kBitsPerKey[] = {3.25, 7.75, 11.5, 23.25};
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < 40; ++i) keys.push_back(Key(i));
  const std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  const auto build = [&](bool compact, double bpk) {
    std::unique_ptr<const leveldb::FilterPolicy> policy(compact ? NewCompactFilterPolicy(bpk)
                                                                : NewBlockedBloomFilterPolicy(bpk));
    std::string out;
    for (int n : {1, 5, 40}) policy->CreateFilter(slices.data(), n, &out);
    return out;
  };
  std::vector<std::string> got(kThreads);
  RunTogether(kThreads, [&](int t) { got[t] = build(t % 2 == 1, kBitsPerKey[t / 2 % 4]); });
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(got[t], build(t % 2 == 1, kBitsPerKey[t / 2 % 4])) << t;
  }
}

// Separate scalable filters grown on separate threads at once: each new
// stage's bits per key comes from BlockedBitsPerKeyForFpr's per-process cache and
// its probe count from BlockedBloomProbes' cache, both filled here by racing
// threads (this process has built no stage before). Every filter is
// byte-identical to one grown afterwards on one thread.
TEST(VariantsThreadSafetyTest, SeparateScalableFiltersGrowConcurrently) {
  ScalableBloomOptions o;
  o.initial_capacity = 16;
  o.fpr = 0.003;
  o.tightening = 0.7;
  constexpr int kThreads = 4;
  constexpr uint64_t kKeys = 3000;  // 8 stages
  std::vector<std::string> got(kThreads);
  RunTogether(kThreads, [&](int t) {
    absl::StatusOr<ScalableBloomFilter> f = ScalableBloomFilter::Create(o);
    if (!f.ok()) return;
    for (uint64_t i = 0; i < kKeys; ++i) f->AddKey(Key(i));
    got[t] = f->Serialize();
  });
  absl::StatusOr<ScalableBloomFilter> serial = ScalableBloomFilter::Create(o);
  ASSERT_TRUE(serial.ok());
  for (uint64_t i = 0; i < kKeys; ++i) serial->AddKey(Key(i));
  EXPECT_GE(serial->num_stages(), 6u);
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(got[t] == serial->Serialize()) << t;
}

// BlockedBloomFilter::GeometryForFpr from racing threads: its bits per key
// come from BlockedBitsPerKeyForFpr's per-process cache, filled here by all
// of them at once (targets this process has not asked for before); every
// thread gets the geometry one thread gets afterwards.
TEST(VariantsThreadSafetyTest, BlockedGeometryForFprFromManyThreads) {
  constexpr int kThreads = 4;
  const double targets[] = {0.0123, 0.00456, 7.8e-5, 0.0123};
  const uint64_t keys[] = {20, 1000, 100000};
  std::vector<std::vector<uint64_t>> got(kThreads);
  RunTogether(kThreads, [&](int t) {
    for (double fpr : targets) {
      for (uint64_t n : keys) {
        const absl::StatusOr<BlockedBloomFilter::Geometry> g =
            BlockedBloomFilter::GeometryForFpr(n, fpr);
        got[t].push_back(g.ok() ? g->num_bytes * 64 + static_cast<uint64_t>(g->num_probes) : 0);
      }
    }
  });
  std::vector<uint64_t> serial;
  for (double fpr : targets) {
    for (uint64_t n : keys) {
      const absl::StatusOr<BlockedBloomFilter::Geometry> g =
          BlockedBloomFilter::GeometryForFpr(n, fpr);
      ASSERT_TRUE(g.ok()) << g.status();
      serial.push_back(g->num_bytes * 64 + static_cast<uint64_t>(g->num_probes));
    }
  }
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(got[t], serial) << t;
}

// blockbloom/filter_file.h: WriteFileAtomically is thread-safe, and
// concurrent saves of one path each publish a whole file: with a temporary
// named by the process id alone, the threads shared it, a second O_TRUNC cut
// the first's bytes and a rename found the temporary gone. Leaves no
// temporary behind.
TEST(VariantsThreadSafetyTest, ConcurrentSavesOfOnePathEachPublishAWholeFile) {
  const std::string dir = TestPath("concurrent-saves");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  const std::string path = dir + "/f.bbf";
  constexpr int kThreads = 4, kSaves = 25;
  std::vector<std::string> contents;
  for (int t = 0; t < kThreads; ++t) {
    auto f = BlockedBloomFilter::Create(1000, 10);
    for (uint64_t i = 0; i < 1000; ++i) f->AddKey(Key(i * kThreads + t));
    contents.push_back(EncodeFilterFile(*f, 1000, 0.01));
  }
  std::vector<std::future<int>> failures;
  for (int t = 0; t < kThreads; ++t) {
    failures.push_back(std::async(std::launch::async, [&, t] {
      int failed = 0;
      for (int i = 0; i < kSaves; ++i) failed += !WriteFileAtomically(path, contents[t]).ok();
      return failed;
    }));
  }
  for (auto& f : failures) EXPECT_EQ(f.get(), 0);
  const std::string saved = ReadAll(path);
  EXPECT_NE(std::find(contents.begin(), contents.end(), saved), contents.end());
  EXPECT_TRUE(DecodeFilterFile(saved).ok());
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "f.bbf");
  }
  EXPECT_EQ(entries, 1);
}

}  // namespace
}  // namespace blockbloom
