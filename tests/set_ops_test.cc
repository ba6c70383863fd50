// Union and intersection: semantics (union holds both sets and equals the
// filter built from A ∪ B; intersection holds A ∩ B), shape checks, and the
// Highway kernels on every compiled target against a scalar reference.
#include "blockbloom/set_ops.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bitwise_simd.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"
#include "blocked_bloom_simd.h"
#include "test_keys.h"

namespace blockbloom {
namespace {

using testing_keys::Key;
using testing_keys::SplitMix64;

// A = keys [0, 6000), B = keys [4000, 10000): overlap [4000, 6000).
constexpr uint64_t kA0 = 0, kA1 = 6000, kB0 = 4000, kB1 = 10000;

template <class F>
void AddRange(F& f, uint64_t lo, uint64_t hi) {
  for (uint64_t i = lo; i < hi; ++i) f.AddKey(Key(i));
}

template <class F>
void CheckSemantics(absl::StatusOr<F> a, absl::StatusOr<F> b, absl::StatusOr<F> all) {
  ASSERT_TRUE(a.ok() && b.ok() && all.ok());
  AddRange(*a, kA0, kA1);
  AddRange(*b, kB0, kB1);
  AddRange(*all, kA0, kB1);
  absl::StatusOr<F> u = Union(*a, *b);
  absl::StatusOr<F> x = Intersection(*a, *b);
  ASSERT_TRUE(u.ok()) << u.status();
  ASSERT_TRUE(x.ok()) << x.status();
  for (uint64_t i = kA0; i < kB1; ++i) ASSERT_TRUE(u->MayContain(Key(i))) << i;
  for (uint64_t i = kB0; i < kA1; ++i) ASSERT_TRUE(x->MayContain(Key(i))) << i;
  // OR of the bits is the filter of A ∪ B built directly, byte for byte.
  ASSERT_EQ(u->num_bytes(), all->num_bytes());
  EXPECT_EQ(0, std::memcmp(u->data(), all->data(), u->num_bytes()));
  // AND of the bits: byte for byte, and it rejects most of A \ B and B \ A
  // (a filter that kept A's bits would accept all of them).
  for (uint64_t i = 0; i < a->num_bytes(); ++i) {
    ASSERT_EQ(x->data()[i], a->data()[i] & b->data()[i]) << i;
  }
  int only_one_side = 0;
  for (uint64_t i = kA0; i < kB0; ++i) only_one_side += x->MayContain(Key(i));
  for (uint64_t i = kA1; i < kB1; ++i) only_one_side += x->MayContain(Key(i));
  EXPECT_LT(only_one_side, 400);  // of 8000
}

TEST(SetOpsTest, BlockedUnionAndIntersection) {
  ASSERT_NO_FATAL_FAILURE(CheckSemantics(BlockedBloomFilter::Create(10000, 10),
                                         BlockedBloomFilter::Create(10000, 10),
                                         BlockedBloomFilter::Create(10000, 10)));
}

TEST(SetOpsTest, StandardUnionAndIntersection) {
  for (HashScheme s : {HashScheme::kDoubleHashing, HashScheme::kEnhancedDoubleHashing}) {
    ASSERT_NO_FATAL_FAILURE(CheckSemantics(StandardBloomFilter::CreateForFpr(10000, 0.01, s),
                                           StandardBloomFilter::CreateForFpr(10000, 0.01, s),
                                           StandardBloomFilter::CreateForFpr(10000, 0.01, s)))
        << HashSchemeName(s);
  }
}

TEST(SetOpsTest, PartitionedUnionAndIntersection) {
  ASSERT_NO_FATAL_FAILURE(CheckSemantics(PartitionedBloomFilter::CreateForFpr(10000, 0.01),
                                         PartitionedBloomFilter::CreateForFpr(10000, 0.01),
                                         PartitionedBloomFilter::CreateForFpr(10000, 0.01)));
}

TEST(SetOpsTest, KeyCountsAreBounds) {
  auto a = StandardBloomFilter::Create(100, 10);
  auto b = StandardBloomFilter::Create(100, 10);
  AddRange(*a, 0, 30);
  AddRange(*b, 0, 50);
  EXPECT_EQ(Union(*a, *b)->num_added(), 80u);
  EXPECT_EQ(Intersection(*a, *b)->num_added(), 30u);
}

TEST(SetOpsTest, ShapeMismatchIsInvalidArgument) {
  const auto invalid = [](const absl::Status& s) {
    return s.code() == absl::StatusCode::kInvalidArgument;
  };
  EXPECT_TRUE(
      invalid(Union(*BlockedBloomFilter::Create(1000, 10), *BlockedBloomFilter::Create(1001, 10))
                  .status()));
  EXPECT_TRUE(invalid(Intersection(*BlockedBloomFilter::CreateWithGeometry(640, 6),
                                   *BlockedBloomFilter::CreateWithGeometry(640, 7))
                          .status()));
  EXPECT_TRUE(invalid(Union(*StandardBloomFilter::CreateWithGeometry(1000, 5),
                            *StandardBloomFilter::CreateWithGeometry(1001, 5))
                          .status()));
  EXPECT_TRUE(invalid(Union(*StandardBloomFilter::CreateWithGeometry(1000, 5),
                            *StandardBloomFilter::CreateWithGeometry(1000, 6))
                          .status()));
  EXPECT_TRUE(
      invalid(Union(*StandardBloomFilter::CreateWithGeometry(1000, 5, HashScheme::kDoubleHashing),
                    *StandardBloomFilter::CreateWithGeometry(1000, 5))
                  .status()));
  EXPECT_TRUE(invalid(Intersection(*PartitionedBloomFilter::CreateWithGeometry(100, 5),
                                   *PartitionedBloomFilter::CreateWithGeometry(101, 5))
                          .status()));
  // Same total bits, different slicing: still a different shape.
  EXPECT_TRUE(invalid(Union(*PartitionedBloomFilter::CreateWithGeometry(100, 6),
                            *PartitionedBloomFilter::CreateWithGeometry(120, 5))
                          .status()));
}

TEST(SetOpsTest, ZeroByteBlockedFiltersKeepTheirMeaning) {
  auto empty = BlockedBloomFilter::Create(0, 10);
  auto full = BlockedBloomFilter::Create(0, 10);
  full->AddKey("x");  // sized for 0 keys, given one: a 1-byte all-ones filter
  auto also_full = BlockedBloomFilter::Create(0, 10);
  also_full->AddKey("y");
  EXPECT_FALSE(Union(*empty, *empty)->MayContain("anything"));
  EXPECT_FALSE(Intersection(*empty, *empty)->MayContain("anything"));
  EXPECT_TRUE(Union(*full, *also_full)->MayContain("anything"));
  EXPECT_TRUE(Intersection(*full, *also_full)->MayContain("anything"));
  // The empty set and a match-everything filter differ in shape now.
  EXPECT_EQ(Union(*empty, *full).status().code(), absl::StatusCode::kInvalidArgument);
}

// A version-2 (flat) filter, as a LevelDB policy writes for a small table and
// BlockedBloomFilter::Deserialize keeps it: its bits mean something else
// than a 512-bit-blocked filter's of the same size.
BlockedBloomFilter FlatFilterOf(uint64_t lo, uint64_t hi) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(NewBlockedBloomFilterPolicy(10));
  std::vector<std::string> keys;
  for (uint64_t i = lo; i < hi; ++i) keys.push_back(Key(i));
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string encoded;
  policy->CreateFilter(slices.data(), static_cast<int>(slices.size()), &encoded);
  absl::StatusOr<BlockedBloomFilter> f = BlockedBloomFilter::Deserialize(encoded);
  EXPECT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->flat());
  return *std::move(f);
}

