// The key hash is part of the on-disk format: pin it.
#include "blockbloom/hash.h"

#include <gtest/gtest.h>

#include <string>

namespace blockbloom {
namespace {

TEST(HashTest, EmptyInputIsXxh3SpecValue) {
  // XXH3_64bits of zero bytes, seed 0, from the xxHash specification's tests.
  EXPECT_EQ(HashBytes(nullptr, 0), 0x2D06800538D394C2ull);
  EXPECT_EQ(HashKey(""), 0x2D06800538D394C2ull);
}

TEST(HashTest, GoldenValuesNeverChange) {
  // Recorded from this implementation (XXH3-64, xxHash 0.8.1) when format
  // version 1 was frozen. A failure here means every filter on disk is lost.
  // One input per XXH3 length class: 1-3, 4-8, 9-16, 17-128, 129-240, 240+.
  EXPECT_EQ(HashKey("a"), 0xE6C632B61E964E1Full);
  EXPECT_EQ(HashKey("abcdef"), 0xDA87BD32D3C47DB6ull);
  EXPECT_EQ(HashKey("blockbloom"), 0x9433B033568D12B6ull);
  EXPECT_EQ(HashKey("0123456789abcdef"), 0x64439946D8FA212Dull);
  EXPECT_EQ(HashKey("The quick brown fox jumps over the lazy dog"), 0xCE7D19A5418FB365ull);
  EXPECT_EQ(HashKey(std::string(200, 'y')), 0x78C5AE5CF7B1237Eull);
  EXPECT_EQ(HashKey(std::string(1000, 'x')), 0xC0A4877B962CBA82ull);
}

}  // namespace
}  // namespace blockbloom
