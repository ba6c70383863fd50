#include "blocked/format.h"

#include "blocked/kernel.h"

namespace blockbloom {
namespace blocked {
namespace {
// Trailer byte offsets from the end of the encoding.
constexpr size_t kReservedAt = 5, kGeometryAt = 4, kProbesAt = 3, kVersionAt = 2,
                 kMarkerAt = 1;
}  // namespace

void AppendTrailer(int num_probes, std::string* dst) {
  const char trailer[kTrailerSize] = {
      0,                                  // reserved, must be 0
      static_cast<char>(kLogBlockBits),   // block geometry: 2^9 bits
      static_cast<char>(num_probes),      // k
      static_cast<char>(kFormatVersion),  // version
      static_cast<char>(kMarker),         // marker
  };
  dst->append(trailer, kTrailerSize);
}

bool ParseFilter(std::string_view encoded, FilterView* view) {
  const size_t n = encoded.size();
  if (n < kTrailerSize) return false;
  const auto at = [&](size_t from_end) {
    return static_cast<uint8_t>(encoded[n - from_end]);
  };
  if (at(kMarkerAt) != kMarker || at(kVersionAt) != kFormatVersion ||
      at(kGeometryAt) != kLogBlockBits || at(kReservedAt) != 0) {
    return false;
  }
  const int k = at(kProbesAt);
  if (k < kMinProbes || k > kMaxProbes) return false;
  view->bits = reinterpret_cast<const uint8_t*>(encoded.data());
  view->num_bytes = n - kTrailerSize;
  view->num_probes = k;
  return true;
}

bool EncodedMayContainHash(std::string_view encoded, uint64_t hash) {
  FilterView view;
  if (!ParseFilter(encoded, &view)) return true;
  if (view.num_bytes == 0) return false;  // the empty set
  return MayContainHash(hash, view.num_bytes * 8, view.num_probes, view.bits);
}

}  // namespace blocked
}  // namespace blockbloom