TEST(SetOpsTest, FlatBlockedFiltersKeepTheirGeometry) {
  // 40 keys at 10 bits/key: 50 bytes, flat. Union holds both sets, the
  // intersection the common keys; neither may answer "no" for them.
  const BlockedBloomFilter a = FlatFilterOf(0, 40);
  const BlockedBloomFilter b = FlatFilterOf(20, 60);
  ASSERT_EQ(a.num_bytes(), b.num_bytes());
  absl::StatusOr<BlockedBloomFilter> u = Union(a, b);
  absl::StatusOr<BlockedBloomFilter> x = Intersection(a, b);
  ASSERT_TRUE(u.ok()) << u.status();
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_TRUE(u->flat());
  EXPECT_TRUE(x->flat());
  for (uint64_t i = 0; i < 60; ++i) EXPECT_TRUE(u->MayContain(Key(i))) << i;
  for (uint64_t i = 20; i < 40; ++i) EXPECT_TRUE(x->MayContain(Key(i))) << i;
  // A flat and a blocked filter of the same size and k differ in shape.
  absl::StatusOr<BlockedBloomFilter> blocked =
      BlockedBloomFilter::CreateWithGeometry(a.num_bytes(), a.num_probes());
  ASSERT_TRUE(blocked.ok());
  EXPECT_EQ(Union(a, *blocked).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Intersection(*blocked, a).status().code(), absl::StatusCode::kInvalidArgument);
}

