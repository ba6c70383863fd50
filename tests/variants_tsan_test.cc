// What the variants' headers claim about threads: const methods (queries,
// Serialize) may run concurrently. Run under ThreadSanitizer by CI (label
// tsan); here also checks that concurrent answers equal serial ones.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "blockbloom/filter_file.h"
#include "blockbloom/set_ops.h"
#include "test_keys.h"
#include "variant_adapters.h"
#include "test_paths.h"

namespace blockbloom {
namespace {

using testing_keys::Key;

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

}  // namespace
}  // namespace blockbloom
