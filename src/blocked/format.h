// The blocked Bloom filter's serialized form (format version 1):
//
//   [ filter bits: D bytes ][ rsvd:3 k:5 ][ version:4 geometry:4 ][ marker ]
//                            <-------------- 3-byte trailer -------------->
//
// geometry = log2(block bits) - 6 (3: 512-bit blocks). The trailer is three
// bytes because LevelDB filters hold as few as ~10 keys: every trailer byte
// costs ~0.1-0.8 bits per key there.
// Byte layout and rules are drawn in docs/FORMAT.md; this is its only reader
// and writer. D may be 0 (the empty set: nothing may match). The marker is
// above 30 on purpose: stock LevelDB reads a last byte above 30 as a filter
// encoding from the future and answers "may match", which is what makes the
// migrating policy safe in both directions.
#ifndef BLOCKBLOOM_BLOCKED_FORMAT_H_
#define BLOCKBLOOM_BLOCKED_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "blocked_bloom_simd.h"  // simd::MayContainHash: the chosen target's probe
#include "blocked_kernel.h"

namespace blockbloom {
namespace blocked {

inline constexpr size_t kTrailerSize = 3;
inline constexpr uint8_t kMarker = 0xBB;  // > 30: see above
inline constexpr uint8_t kFormatVersion = 1;

// A parsed, valid filter. `bits` points into the caller's bytes.
struct FilterView {
  const uint8_t* bits = nullptr;
  uint64_t num_bytes = 0;  // D
  int num_probes = 0;
};

// Appends the trailer for a filter with `num_probes` probes to `dst`, which
// must already end with the filter bits. REQUIRES: 1 <= num_probes <= 16.
void AppendTrailer(int num_probes, std::string* dst);

// Trailer bytes, counted from the end of the encoding.
inline constexpr size_t kProbesAt = 3, kVersionAt = 2, kMarkerAt = 1;
inline constexpr uint8_t kGeometryCode = kLogBlockBits - 6;  // 3: 512-bit blocks
inline constexpr uint8_t kVersionByte = kFormatVersion << 4 | kGeometryCode;

// Returns true and fills *view if `encoded` is a well-formed version-1
// filter. Anything else (short, foreign marker, unknown version or geometry,
// k out of range, reserved bits set) returns false: callers answer "may
// match". Inline: it runs on every LevelDB filter probe.
inline bool ParseFilter(std::string_view encoded, FilterView* view) {
  const size_t n = encoded.size();
  if (n < kTrailerSize) return false;
  const auto at = [&](size_t from_end) { return static_cast<uint8_t>(encoded[n - from_end]); };
  if (at(kMarkerAt) != kMarker || at(kVersionAt) != kVersionByte) return false;
  const int k = at(kProbesAt);  // reserved high bits must be 0, so k == the byte
  if (k < kMinProbes || k > kMaxProbes) return false;
  view->bits = reinterpret_cast<const uint8_t*>(encoded.data());
  view->num_bytes = n - kTrailerSize;
  view->num_probes = k;
  return true;
}

// Whether the key with this hash may be in `encoded`. Never reads outside
// `encoded`; an unparseable filter may match everything. Inline: it is the
// whole of the LevelDB policy's KeyMayMatch. The probe itself is the CPU's
// best target's in-register probe, called through a pointer resolved once
// per process (simd/blocked_bloom_simd.h); same answer as the scalar
// blocked::MayContainHash.
inline bool EncodedMayContainHash(std::string_view encoded, uint64_t hash) {
  FilterView view;
  if (!ParseFilter(encoded, &view)) return true;
  if (view.num_bytes == 0) return false;  // the empty set
  return simd::MayContainHash(hash, view.num_bytes * 8, view.num_probes, view.bits);
}

// Is `encoded` ours (last byte is kMarker)? The migrating policy uses this to
// tell a blocked filter from one in LevelDB's built-in format.
inline bool HasBlockedMarker(std::string_view encoded) {
  return !encoded.empty() && static_cast<uint8_t>(encoded.back()) == kMarker;
}

}  // namespace blocked
}  // namespace blockbloom

#endif  // BLOCKBLOOM_BLOCKED_FORMAT_H_
