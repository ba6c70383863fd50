#include "blocked/format.h"

#include "blocked/kernel.h"

namespace blockbloom {
namespace blocked {
namespace {
// Trailer bytes, counted from the end of the encoding.
constexpr size_t kProbesAt = 3, kVersionAt = 2, kMarkerAt = 1;
constexpr uint8_t kGeometryCode = kLogBlockBits - 6;  // 3: 512-bit blocks
}  // namespace

void AppendTrailer(int num_probes, std::string* dst) {
  const char trailer[kTrailerSize] = {
      static_cast<char>(num_probes),                         // reserved:3 = 0, k:5
      static_cast<char>(kFormatVersion << 4 | kGeometryCode),  // version:4, geometry:4
      static_cast<char>(kMarker),
  };
  dst->append(trailer, kTrailerSize);
}

bool ParseFilter(std::string_view encoded, FilterView* view) {
  const size_t n = encoded.size();
  if (n < kTrailerSize) return false;
  const auto at = [&](size_t from_end) {
    return static_cast<uint8_t>(encoded[n - from_end]);
  };
  if (at(kMarkerAt) != kMarker || at(kVersionAt) != (kFormatVersion << 4 | kGeometryCode)) {
    return false;
  }
  const uint8_t probes_byte = at(kProbesAt);
  const int k = probes_byte;  // reserved high bits must be 0, so k == the byte
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
