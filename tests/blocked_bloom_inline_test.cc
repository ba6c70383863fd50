// blockbloom/blocked_bloom_inline.h against the dispatched probes. CMake
// builds this file twice: generic (the portable static target: the inline
// functions fall back to the dispatched call) and with -march=native (the
// probe compiled for this CPU's static target, AVX2 here, and inlined). Both
// must answer exactly as BlockedBloomFilter::MayContainHash / MayContain for
// every geometry: full blocks, a short last block, flat (format version 2),
// empty, k beyond one vector of probes.
#include "blockbloom/blocked_bloom_inline.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/hash.h"
#include "blocked/format.h"
#include "hwy/targets.h"

namespace blockbloom {
namespace {

// Every answer of the inline probe equals the dispatched one, for the added
// hashes (all "may contain") and for `probes` random others.
void ExpectSameAnswers(const BlockedBloomFilter& f, const std::vector<uint64_t>& added,
                       int probes) {
  for (uint64_t h : added) {
    ASSERT_TRUE(InlineMayContainHash(f, h)) << "false negative, hash " << h;
  }
  std::mt19937_64 rng(f.num_bytes() * 31 + f.num_probes());
  int positives = 0;
  for (int i = 0; i < probes; ++i) {
    const uint64_t h = rng();
    const bool inline_answer = InlineMayContainHash(f, h);
    ASSERT_EQ(inline_answer, f.MayContainHash(h)) << "hash " << h;
    positives += inline_answer;
  }
  // A filter holding keys is not "always yes" (else the test proves nothing).
  if (!added.empty() && f.num_bytes() >= 64) EXPECT_LT(positives, probes / 2);
}

std::vector<uint64_t> Hashes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> out(n);
  for (uint64_t& h : out) h = rng();
  return out;
}

// The x86 target this translation unit's compiler flags enable, read from
// the compiler's own macros (what each Highway x86 target requires), so that
// the header's choice is checked against the flags, not against itself. 0
// where this test does not know the architecture.
int64_t X86TargetOfTheCompilerFlags() {
#if defined(__x86_64__) || defined(__i386__)
#if defined(__AVX2__) && defined(__BMI2__) && defined(__FMA__) && defined(__F16C__) && \
    defined(__SSE4_2__) && defined(__PCLMUL__) && defined(__AES__)
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#if defined(__AVXVNNI__) && defined(__VAES__) && defined(__VPCLMULQDQ__) &&                \
    defined(__AVX512VBMI__) && defined(__AVX512VBMI2__) && defined(__AVX512VPOPCNTDQ__) && \
    defined(__AVX512BITALG__)
  return HWY_AVX3_DL;
#else
  return HWY_AVX3;
#endif
#else
  return HWY_AVX2;
#endif
#elif defined(__SSE4_2__) && defined(__SSE4_1__) && defined(__PCLMUL__) && defined(__AES__)
  return HWY_SSE4;
#elif defined(__SSSE3__)
  return HWY_SSSE3;
#else
  return HWY_SCALAR;  // plain x86-64: the portable target
#endif
#else
  return 0;
#endif
}

// The inline probe is compiled for the target the compiler flags give (the
// generic build: the portable one, falling back to the dispatched call; the
// -march=native build: this CPU's best, inlined), and the CPU runs it.
TEST(BlockedBloomInlineTest, TargetIsTheCompilerFlags) {
  RecordProperty("inline_target", hwy::TargetName(kInlineProbeTarget));
  RecordProperty("inlined", kInlineProbeIsInlined ? "yes" : "no (dispatched fallback)");
  const int64_t expected = X86TargetOfTheCompilerFlags();
  if (expected == 0) GTEST_SKIP() << "not x86: the flags' target is not derived here";
  const bool portable = expected == HWY_SCALAR;
  if (portable) {
    EXPECT_TRUE(kInlineProbeTarget == HWY_SCALAR || kInlineProbeTarget == HWY_EMU128)
        << hwy::TargetName(kInlineProbeTarget);
  } else {
    EXPECT_EQ(kInlineProbeTarget, expected)
        << hwy::TargetName(kInlineProbeTarget) << " vs " << hwy::TargetName(expected);
  }
  EXPECT_EQ(kInlineProbeIsInlined, !portable);
  EXPECT_NE(hwy::SupportedTargets() & kInlineProbeTarget, 0)
      << "compiled for a target this CPU lacks";
}

TEST(BlockedBloomInlineTest, SameAnswersForEveryBlockedGeometry) {
  // (keys, bits per key): k from 3 to 14 (beyond 8 lanes: AVX2 runs a second
  // vector of probes), sizes with and without a short last block.
  const struct {
    size_t keys;
    double bits_per_key;
  } cases[] = {{1, 10},    {7, 10},     {100, 10},     {1000, 4.5}, {1000, 10},
               {3333, 20}, {10000, 10}, {100000, 7.3}, {100000, 10}};
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << c.keys << " keys, " << c.bits_per_key << " bits/key");
    auto f = BlockedBloomFilter::Create(c.keys, c.bits_per_key);
    ASSERT_TRUE(f.ok());
    const std::vector<uint64_t> added = Hashes(c.keys, c.keys);
    f->AddHashes(added);
    ASSERT_FALSE(f->flat());
    ASSERT_NO_FATAL_FAILURE(ExpectSameAnswers(*f, added, 20000));
  }
}

TEST(BlockedBloomInlineTest, SameAnswersForFlatAndEmptyFilters) {
  // Flat (format version 2): what the LevelDB policies write for small filters.
  for (size_t keys : {1, 10, 60, 300}) {
    SCOPED_TRACE(testing::Message() << keys << " keys, flat");
    std::vector<std::string> storage;
    for (size_t i = 0; i < keys; ++i) storage.push_back("key" + std::to_string(i));
    std::string encoded;
    blocked::AppendFilter(
        keys, BlockedBloomBytes(keys, 10.0), BlockedBloomProbes(10.0),
        [&](size_t i) { return std::string_view(storage[i]); }, &encoded);
    auto f = BlockedBloomFilter::Deserialize(encoded);
    ASSERT_TRUE(f.ok()) << f.status();
    ASSERT_TRUE(f->flat());
    std::vector<uint64_t> added;
    for (const std::string& k : storage) {
      added.push_back(HashKey(k));
      ASSERT_TRUE(InlineMayContain(*f, k));
    }
    ASSERT_NO_FATAL_FAILURE(ExpectSameAnswers(*f, added, 5000));
  }
  auto empty = BlockedBloomFilter::Create(0, 10.0);
  ASSERT_TRUE(empty.ok());
  ASSERT_EQ(empty->num_bytes(), 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectSameAnswers(*empty, {}, 1000));
  EXPECT_FALSE(InlineMayContain(*empty, "anything"));
}

TEST(BlockedBloomInlineTest, KeysAgreeWithMayContain) {
  auto f = BlockedBloomFilter::Create(5000, 10.0);
  ASSERT_TRUE(f.ok());
  for (int i = 0; i < 5000; i += 2) f->AddKey("k" + std::to_string(i));
  for (int i = 0; i < 5000; ++i) {
    const std::string k = "k" + std::to_string(i);
    ASSERT_EQ(InlineMayContain(*f, k), f->MayContain(k)) << k;
    if (i % 2 == 0) ASSERT_TRUE(InlineMayContain(*f, k)) << k;
  }
}

}  // namespace
}  // namespace blockbloom
