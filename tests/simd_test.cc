// Every compiled Highway target (EMU128, the portable scalar one, included)
// must build byte-identical filters and give identical answers, equal to the
// scalar kernel in src/blocked/kernel.h. A filter written on an AVX-512
// machine is therefore read correctly on any other.
#include "blocked_bloom_simd.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "blocked/kernel.h"
#include "test_keys.h"

namespace blockbloom {
namespace {

using testing_keys::SplitMix64;

class EveryTarget : public ::testing::Test {
 protected:
  void TearDown() override { simd::ForceTargetForTesting(0); }
};

std::vector<uint64_t> Hashes(size_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<uint64_t> h(n);
  for (uint64_t& x : h) x = rng.Next();
  return h;
}

// The reference: one key at a time through the scalar kernel.
std::vector<uint8_t> ScalarBuild(const std::vector<uint64_t>& hashes, uint64_t bytes, int k) {
  std::vector<uint8_t> data(bytes);
  for (uint64_t h : hashes) blocked::AddHash(h, bytes * 8, k, data.data());
  return data;
}

TEST_F(EveryTarget, CompilesScalarAndBestTargets) {
  const std::vector<int64_t> targets = simd::SupportedTargets();
  ASSERT_GE(targets.size(), 2u) << "expected at least EMU128 and one SIMD target";
  // The portable target is EMU128 or SCALAR depending on Highway's baseline.
  const std::string last = simd::TargetName(targets.back());
  EXPECT_TRUE(last == "EMU128" || last == "SCALAR") << last;
  for (int64_t t : targets) std::printf("compiled+supported target: %s\n", simd::TargetName(t).c_str());
}

TEST_F(EveryTarget, BuildsIdenticalBytes) {
  struct Shape {
    size_t keys;
    uint64_t bytes;
    int k;
  };
  std::vector<Shape> shapes;
  for (size_t n : {0, 1, 2, 3, 15, 16, 17, 63, 64, 65, 100, 1000, 4097}) {
    for (int k : {1, 2, 7, 11, 16}) shapes.push_back({n, (n * 10 + 7) / 8, k});
  }
  shapes.push_back({200000, 250000, 7});
  shapes.push_back({50, 1, 3});   // one byte: an 8-bit block
  shapes.push_back({50, 65, 5});  // a full block and a 1-byte block
  for (const Shape& s : shapes) {
    const std::vector<uint64_t> hashes = Hashes(s.keys, s.keys * 31 + s.k);
    const std::vector<uint8_t> expected = ScalarBuild(hashes, s.bytes, s.k);
    for (int64_t target : simd::SupportedTargets()) {
      simd::ForceTargetForTesting(target);
      std::vector<uint8_t> got(s.bytes);
      simd::AddHashes(hashes.data(), hashes.size(), s.bytes * 8, s.k, got.data());
      ASSERT_EQ(got, expected) << simd::TargetName(target) << " keys=" << s.keys
                               << " bytes=" << s.bytes << " k=" << s.k;
    }
  }
}

TEST_F(EveryTarget, ProbesAnswerIdenticallyAtEveryWindowAndAlignment) {
  for (size_t n : {1, 10, 100, 1000, 50000}) {
    for (int k : {1, 6, 7, 16}) {
      const uint64_t bytes = (n * 10 + 7) / 8;
      const std::vector<uint64_t> present = Hashes(n, n + k);
      const std::vector<uint8_t> filter = ScalarBuild(present, bytes, k);
      std::vector<uint64_t> queries = Hashes(3000, 7 * n + k);
      queries.insert(queries.end(), present.begin(), present.begin() + std::min<size_t>(n, 500));
      std::vector<char> expected(queries.size());
      for (size_t i = 0; i < queries.size(); ++i) {
        expected[i] = blocked::MayContainHash(queries[i], bytes * 8, k, filter.data());
      }
      // Aligned and padded to whole blocks (gather path) at offset 0; byte
      // path at misaligned offsets 1..3 and without padding.
      const uint64_t padded = (bytes + 63) / 64 * 64;
      for (size_t offset : {0, 1, 2, 3}) {
        std::vector<uint8_t> storage(padded + 128);
        const uintptr_t addr = reinterpret_cast<uintptr_t>(storage.data());
        uint8_t* aligned = storage.data() + (64 - addr % 64) % 64;
        std::memcpy(aligned + offset, filter.data(), bytes);
        const size_t readable = offset == 0 ? padded : bytes;
        for (int64_t target : simd::SupportedTargets()) {
          simd::ForceTargetForTesting(target);
          for (size_t window : {1, 5, 16, 64, 1024}) {
            auto out = std::make_unique<bool[]>(queries.size());
            simd::MayContainHashes(queries.data(), queries.size(), bytes * 8, k,
                                   aligned + offset, readable, out.get(), window);
            for (size_t i = 0; i < queries.size(); ++i) {
              ASSERT_EQ(out[i], expected[i] != 0)
                  << simd::TargetName(target) << " n=" << n << " k=" << k
                  << " offset=" << offset << " window=" << window << " i=" << i;
            }
          }
        }
      }
      // Every present key is found (no false negatives on any target).
      for (size_t i = 3000; i < queries.size(); ++i) ASSERT_TRUE(expected[i]);
    }
  }
}

}  // namespace
}  // namespace blockbloom
