// Probe sequences shared by the standard and partitioned filters. The
// formulas are specified in blockbloom/standard_bloom.h and are part of the
// serialized formats (docs/FORMAT.md).
#ifndef BLOCKBLOOM_VARIANTS_PROBES_H_
#define BLOCKBLOOM_VARIANTS_PROBES_H_

#include <cstdint>
#include <string>

#include "blockbloom/standard_bloom.h"
#include "blocked/kernel.h"

namespace blockbloom {
namespace variants {

// murmur3's fmix64 (Appleby): a bijection of 64-bit values with full
// avalanche, so h2 is independent-looking of h1 even though both come from
// one XXH3 value.
inline uint64_t Mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

// Generates g_0, g_1, ... for one key (64-bit, before range reduction onto
// [0, range)). The enhanced scheme's extra term must move the *reduced*
// position: multiply-shift keeps only the high bits of g, so adding i to g
// (as Dillinger and Manolios do modulo m) would change almost no position.
// The term is therefore added in units of 2^64 / range, one position each.
class ProbeSequence {
 public:
  ProbeSequence(uint64_t hash, HashScheme scheme, uint64_t range)
      : x_(hash),
        y_(Mix64(hash) | 1),
        unit_(scheme == HashScheme::kEnhancedDoubleHashing ? UnitFor(range) : 0) {}

  uint64_t Next() {
    const uint64_t g = x_;
    x_ += y_;
    y_ += i_ * unit_;
    ++i_;
    return g;
  }

  // ceil(2^64 / range) for range >= 2 (1 position after reduction); 0 for
  // range 1, where every probe is position 0 anyway.
  static uint64_t UnitFor(uint64_t range) {
    return range <= 1 ? 0 : UINT64_MAX / range + 1;
  }

 private:
  uint64_t x_, y_;
  uint64_t unit_;
  uint64_t i_ = 0;
};

inline bool IsKnownScheme(uint8_t scheme) {
  return scheme == static_cast<uint8_t>(HashScheme::kDoubleHashing) ||
         scheme == static_cast<uint8_t>(HashScheme::kEnhancedDoubleHashing);
}

inline void SetBit(uint8_t* data, uint64_t bit) {
  data[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
}
inline bool GetBit(const uint8_t* data, uint64_t bit) {
  return (data[bit >> 3] >> (bit & 7)) & 1;
}

// Saturating counter increment (counters never wrap).
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

// Little-endian fixed-width encoding for the variants' trailers.
inline void PutFixed64(std::string* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst->push_back(static_cast<char>(v >> (8 * i)));
}
inline uint64_t GetFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace variants
}  // namespace blockbloom

#endif  // BLOCKBLOOM_VARIANTS_PROBES_H_
