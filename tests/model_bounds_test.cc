// Every model function answers in bounded time for every argument: the
// models are reachable from untrusted input (a .bbf header or a file given to
// `blockbloom query` may claim any key count). Regression for
// fuzz/corpus/decoders_bytes/99c8a660..., a 93-byte .bbf whose header claims
// ~10^16 keys: BlockedBloomFpr once summed billions of Poisson terms for it
// (3 min 7 s of CPU under ASan).
//
// Work is bounded by counting it, never by a clock: the blocked model's
// Poisson terms (common/model_work.h), which every FPR prediction of a
// blocked filter, a .bbf file or a scalable filter's stages goes through.
// What has no counter (the compact decoder's bucket walk) is bounded by
// construction; a regression there runs for centuries and fails by the
// test's timeout, on any machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/compact_filter.h"
#include "blockbloom/counting_bloom.h"
#include "blockbloom/filter_file.h"
#include "blockbloom/hash.h"
#include "blockbloom/math.h"
#include "blockbloom/scalable_bloom.h"
#include "common/coding.h"
#include "common/model_work.h"
#include "compact/format.h"

#ifndef BLOCKBLOOM_SOURCE_DIR
#error "BLOCKBLOOM_SOURCE_DIR must name the source tree"
#endif

namespace blockbloom {
namespace {

// The blocked model's terms summed on this thread while `work` runs.
template <typename Work>
uint64_t ModelTerms(Work&& work) {
  const uint64_t before = internal::ModelTermsOnThisThread();
  work();
  return internal::ModelTermsOnThisThread() - before;
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(ModelBoundsTest, BlockedFprAnswersEveryArgumentQuickly) {
  const double bits_per_key[] = {kNaN,  -kInf, -1.0, 0.0,  1e-300, 4.9e-324, 1e-16,
                                 1e-12, 1e-9,  1e-6, 1e-3, 0.01,   0.1,      0.5,
                                 1.0,   10.0,  64.0, 1e6,  1e300,  kInf};
  const int probes[] = {std::numeric_limits<int>::min(), -1, 0, 1, 7, 16, 64, 1000,
                        std::numeric_limits<int>::max()};
  const int blocks[] = {std::numeric_limits<int>::min(), 0, 1, 64, 512, 1 << 20,
                        std::numeric_limits<int>::max()};
  for (double c : bits_per_key) {
    for (int k : probes) {
      for (int b : blocks) {
        double p = 0;
        const uint64_t terms = ModelTerms([&] { p = BlockedBloomFpr(c, k, b); });
        ASSERT_FALSE(std::isnan(p)) << c << " " << k << " " << b;
        ASSERT_GE(p, 0.0) << c << " " << k << " " << b;
        ASSERT_LE(p, 1.0) << c << " " << k << " " << b;
        // Exactly the work BlockedBloomFprTerms states, never above the cap.
        ASSERT_EQ(terms, static_cast<uint64_t>(BlockedBloomFprTerms(c, k, b)))
            << c << " " << k << " " << b;
        ASSERT_LE(terms, static_cast<uint64_t>(kMaxModelTerms)) << c << " " << k << " " << b;
      }
    }
  }
}

// OptimalBlockedProbes searched every k up to max_probes: INT_MAX meant 2^31
// model sums and then a signed overflow of its loop counter (undefined
// behaviour). No k above block_bits * ln 2 can win (math.h), so the search
// stops there and gives the same answer.
TEST(ModelBoundsTest, OptimalProbesIsBoundedForAnyMaxProbes) {
  const int kHuge = std::numeric_limits<int>::max();
  for (double c : {1.0, 10.0, 64.0, 1e6, kInf, kNaN, -1.0}) {
    for (int block_bits : {512, 64}) {
      int huge = 0, capped = 0;
      // The search stops at k = ceil(B ln 2) (355 for 512-bit blocks), so
      // INT_MAX does the work of 1000: the same terms, the same answer.
      const uint64_t huge_terms =
          ModelTerms([&] { huge = OptimalBlockedProbes(c, kHuge, block_bits); });
      const uint64_t capped_terms =
          ModelTerms([&] { capped = OptimalBlockedProbes(c, 1000, block_bits); });
      EXPECT_EQ(huge, capped) << c << " " << block_bits;
      EXPECT_EQ(huge_terms, capped_terms) << c << " " << block_bits;
      EXPECT_LE(huge_terms, uint64_t{355} * kMaxModelTerms) << c << " " << block_bits;
    }
  }
  EXPECT_EQ(OptimalBlockedProbes(10.0, kHuge, 512), OptimalBlockedProbes(10.0, 16, 512));
  // One bit per block: every k fills it; ties go to k = 1.
  EXPECT_EQ(OptimalBlockedProbes(10.0, kHuge, 1), 1);
  // A huge bits-per-key wants many probes, never more than 512 ln 2 = 354.9.
  EXPECT_GT(OptimalBlockedProbes(1e9, kHuge, 512), 64);
  EXPECT_LE(OptimalBlockedProbes(1e9, kHuge, 512), 355);
}

// The search stops once the model has risen four times in a row: the same
// answer as the search to ceil(B ln 2) over a grid of bits-per-key and block
// sizes, and a few evaluations past the answer where that search took up to
// B ln 2 (726,817 at B = 2^20: minutes).
TEST(ModelBoundsTest, OptimalProbesStopsOnceTheModelRises) {
  const auto full_search = [](double c, int max_probes, int block_bits) {
    const int last = std::min<double>(max_probes, std::ceil(block_bits * std::log(2.0)));
    int best_k = 1;
    double best = BlockedBloomFpr(c, 1, block_bits);
    for (int k = 2; k <= last; ++k) {
      const double fpr = BlockedBloomFpr(c, k, block_bits);
      if (fpr < best) {
        best = fpr;
        best_k = k;
      }
    }
    return best_k;
  };
  for (int block_bits : {8, 16, 32, 64, 128, 256, 512, 1024, 2048}) {
    for (double c : {1.0, 1.5, 2.0, 3.0, 4.0, 5.5, 7.0, 8.0, 10.0, 12.0, 16.0, 20.0, 24.0, 30.0,
                     40.0, 48.0, 64.0}) {
      for (int max_probes : {16, 30, 1 << 20}) {
        ASSERT_EQ(OptimalBlockedProbes(c, max_probes, block_bits),
                  full_search(c, max_probes, block_bits))
            << c << " bits/key, " << block_bits << "-bit blocks, max " << max_probes;
      }
    }
  }
  for (int block_bits : {1 << 17, 1 << 20, std::numeric_limits<int>::max()}) {
    int k = 0;
    const uint64_t terms = ModelTerms(
        [&] { k = OptimalBlockedProbes(10.0, std::numeric_limits<int>::max(), block_bits); });
    EXPECT_EQ(k, 7) << block_bits;  // 10 bits/key: the standard filter's k
    EXPECT_LE(terms, uint64_t{16} * kMaxModelTerms) << block_bits;
  }
}

TEST(ModelBoundsTest, DomainGuardsAnswerAsDocumented) {
  EXPECT_EQ(BlockedBloomFpr(kNaN, 7), 1.0);
  EXPECT_EQ(BlockedBloomFpr(0.0, 7), 1.0);
  EXPECT_EQ(BlockedBloomFpr(-3.0, 7), 1.0);
  EXPECT_EQ(BlockedBloomFpr(10.0, 0), 1.0);
  EXPECT_EQ(BlockedBloomFpr(10.0, 7, 0), 1.0);
  EXPECT_EQ(BlockedBloomFpr(kInf, 7), 0.0);
  // Absurdly overfull: every bit set.
  EXPECT_EQ(BlockedBloomFpr(1e-16, 7), 1.0);
}

// Past kMaxModelTerms the sum switches to fixed nodes; the two must agree
// where they meet, and the approximation must still be the mixture (not just
// "some number in [0, 1]"): with 2^20-bit blocks it converges to the
// standard filter's closed form.
TEST(ModelBoundsTest, FixedNodeSumAgreesWithExactSumAtTheSwitch) {
  // lambda = B / c with (24 sqrt(lambda) + 60) terms: the switch sits near
  // lambda = 27,000. Block of 2^20 bits, c from 30 (lambda 35k, approximate)
  // to 45 (lambda 23k, exact): the model is continuous across.
  double previous = -1;
  for (double c = 30.0; c <= 45.0; c += 0.25) {
    const double p = BlockedBloomFpr(c, 8, 1 << 20);
    const double standard = StandardBloomFpr(c, 8);
    EXPECT_NEAR(p, standard, 1e-3 * standard) << c;
    if (previous >= 0) EXPECT_LT(p, previous) << c;  // monotone in c
    previous = p;
  }
  EXPECT_NEAR(BlockedBloomFpr(10, 7, 1 << 20), StandardBloomFpr(10, 7), 2e-5);
}

TEST(ModelBoundsTest, PredictedFprOfHugeClaimsIsBounded) {
  const uint64_t counts[] = {0,         1, 1000, uint64_t{1} << 40, uint64_t{10000000000000000},
                             UINT64_MAX};
  const uint64_t sizes[] = {0, 1, 3, 64, uint64_t{1} << 30, UINT64_MAX};
  for (uint64_t n : counts) {
    for (uint64_t bytes : sizes) {
      for (int k : {0, 1, 7, 16, 17}) {
        double p = 0;
        const uint64_t terms = ModelTerms([&] { p = BlockedBloomPredictedFpr(n, bytes, k); });
        ASSERT_GE(p, 0.0);
        ASSERT_LE(p, 1.0);
        ASSERT_LE(terms, uint64_t{2} * kMaxModelTerms) << n << " " << bytes << " " << k;
      }
    }
    for (double c : {kNaN, -1.0, 0.0, 1.0, 10.0, 1e9}) {
      const double p = CompactFilterPredictedFpr(n, c);
      ASSERT_GE(p, 0.0) << n << " " << c;
      ASSERT_LE(p, 1.0) << n << " " << c;
    }
  }
  for (double c : {kNaN, -kInf, -1.0, 0.0, 1e-300, 1.0, 10.0, 1e300, kInf}) {
    const double p = CountingBloomFilter::ModelFpr(c);
    ASSERT_GE(p, 0.0);
    ASSERT_LE(p, 1.0);
  }
  for (double p : {kNaN, -1.0, 0.0, 1e-300, 1e-9, 0.01, 0.999999, 1.0, 2.0}) {
    (void)BlockedBitsPerKeyForFpr(p);  // a Status or a value; either is fine
    (void)CountingBloomFilter::CountersPerKeyForFpr(p);
  }
}

// BlockedBloomFprTerms is the work BlockedBloomFpr does (blockbloom inspect
// budgets it): the Poisson range [floor(lambda - spread), floor(lambda +
// spread)] with spread = 12 sqrt(lambda) + 30, lambda = B / c.
TEST(ModelBoundsTest, TermsCountTheModelsSum) {
  EXPECT_EQ(BlockedBloomFprTerms(10.0, 7), 168);              // lambda 51.2: [0, 167]
  EXPECT_EQ(BlockedBloomFprTerms(1.0, 7), 604);               // lambda 512: [210, 813]
  EXPECT_EQ(BlockedBloomFprTerms(1e6, 7), 31);                // lambda ~0: [0, 30]
  EXPECT_EQ(BlockedBloomFprTerms(512.0 / 28000, 16), 4076);   // [25962, 30037]
  EXPECT_EQ(BlockedBloomFprTerms(1e-3, 16), kMaxModelTerms);  // the fixed-node sum
  EXPECT_EQ(BlockedBloomFprTerms(1e-16, 16), 0);              // every bit set
  for (double c : {kNaN, -1.0, 0.0, kInf}) EXPECT_EQ(BlockedBloomFprTerms(c, 7), 0) << c;
  EXPECT_EQ(BlockedBloomFprTerms(10.0, 0), 0);
  EXPECT_EQ(BlockedBloomFprTerms(10.0, 7, 0), 0);
  // Monotone in the load, as the sum's range is.
  int previous = 0;
  for (double c = 64.0; c > 1e-4; c /= 1.5) {
    const int terms = BlockedBloomFprTerms(c, 7);
    EXPECT_GE(terms, previous) << c;
    EXPECT_LE(terms, kMaxModelTerms) << c;
    previous = terms;
  }
}

// The exact model of small filters (up to 64 blocks) runs an occupancy chain
// whose length grows with the keys claimed per block and k: every claim a
// file can make for such a filter stays within its bound, and in [0, 1].
TEST(ModelBoundsTest, PredictedFprOfSmallFiltersIsBounded) {
  uint64_t most = 0;
  for (uint64_t bytes : {1, 7, 8, 63, 64, 65, 200, 1000, 4095, 4096, 4097}) {
    for (uint64_t n : {1, 2, 10, 100, 1000, 10000, 100000, 10000000}) {
      for (int k : {1, 2, 7, 16, 30, 64, 65}) {
        double p = -1;
        const uint64_t terms = ModelTerms([&] { p = BlockedBloomPredictedFpr(n, bytes, k); });
        ASSERT_GE(p, 0.0) << n << " " << bytes << " " << k;
        ASSERT_LE(p, 1.0) << n << " " << bytes << " " << k;
        ASSERT_LE(terms, uint64_t{2} * kMaxModelTerms) << n << " " << bytes << " " << k;
        most = std::max(most, terms);
      }
    }
  }
  EXPECT_GT(most, static_cast<uint64_t>(kMaxModelTerms) / 2);  // the chain ran to its limit
  // A one-block filter claiming many keys: each of its load steps (a log
  // and an exp) is counted, so the chain stops within the bound instead of
  // walking every claimed key at a term's cost each.
  double p = -1;
  const uint64_t terms = ModelTerms([&] { p = BlockedBloomPredictedFpr(262143, 1, 1); });
  EXPECT_EQ(p, 1.0);
  EXPECT_LE(terms, static_cast<uint64_t>(kMaxModelTerms));  // the mixture alone
}

// The 93-byte input that found the bug, kept verbatim.
TEST(ModelBoundsTest, HostileFileHeaderDecodesAndPredictsQuickly) {
  const std::string path = std::string(BLOCKBLOOM_SOURCE_DIR) +
                           "/fuzz/corpus/decoders_bytes/99c8a660bcd2fe250011541814656b445868856b";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path;
  const std::string input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(input.size(), 93u);
  // The fuzzer's first byte is its mode; bit 0 (set here) repairs the
  // framing, as fuzz/decoders_bytes_fuzz.cc does: payload size at offset 48
  // and the XXH3 checksum at the end. The .bbf bytes follow.
  ASSERT_EQ(static_cast<uint8_t>(input[0]) & 1, 1);
  std::string file = input.substr(1);
  const size_t framing = kFilterFileHeaderSize + kFilterFileChecksumSize;
  ASSERT_GE(file.size(), framing);
  internal::EncodeFixed64(&file[48], file.size() - framing);
  internal::EncodeFixed64(&file[file.size() - kFilterFileChecksumSize],
                          HashBytes(file.data(), file.size() - kFilterFileChecksumSize));
  absl::StatusOr<LoadedFilter> loaded = DecodeFilterFile(file);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_GT(loaded->info().num_keys, uint64_t{1} << 50);  // the hostile claim
  double predicted = 0;
  const uint64_t terms = ModelTerms([&] { predicted = loaded->PredictedFpr(); });
  EXPECT_GE(predicted, 0.0);
  EXPECT_LE(predicted, 1.0);
  EXPECT_LE(terms, static_cast<uint64_t>(kMaxModelTerms));
  // The claim that triggered the bug, fed to the model directly: ~10^16 keys
  // in a 3-byte filter, answered by the model's guards without a sum.
  double p = 0;
  EXPECT_EQ(
      ModelTerms([&] { p = BlockedBloomPredictedFpr(uint64_t{0x2800000000000000} >> 8, 3, 7); }),
      0u);
  EXPECT_EQ(p, 1.0);
}

// A scalable filter with the most stages a reader accepts (kMaxStages: growth
// 1, tightening near 1 reach it) loads in bounded time. The reader once
// re-derived every stage's geometry from the options by the FPR model's
// search, 4-16 ms per stage: such a valid 125 KB .bbf took 20 s to load (and
// to `blockbloom query`). Each stage here holds one key in a 10 bits/key
// stage, a size a writer can give it but not the one the options' search
// picks: the geometry decides only the stage's FPR, so it loads, and every
// key stays found.
// The header of a scalable filter's encoding (docs/FORMAT.md) with
// `stages` stages to follow: p 0.5, growth 1 (every stage has capacity c_0),
// tightening 0.999, c_0 = 1. The options that reach kMaxStages stages.
std::string ScalableHeader(size_t stages) {
  std::string encoded;
  for (const double v : {0.5, 1.0, 0.999}) {  // p, growth, tightening
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(bits));
    internal::PutFixed64(&encoded, bits);
  }
  internal::PutFixed64(&encoded, 1);  // c_0
  internal::PutFixed64(&encoded, stages);
  return encoded;
}

TEST(ModelBoundsTest, ScalableFilterWithTheMostStagesDecodesQuickly) {
  const size_t stages = ScalableBloomFilter::kMaxStages;
  std::string encoded = ScalableHeader(stages);
  for (size_t i = 0; i < stages; ++i) {
    absl::StatusOr<BlockedBloomFilter> stage = BlockedBloomFilter::Create(1, 10.0);
    ASSERT_TRUE(stage.ok()) << stage.status();
    stage->AddKey("key" + std::to_string(i));
    const std::string bits = stage->Serialize();
    internal::PutFixed64(&encoded, 1);  // capacity
    internal::PutFixed64(&encoded, 1);  // keys: full
    internal::PutFixed64(&encoded, bits.size());
    encoded += bits;
  }
  encoded.push_back(1);  // version
  encoded.push_back(static_cast<char>(0xB7));
  // Loading runs no model (it once re-derived every stage's geometry by the
  // model's search): no term at all.
  absl::StatusOr<ScalableBloomFilter> loaded = absl::InternalError("not run");
  EXPECT_EQ(ModelTerms([&] { loaded = ScalableBloomFilter::Deserialize(encoded); }), 0u);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->num_stages(), stages);
  for (size_t i = 0; i < stages; ++i) {
    ASSERT_TRUE(loaded->MayContain("key" + std::to_string(i))) << i;
  }
  double predicted = 0;
  const uint64_t terms = ModelTerms([&] { predicted = loaded->PredictedFpr(); });
  EXPECT_GE(predicted, 0.0);
  EXPECT_LE(predicted, 1.0);
  EXPECT_LE(terms, stages * 2 * kMaxModelTerms);  // one model per stage at most
  EXPECT_EQ(loaded->Serialize(), encoded);
  // A stage larger than any bits per key a writer uses for its capacity is
  // damage: one key in 4 KiB.
  std::string oversized = encoded.substr(0, 40);
  internal::EncodeFixed64(&oversized[32], 1);  // one stage
  absl::StatusOr<BlockedBloomFilter> big = BlockedBloomFilter::Create(4096, 8.0);
  ASSERT_TRUE(big.ok()) << big.status();
  const std::string big_bits = big->Serialize();
  internal::PutFixed64(&oversized, 1);
  internal::PutFixed64(&oversized, 1);
  internal::PutFixed64(&oversized, big_bits.size());
  oversized += big_bits;
  oversized.push_back(1);
  oversized.push_back(static_cast<char>(0xB7));
  EXPECT_EQ(ScalableBloomFilter::Deserialize(oversized).status().code(),
            absl::StatusCode::kDataLoss);
}

// A scalable filter whose stages claim far more keys than they hold (a
// file's counts are not checked against its bits): each stage's model is the
// most expensive one (thousands of terms) and answers "every key matches",
// so the prediction is 1 after the first stage. It once evaluated all
// 4096 stages anyway: 1.06 s (g++ -O2) for a 119 KB file.
TEST(ModelBoundsTest, ScalablePredictionOfOverfullStagesIsQuick) {
  const size_t stages = ScalableBloomFilter::kMaxStages;
  std::string encoded = ScalableHeader(stages);
  absl::StatusOr<BlockedBloomFilter> stage = BlockedBloomFilter::Create(1, 10.0);
  ASSERT_TRUE(stage.ok()) << stage.status();
  stage->AddKey("key");
  const std::string bits = stage->Serialize();
  for (size_t i = 0; i < stages; ++i) {
    internal::PutFixed64(&encoded, 1);                  // capacity
    internal::PutFixed64(&encoded, uint64_t{1} << 20);  // keys claimed
    internal::PutFixed64(&encoded, bits.size());
    encoded += bits;
  }
  encoded.push_back(1);
  encoded.push_back(static_cast<char>(0xB7));
  absl::StatusOr<ScalableBloomFilter> loaded = ScalableBloomFilter::Deserialize(encoded);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  // The first stage's model answers 1 and the rest are skipped: one stage's
  // terms, not 4096 stages' (a ~1 s regression that a clock could not pin).
  double predicted = 0;
  const uint64_t terms = ModelTerms([&] { predicted = loaded->PredictedFpr(); });
  EXPECT_EQ(predicted, 1.0);
  EXPECT_GT(terms, 0u);
  EXPECT_LE(terms, static_cast<uint64_t>(kMaxModelTerms));
  EXPECT_TRUE(loaded->MayContain("key"));
}

// A version-1 compact filter of S = 0 stream bits and B empty buckets: the
// trailer alone (15 bytes for B = 2^62) is a valid encoding, since the index
// holds B - 1 offsets of bit_width(0) = 0 bits each. CompactFilter::
// Deserialize once walked all B buckets to count entries: ~10 s per 2^30
// buckets, centuries for 2^62, from `blockbloom inspect` on a table whose
// filter block holds such a filter. It is the empty set (every query "no",
// FPR 0), decided without the walk.
std::string CompactTrailerOfEmptyBuckets(uint64_t buckets) {
  const auto reverse_varint = [](uint64_t v, std::string* out) {
    std::string groups;
    do {
      groups.push_back(static_cast<char>((v & 0x7F) | (v > 0x7F ? 0x80 : 0)));
      v >>= 7;
    } while (v != 0);
    out->append(groups.rbegin(), groups.rend());
  };
  std::string f;
  reverse_varint(0, &f);        // S: no stream
  reverse_varint(1, &f);        // W: bucket width 1
  reverse_varint(buckets, &f);  // B
  const uint8_t params = 0;     // rice_bits 0
  f.push_back(static_cast<char>(params));
  f.push_back(static_cast<char>(compact::ParamsCheck(buckets, 1, 0, params)));
  f.push_back(static_cast<char>(compact::kFormatVersion));
  f.push_back(static_cast<char>(compact::kMarker));
  return f;
}

TEST(ModelBoundsTest, CompactFilterOfManyEmptyBucketsDecodesQuickly) {
  // 2^32 took ~40 s (g++ -O2) before the fix and 2^62 would take centuries:
  // a regression fails by the test's timeout.
  for (uint64_t buckets :
       {uint64_t{1}, uint64_t{2}, uint64_t{1000}, uint64_t{1} << 32, uint64_t{1} << 62}) {
    const std::string encoded = CompactTrailerOfEmptyBuckets(buckets);
    absl::StatusOr<CompactFilter> filter = CompactFilter::Deserialize(encoded);
    ASSERT_TRUE(filter.ok()) << buckets << " " << filter.status();
    EXPECT_EQ(filter->format_version(), 1);
    EXPECT_EQ(filter->num_buckets(), buckets);
    EXPECT_EQ(filter->num_entries(), 0u);
    EXPECT_EQ(filter->expected_fpr(), 0.0) << buckets;
    for (int i = 0; i < 100; ++i) {
      EXPECT_FALSE(filter->MayContain("key" + std::to_string(i))) << buckets;
    }
    EXPECT_EQ(filter->Serialize(), encoded);
  }
}

}  // namespace
}  // namespace blockbloom
