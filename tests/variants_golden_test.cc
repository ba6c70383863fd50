// Golden values: the serialized bytes of each variant and of a .bbf file
// for a fixed key set, and the first false positives. A failure here means
// the on-disk format changed: bump the version and update docs/FORMAT.md
// deliberately, never just the numbers below.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "blockbloom/filter_file.h"
#include "blockbloom/hash.h"
#include "test_keys.h"

namespace blockbloom {
namespace {

using testing_keys::Key;

template <class F>
std::string Golden(F filter) {
  for (uint64_t i = 0; i < 1000; ++i) filter.AddKey(Key(2 * i));
  std::vector<uint64_t> fps;
  for (uint64_t i = 0; fps.size() < 3; ++i) {
    if (filter.MayContain(Key(2 * i + 1))) fps.push_back(2 * i + 1);
  }
  const std::string bytes = filter.Serialize();
  const std::string file = EncodeFilterFile(filter, 1000, 0.01);
  char out[160];
  std::snprintf(out, sizeof(out), "%zu %016llx %016llx fp %llu %llu %llu", bytes.size(),
                static_cast<unsigned long long>(HashBytes(bytes.data(), bytes.size())),
                static_cast<unsigned long long>(HashBytes(file.data(), file.size())),
                static_cast<unsigned long long>(fps[0]), static_cast<unsigned long long>(fps[1]),
                static_cast<unsigned long long>(fps[2]));
  return out;
}

TEST(VariantsGoldenTest, StandardDoubleHashingV1) {
  EXPECT_EQ(Golden(*StandardBloomFilter::CreateWithGeometry(9600, 7, HashScheme::kDoubleHashing)),

            "1212 b4e717c8b261b124 0afb339498127624 fp 155 273 781");
}
TEST(VariantsGoldenTest, StandardEnhancedDoubleHashingV1) {
  EXPECT_EQ(Golden(*StandardBloomFilter::CreateWithGeometry(9600, 7)),
            "1212 c5d1597f0ad9e1bb 2683e8ba0ad14e29 fp 151 199 401");
}
TEST(VariantsGoldenTest, PartitionedV1) {
  EXPECT_EQ(Golden(*PartitionedBloomFilter::CreateWithGeometry(1371, 7)),
            "1212 b0c5a92f8bf5ffb3 d132cc4a2264f647 fp 589 657 667");
}
// The scalable filter's bytes pin its builder's stage sizing too
// (ScalableBloomFilter::kStageModelMargin, whole blocks): a change there moves this value
// without changing the layout, and files built before still load (each
// stage states its length; Deserialize checks it only against the bits/key
// clamp: ScalableBloomTest.DeserializeChecksStagesAgainstOptions).
TEST(VariantsGoldenTest, ScalableV1) {
  ScalableBloomOptions o;
  o.initial_capacity = 100;
  EXPECT_EQ(Golden(*ScalableBloomFilter::Create(o)),
            "3094 4ef3143c59161248 b8aad98deacf7272 fp 573 783 1101");
}
TEST(VariantsGoldenTest, BlockedInAFilterFile) {
  EXPECT_EQ(Golden(*BlockedBloomFilter::CreateWithGeometry(1250, 7)),
            "1253 836ae80c918a6065 f3b8629364433d26 fp 125 217 571");
}

}  // namespace
}  // namespace blockbloom
