#include "format/leveldb_bloom.h"

#include <cstddef>

#include "common/coding.h"

namespace blockbloom {
namespace format {

uint32_t LevelDbHash(std::string_view data, uint32_t seed) {
  constexpr uint32_t kMul = 0xc6a4a793;
  const size_t n = data.size();
  // The length enters modulo 2^32, as LevelDB's uint32_t arithmetic has it.
  uint32_t h = seed ^ (static_cast<uint32_t>(n) * kMul);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    h += internal::DecodeFixed32(data.data() + i);
    h *= kMul;
    h ^= h >> 16;
  }
  const size_t tail = n - i;
  if (tail > 0) {
    uint32_t t = 0;
    for (size_t j = tail; j-- > 0;) t = (t << 8) | static_cast<uint8_t>(data[i + j]);
    h += t;
    h *= kMul;
    h ^= h >> 24;
  }
  return h;
}

bool LevelDbBloomMayMatch(std::string_view key, std::string_view filter) {
  const size_t size = filter.size();
  if (size < 2) return false;
  const unsigned k = static_cast<uint8_t>(filter[size - 1]);
  if (k > 30) return true;
  // m fits in size_t for any filter that fits in memory; LevelDB reduces the
  // 32-bit position modulo m in size_t as well.
  const size_t bits = (size - 1) * 8;
  uint32_t h = LevelDbHash(key, kLevelDbBloomSeed);
  const uint32_t delta = (h >> 17) | (h << 15);
  for (unsigned j = 0; j < k; ++j) {
    const size_t pos = static_cast<size_t>(h) % bits;
    if (((static_cast<uint8_t>(filter[pos / 8]) >> (pos % 8)) & 1) == 0) return false;
    h += delta;
  }
  return true;
}

}  // namespace format
}  // namespace blockbloom
