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
    for (size_t i = 0; i < n; ++i) flat::AddHash(hashes[i], num_bytes * 8, num_probes, bits);
    return;
  }
  simd::AddHashes(hashes, n, num_bytes * 8, num_probes, bits);
}

}  // namespace blocked
}  // namespace blockbloom
