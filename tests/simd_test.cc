// Every compiled Highway target (EMU128, the portable scalar one, included)
// must build byte-identical filters and give identical answers, equal to the
// scalar kernel in simd/blocked_kernel.h. A filter written on an AVX-512
// machine is therefore read correctly on any other.
//
// Two layers: the per-target kernels of simd/blocked_bloom-inl.h, included
// here once per target (foreach_target.h) and registered per target
// (HWY_EXPORT_AND_TEST_P), so a failure names its target; then the public,
// dispatched API (simd::AddHashes, MayContainHashes, MayContainHash) under
// every target forced in turn.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "blocked_bloom-inl.h"
#include "blocked_bloom_simd.h"
#include "blocked_kernel.h"
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "test_keys.h"

// ---- Per-target kernels against the scalar reference ----
HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {

// The reference is the scalar kernel, one key at a time.
HWY_NOINLINE bool ReferenceProbe(uint64_t hash, uint64_t total_bits, int k, const uint8_t* data) {
  return blocked::MayContainHash(hash, total_bits, k, data);
}

// Filter bytes in an exact-size heap buffer at a chosen misalignment, so that
// ASan flags any read past the filter's ceil(total_bits / 8) bytes.
struct PlacedFilter {
  std::unique_ptr<uint8_t[]> storage;
  uint8_t* data;
  PlacedFilter(const std::vector<uint8_t>& bytes, size_t misalign)
      : storage(new uint8_t[bytes.size() + misalign + 1]), data(storage.get() + misalign) {
    if (!bytes.empty()) std::memcpy(data, bytes.data(), bytes.size());
  }
};

// Sweep: sizes from 1 byte to several blocks (full and short last blocks),
// every k, misalignments 0..63; random hashes plus every present hash.
HWY_NOINLINE void TestSingleProbeMatchesScalar() {
  testing_keys::SplitMix64 rng(HWY_TARGET);
  const uint64_t kBytes[] = {1,   2,   7,   8,   63,  64,   65,   100,
                             127, 128, 129, 191, 192, 1000, 4096, 12347};
  for (uint64_t bytes : kBytes) {
    for (int k = 1; k <= blocked::kMaxProbes; ++k) {
      std::vector<uint8_t> filter(bytes);
      std::vector<uint64_t> present(bytes * 8 / 10 + 1);
      for (uint64_t& h : present) {
        h = rng.Next();
        blocked::AddHash(h, bytes * 8, k, filter.data());
      }
      for (size_t misalign : {size_t{0}, size_t{1}, size_t{3}, size_t{17}, size_t{63}}) {
        const PlacedFilter placed(filter, misalign);
        for (int q = 0; q < 400; ++q) {
          const uint64_t h = rng.Next();
          ASSERT_EQ(MayContainHashOne(h, bytes * 8, k, placed.data),
                    ReferenceProbe(h, bytes * 8, k, placed.data))
              << hwy::TargetName(HWY_TARGET) << " bytes=" << bytes << " k=" << k
              << " misalign=" << misalign << " hash=" << h;
        }
        for (uint64_t h : present) {
          ASSERT_TRUE(MayContainHashOne(h, bytes * 8, k, placed.data))
              << hwy::TargetName(HWY_TARGET) << " false negative, bytes=" << bytes << " k=" << k;
        }
      }
    }
  }
}

// Full blocks only, every bit pattern density: lines with a single bit
// cleared, all ones, all zeros, so each probe lane's word and bit selection
// is checked in isolation.
HWY_NOINLINE void TestFullBlockEveryBitCleared() {
  testing_keys::SplitMix64 rng(HWY_TARGET + 1);
  std::vector<uint8_t> line(64, 0xFF);
  for (int k : {1, 4, 7, 8, 9, 16}) {
    for (int bit = 0; bit < 512; ++bit) {
      line.assign(64, 0xFF);
      line[bit / 8] = static_cast<uint8_t>(line[bit / 8] & ~(1u << (bit % 8)));
      for (int q = 0; q < 64; ++q) {
        const uint32_t seed = static_cast<uint32_t>(rng.Next());
        ASSERT_EQ(TestFullBlock(line.data(), seed, k),
                  blocked::detail::TestProbes<true>(seed, 512, k, line.data()))
            << hwy::TargetName(HWY_TARGET) << " k=" << k << " cleared bit=" << bit;
      }
    }
  }
}

// The in-register mask build sets exactly the scalar kernel's bits, for
// every k, on a line at every misalignment and with prior contents.
HWY_NOINLINE void TestSetFullBlockMatchesScalar() {
  testing_keys::SplitMix64 rng(HWY_TARGET + 3);
  std::vector<uint8_t> storage(64 + 64);
  std::vector<uint8_t> expected(64);
  for (int k = 1; k <= blocked::kMaxProbes; ++k) {
    for (size_t misalign = 0; misalign < 64; misalign += 7) {
      for (int q = 0; q < 200; ++q) {
        const uint32_t seed = static_cast<uint32_t>(rng.Next());
        for (size_t i = 0; i < 64; ++i)
          expected[i] = (q % 3 == 0) ? static_cast<uint8_t>(rng.Next()) : 0;
        std::copy(expected.begin(), expected.end(), storage.begin() + misalign);
        blocked::detail::SetProbes<true>(seed, 512, k, expected.data());
        SetFullBlock(storage.data() + misalign, seed, k);
        ASSERT_TRUE(std::equal(expected.begin(), expected.end(), storage.begin() + misalign))
            << hwy::TargetName(HWY_TARGET) << " k=" << k << " seed=" << seed;
      }
    }
  }
}

// Builds and batch probes of the per-target kernels: byte-identical filters,
// identical answers at every window and prefetch hint.
HWY_NOINLINE void TestBuildAndBatchMatchScalar() {
  testing_keys::SplitMix64 rng(HWY_TARGET + 2);
  for (uint64_t bytes : {uint64_t{1}, uint64_t{65}, uint64_t{1250}, uint64_t{100003}}) {
    for (int k : {1, 7, 16}) {
      std::vector<uint64_t> hashes(bytes * 8 / 10 + 1);
      for (uint64_t& h : hashes) h = rng.Next();
      std::vector<uint8_t> expected(bytes), got(bytes);
      for (uint64_t h : hashes) blocked::AddHash(h, bytes * 8, k, expected.data());
      AddHashesRolling(hashes.data(), hashes.size(), bytes * 8, k, got.data(), 16);
      ASSERT_EQ(got, expected) << hwy::TargetName(HWY_TARGET) << " bytes=" << bytes;
      std::vector<uint64_t> queries(2000);
      for (uint64_t& h : queries) h = rng.Next();
      auto out = std::make_unique<bool[]>(queries.size());
      for (size_t window : {size_t{1}, size_t{7}, size_t{64}, size_t{5000}}) {
        MayContainHashesRolling<1>(queries.data(), queries.size(), bytes * 8, k, got.data(), window,
                                   out.get());
        for (size_t i = 0; i < queries.size(); ++i) {
          ASSERT_EQ(out[i], blocked::MayContainHash(queries[i], bytes * 8, k, got.data()))
              << hwy::TargetName(HWY_TARGET) << " window=" << window << " i=" << i;
        }
      }
      auto present = std::make_unique<bool[]>(hashes.size());
      MayContainHashesRolling<3>(hashes.data(), hashes.size(), bytes * 8, k, got.data(), 64,
                                 present.get());
      for (size_t i = 0; i < hashes.size(); ++i) ASSERT_TRUE(present[i]);
    }
  }
}

// The rolling windows read no hash past the n given: the hashes end at a
// page whose next page is inaccessible, so a read of hashes[n] (a prefetch
// refill one key too far) crashes the test even without ASan. Bytes and
// answers as the scalar reference, n below, at and above each window.
HWY_NOINLINE void TestRollingWindowsReadNoHashPastTheEnd() {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* map = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  struct Unmap {
    void* p;
    size_t len;
    ~Unmap() { ::munmap(p, len); }
  } unmap{map, 2 * page};
  uint8_t* const guard = static_cast<uint8_t*>(map) + page;
  ASSERT_EQ(::mprotect(guard, page, PROT_NONE), 0);
  testing_keys::SplitMix64 rng(HWY_TARGET + 9);
  constexpr uint64_t kBytes = 20000;
  for (const size_t n : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{300}}) {
    uint64_t* const hashes = reinterpret_cast<uint64_t*>(guard) - n;
    for (size_t i = 0; i < n; ++i) hashes[i] = rng.Next();
    for (const size_t window : {size_t{1}, size_t{16}, size_t{64}, size_t{1000}}) {
      std::vector<uint8_t> expected(kBytes), got(kBytes);
      for (size_t i = 0; i < n; ++i) blocked::AddHash(hashes[i], kBytes * 8, 7, expected.data());
      AddHashesRolling(hashes, n, kBytes * 8, 7, got.data(), window);
      ASSERT_EQ(got, expected) << hwy::TargetName(HWY_TARGET) << " n=" << n << " w=" << window;
      auto out = std::make_unique<bool[]>(n);
      MayContainHashesRolling<3>(hashes, n, kBytes * 8, 7, got.data(), window, out.get());
      for (size_t i = 0; i < n; ++i) ASSERT_TRUE(out[i]) << hwy::TargetName(HWY_TARGET);
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace blockbloom {
HWY_BEFORE_TEST(BlockedKernelPerTarget);
HWY_EXPORT_AND_TEST_P(BlockedKernelPerTarget, TestSingleProbeMatchesScalar);
HWY_EXPORT_AND_TEST_P(BlockedKernelPerTarget, TestFullBlockEveryBitCleared);
HWY_EXPORT_AND_TEST_P(BlockedKernelPerTarget, TestBuildAndBatchMatchScalar);
HWY_EXPORT_AND_TEST_P(BlockedKernelPerTarget, TestSetFullBlockMatchesScalar);
HWY_EXPORT_AND_TEST_P(BlockedKernelPerTarget, TestRollingWindowsReadNoHashPastTheEnd);
}  // namespace blockbloom

// ---- The dispatched public API under every target ----
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
}

// Only a target this CPU runs can be forced: any other compiled target
// (AVX-512 on an AVX2 machine) or a set of targets is refused and changes
// nothing (forcing one the CPU cannot run ended the process with SIGILL at
// its first probe).
TEST_F(EveryTarget, ForcingATargetTheCpuCannotRunIsRefused) {
  const std::vector<int64_t> runnable = simd::SupportedTargets();
  const std::string best = simd::ActiveTargetName();
  for (int64_t bits = HWY_TARGETS; bits != 0; bits &= bits - 1) {
    const int64_t target = bits & -bits;
    const bool runs = std::find(runnable.begin(), runnable.end(), target) != runnable.end();
    EXPECT_EQ(simd::ForceTargetForTesting(target), runs) << simd::TargetName(target);
    if (runs) {
      EXPECT_EQ(simd::ActiveTargetName(), simd::TargetName(target));
      ASSERT_TRUE(simd::ForceTargetForTesting(0));
    } else {
      EXPECT_EQ(simd::ActiveTargetName(), best) << simd::TargetName(target);
    }
  }
  ASSERT_TRUE(simd::ForceTargetForTesting(runnable.back()));
  EXPECT_FALSE(simd::ForceTargetForTesting(runnable.front() | runnable.back()));  // a set
  EXPECT_EQ(simd::ActiveTargetName(), simd::TargetName(runnable.back()));         // kept
  ASSERT_TRUE(simd::ForceTargetForTesting(0));
  EXPECT_EQ(simd::ActiveTargetName(), best);
}

// The kernel families' target rule (simd/targets.cc), for CPUs other than
// this one: only where the best target is AVX-512 and AVX2 is there too
// does a family leave the best target, and only for AVX2.
TEST(KernelTargetRule, AvxTwoOnlyForTheFamiliesMeasuredSlowerOnAvx512) {
#if HWY_ARCH_X86
  using simd::KernelFamily;
  using simd::internal::KernelTargetFor;
  const int64_t avx512 = HWY_AVX3 | HWY_AVX2 | HWY_SSE4 | HWY_SSSE3 | HWY_EMU128;
  if ((HWY_TARGETS & HWY_AVX3) == 0 || (HWY_TARGETS & HWY_AVX2) == 0) {
    GTEST_SKIP() << "AVX3 or AVX2 not compiled";
  }
  for (const bool amd : {false, true}) {
    SCOPED_TRACE(amd ? "AMD" : "Intel");
    EXPECT_EQ(KernelTargetFor(KernelFamily::kSingleProbe, avx512, amd), HWY_AVX2);
    EXPECT_EQ(KernelTargetFor(KernelFamily::kBatchProbeInCache, avx512, amd), HWY_AVX2);
    EXPECT_EQ(KernelTargetFor(KernelFamily::kBuild, avx512, amd), HWY_AVX3);
    // Without AVX-512 every family runs on the best target.
    const int64_t avx2 = avx512 & ~int64_t{HWY_AVX3};
    for (KernelFamily f : {KernelFamily::kSingleProbe, KernelFamily::kBatchProbeInCache,
                           KernelFamily::kBatchProbe, KernelFamily::kBuild}) {
      EXPECT_EQ(KernelTargetFor(f, avx2, amd), HWY_AVX2);
      // A target forced alone (ForceTargetForTesting) is kept.
      EXPECT_EQ(KernelTargetFor(f, HWY_AVX3, amd), HWY_AVX3);
    }
  }
  // Out of cache: AVX3 measured faster on Intel, slower on AMD Zen 4.
  EXPECT_EQ(KernelTargetFor(KernelFamily::kBatchProbe, avx512, false), HWY_AVX3);
  EXPECT_EQ(KernelTargetFor(KernelFamily::kBatchProbe, avx512, true), HWY_AVX2);
#else
  GTEST_SKIP() << "x86 only";
#endif
}

// The vendor the rule and the compact builder's PDEP check read agrees with
// the compiler's own CPU detection.
TEST(KernelTargetRule, ThisCpuMatchesTheCompilersCpuDetection) {
#if HWY_ARCH_X86 && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  const simd::internal::CpuIdentity cpu = simd::internal::ThisCpu();
  EXPECT_EQ(cpu.vendor == simd::internal::CpuVendor::kAmd, __builtin_cpu_is("amd") != 0);
  if (__builtin_cpu_is("intel")) EXPECT_EQ(cpu.vendor, simd::internal::CpuVendor::kOther);
  EXPECT_GE(cpu.family, 6u);  // every x86-64 CPU
#else
  GTEST_SKIP() << "x86 only";
#endif
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
            simd::MayContainHashes(queries.data(), queries.size(), bytes * 8, k, aligned + offset,
                                   readable, out.get(), window);
            for (size_t i = 0; i < queries.size(); ++i) {
              ASSERT_EQ(out[i], expected[i] != 0)
                  << simd::TargetName(target) << " n=" << n << " k=" << k << " offset=" << offset
                  << " window=" << window << " i=" << i;
            }
          }
          // The single-key probe resolved once per process follows the
          // forced target, and so does the per-target pointer.
          const simd::MayContainHashFn fn = simd::MayContainHashForTarget(target);
          ASSERT_NE(fn, nullptr) << simd::TargetName(target);
          for (size_t i = 0; i < queries.size(); ++i) {
            ASSERT_EQ(simd::MayContainHash(queries[i], bytes * 8, k, aligned + offset),
                      expected[i] != 0)
                << simd::TargetName(target) << " n=" << n << " k=" << k << " i=" << i;
            ASSERT_EQ(fn(queries[i], bytes * 8, k, aligned + offset), expected[i] != 0)
                << simd::TargetName(target) << " n=" << n << " k=" << k << " i=" << i;
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
#endif  // HWY_ONCE
