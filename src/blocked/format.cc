#include "blocked/format.h"

#include "blocked_bloom_simd.h"
#include "blocked_kernel.h"

namespace blockbloom {
namespace blocked {

void AppendTrailer(int num_probes, std::string* dst, Geometry geometry) {
  uint8_t trailer[kTrailerSize];
  WriteTrailer(num_probes, geometry, trailer);
  dst->append(reinterpret_cast<const char*>(trailer), kTrailerSize);
}

void AddHashes(const uint64_t* hashes, size_t n, uint64_t num_bytes, int num_probes,
               Geometry geometry, uint8_t* bits) {
  if (n == 0 || num_bytes == 0) return;
  if (geometry == Geometry::kFlat) {
    if (num_bytes == 8) {
      // LevelDB's smallest filter (1-6 keys at 10 bits/key; the compact
      // policies' Bloom filter for 1 key), k up to 30: every probe's bit in
      // one register, FastRange64(x, 64) = x >> 58 (flat::BitOf). A byte
      // OR per probe waited on the previous probe's store to the same byte.
      uint64_t mask = 0;
      for (size_t i = 0; i < n; ++i) {
        for (int p = 0; p < num_probes; ++p) {
          mask |= uint64_t{1} << ((hashes[i] * kFlatProbePowers.of[p]) >> 58);
        }
      }
      for (int b = 0; b < 8; ++b) bits[b] = static_cast<uint8_t>(bits[b] | (mask >> (8 * b)));
      return;
    }
    for (size_t i = 0; i < n; ++i) flat::AddHash(hashes[i], num_bytes * 8, num_probes, bits);
    return;
  }
  simd::AddHashes(hashes, n, num_bytes * 8, num_probes, bits);
}

}  // namespace blocked
}  // namespace blockbloom