// ---- The kernels: every compiled target against a scalar reference ----

class TargetGuard {
 public:
  ~TargetGuard() { simd::ForceTargetForTesting(0); }
};

TEST(BitwiseSimdTest, EveryTargetMatchesScalarReference) {
  TargetGuard guard;
  SplitMix64 rng(7);
  std::vector<uint8_t> a(4200), b(4200);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<uint8_t>(rng.Next());
    b[i] = static_cast<uint8_t>(rng.Next());
  }
  const std::vector<int64_t> targets = simd::SupportedTargets();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    simd::ForceTargetForTesting(target);
    for (size_t n : {0, 1, 15, 16, 17, 31, 63, 64, 65, 127, 129, 1000, 4096}) {
      for (size_t offset : {0, 1, 3, 7}) {  // misaligned inputs and output
        std::vector<uint8_t> out_or(n + 8, 0xAA), out_and(n + 8, 0xAA);
        simd::OrBytes(a.data() + offset, b.data() + offset, out_or.data() + offset, n);
        simd::AndBytes(a.data() + offset, b.data() + offset, out_and.data() + offset, n);
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(out_or[offset + i], a[offset + i] | b[offset + i])
              << simd::TargetName(target) << " n=" << n << " i=" << i;
          ASSERT_EQ(out_and[offset + i], a[offset + i] & b[offset + i])
              << simd::TargetName(target) << " n=" << n << " i=" << i;
        }
        // Not one byte written outside [offset, offset + n).
        for (size_t i = 0; i < offset; ++i) ASSERT_EQ(out_or[i], 0xAA);
        for (size_t i = offset + n; i < out_or.size(); ++i) ASSERT_EQ(out_and[i], 0xAA);
      }
    }
    // In place (out == a).
    std::vector<uint8_t> in_place(a.begin(), a.begin() + 1001);
    simd::OrBytes(in_place.data(), b.data(), in_place.data(), in_place.size());
    for (size_t i = 0; i < in_place.size(); ++i) ASSERT_EQ(in_place[i], a[i] | b[i]);
  }
}

TEST(BitwiseSimdTest, EveryTargetGivesIdenticalMergedFilters) {
  TargetGuard guard;
  auto a = BlockedBloomFilter::Create(20000, 10);
  auto b = BlockedBloomFilter::Create(20000, 10);
  AddRange(*a, 0, 20000);
  AddRange(*b, 10000, 30000);
  std::string first_union, first_inter;
  for (int64_t target : simd::SupportedTargets()) {
    simd::ForceTargetForTesting(target);
    const std::string u = Union(*a, *b)->Serialize();
    const std::string x = Intersection(*a, *b)->Serialize();
    if (first_union.empty()) {
      first_union = u;
      first_inter = x;
    }
    EXPECT_EQ(u, first_union) << simd::TargetName(target);
    EXPECT_EQ(x, first_inter) << simd::TargetName(target);
  }
}

}  // namespace
}  // namespace blockbloom
