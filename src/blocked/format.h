// The blocked Bloom filter's serialized form (format versions 1 and 2):
//
//   [ filter bits: D bytes ][ rsvd:3 k:5 ][ version:4 geometry:4 ][ marker ]
//                            <-------------- 3-byte trailer -------------->
//
//   version 1, geometry 3 (0x13): 512-bit blocks (simd/blocked_kernel.h).
//   version 2, geometry 0 (0x20): flat, one block spanning the D bytes
//                                 (blocked::flat), D > 0, k up to 30.
// The trailer is three bytes because LevelDB filters hold as few as ~10
// keys: every trailer byte costs ~0.1-0.8 bits per key there.
// Byte layout and rules are drawn in docs/FORMAT.md; this is its only reader
// and writer. D may be 0 (the empty set: nothing may match; always written
// as version 1). The marker is above 30 on purpose: stock LevelDB reads a
// last byte above 30 as a filter encoding from the future and answers "may
// match", which is what makes the migrating policy safe in both directions;
// a version-1-only reader likewise answers "may match" for version 2.
#ifndef BLOCKBLOOM_BLOCKED_FORMAT_H_
#define BLOCKBLOOM_BLOCKED_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/types/span.h"
#include "common/aligned.h"
#include "common/hash_slices.h"

#include "blocked_bloom_simd.h"  // simd::MayContainHash: the chosen target's probe
#include "blocked_kernel.h"

namespace blockbloom {
namespace blocked {

inline constexpr size_t kTrailerSize = 3;
inline constexpr uint8_t kMarker = 0xBB;       // > 30: see above
inline constexpr uint8_t kFormatVersion = 1;   // 512-bit blocks
inline constexpr uint8_t kFormatVersion2 = 2;  // adds the flat geometry

// How a filter's bits are laid out.
enum class Geometry : uint8_t {
  kBlocked512,  // version 1: 512-bit blocks
  kFlat,        // version 2: one block spanning the filter (D > 0)
};

// A parsed, valid filter. `bits` points into the caller's bytes.
struct FilterView {
  const uint8_t* bits = nullptr;
  uint64_t num_bytes = 0;  // D
  int num_probes = 0;
  Geometry geometry = Geometry::kBlocked512;
  int version = kFormatVersion;
};

// Appends the trailer for a filter with `num_probes` probes and `geometry`
// to `dst`, which must already end with the filter bits.
// REQUIRES: 1 <= num_probes <= 16 (kBlocked512) or kMaxFlatProbes (kFlat);
// kFlat only for D > 0.
void AppendTrailer(int num_probes, std::string* dst, Geometry geometry = Geometry::kBlocked512);

// Trailer bytes, counted from the end of the encoding.
inline constexpr size_t kProbesAt = 3, kVersionAt = 2, kMarkerAt = 1;
inline constexpr uint8_t kGeometryCode = kLogBlockBits - 6;                   // 3: 512-bit blocks
inline constexpr uint8_t kVersionByte = kFormatVersion << 4 | kGeometryCode;  // 0x13
inline constexpr uint8_t kFlatGeometryCode = 0;
inline constexpr uint8_t kVersion2FlatByte = kFormatVersion2 << 4 | kFlatGeometryCode;  // 0x20

// AppendTrailer's trailer written at `at` (kTrailerSize bytes).
inline void WriteTrailer(int num_probes, Geometry geometry, uint8_t* at) {
  at[0] = static_cast<uint8_t>(num_probes);                                // reserved:3 = 0, k:5
  at[1] = geometry == Geometry::kFlat ? kVersion2FlatByte : kVersionByte;  // version:4, geometry:4
  at[2] = kMarker;
}

// The last 4 bytes of an encoding of n > kTrailerSize bytes as one word:
// (the body's last byte) | k << 8 | version << 16 | marker << 24.
inline uint32_t TrailerWord(const char* encoded, size_t n) {
  uint32_t word;
  std::memcpy(&word, encoded + n - 4, sizeof(word));
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  word = __builtin_bswap32(word);
#endif
  return word;
}
// TrailerWord(...) >> 16 of a flat (version 2) filter.
inline constexpr uint32_t kFlatTrailerTag = uint32_t{kMarker} << 8 | kVersion2FlatByte;

// Returns true and fills *view if `encoded` is a well-formed version-1 or
// version-2 filter. Anything else (short, foreign marker, unknown version or
// geometry, k out of range for the geometry, reserved bits set, a flat
// filter of 0 bytes) returns false: callers answer "may match". Readers
// older than flat filters of more than kFlatMaxBytes bytes or more than 16
// probes read those as "may match" too.
// Inline: it runs on every LevelDB filter probe.
inline bool ParseFilter(std::string_view encoded, FilterView* view) {
  const size_t n = encoded.size();
  if (n < kTrailerSize) return false;
  // The trailer in one word, read with one load where a byte precedes it:
  // (that byte) | k << 8 | version << 16 | marker << 24. Fewer loads and
  // branches than three byte reads (kernel_bench, floor/policy-hash-parse-line
  // against floor/policy-hash-line).
  uint32_t word;
  if (n > kTrailerSize) {
    word = TrailerWord(encoded.data(), n);
  } else {
    const auto at = [&](size_t from_end) { return uint32_t{uint8_t(encoded[n - from_end])}; };
    word = at(kProbesAt) << 8 | at(kVersionAt) << 16 | at(kMarkerAt) << 24;
  }
  if (word >> 24 != kMarker) return false;
  // Reserved high bits must be 0, so k == the byte.
  const unsigned k = (word >> 8) & 0xFF;
  const unsigned version = (word >> 16) & 0xFF;
  const uint64_t num_bytes = n - kTrailerSize;
  static_assert(kMinProbes == 1, "k - 1 < max: 1 <= k <= max");
  if (version == kVersionByte && k - 1 < unsigned{kMaxProbes}) {
    view->geometry = Geometry::kBlocked512;
    view->version = kFormatVersion;
  } else if (version == kVersion2FlatByte && k - 1 < unsigned{kMaxFlatProbes} && num_bytes > 0) {
    view->geometry = Geometry::kFlat;
    view->version = kFormatVersion2;
  } else {
    return false;
  }
  view->bits = reinterpret_cast<const uint8_t*>(encoded.data());
  view->num_bytes = num_bytes;
  view->num_probes = static_cast<int>(k);
  return true;
}

// Whether the key with this hash may be in `encoded`. Never reads outside
// `encoded`; an unparseable filter may match everything. The reader of
// format::Recognize and the reference of the policies' fused per-target
// probe (blocked/key_probe.h, which hashes, parses and probes in one call and
// is tested against this). A blocked filter's probe is the CPU's best
// target's in-register probe, called through a pointer resolved once per
// process (simd/blocked_bloom_simd.h); same answer as the scalar
// blocked::MayContainHash. A flat filter (at most 8 lines, in cache) is
// probed by the scalar blocked::flat kernel.
inline bool EncodedMayContainHash(std::string_view encoded, uint64_t hash) {
  FilterView view;
  if (!ParseFilter(encoded, &view)) return true;
  if (view.num_bytes == 0) return false;  // the empty set
  if (view.geometry == Geometry::kFlat) {
    return flat::MayContainHash(hash, view.num_bytes * 8, view.num_probes, view.bits);
  }
  return simd::MayContainHash(hash, view.num_bytes * 8, view.num_probes, view.bits);
}

// The geometry writers use for a filter of `num_bytes` bit bytes: flat
// (version 2) for 0 < num_bytes <= kFlatMaxBytes, else 512-bit blocks
// (version 1, byte for byte what version-1 writers wrote).
inline Geometry WriterGeometry(uint64_t num_bytes) {
  return num_bytes > 0 && num_bytes <= kFlatMaxBytes ? Geometry::kFlat : Geometry::kBlocked512;
}

// Sets the bits of hashes[0, n) in `bits` (num_bytes bytes) laid out as
// `geometry`. REQUIRES: as AppendTrailer; num_bytes > 0 unless n == 0.
void AddHashes(const uint64_t* hashes, size_t n, uint64_t num_bytes, int num_probes,
               Geometry geometry, uint8_t* bits);

// Filters at least this large are built in a cache-line-aligned scratch
// buffer and then appended: in a std::string (16-byte aligned) every 512-bit
// block would straddle two cache lines, doubling the misses of a build that
// does not fit in cache (bench/kernel_bench.cc, build/bbpolicy-best/13421773).
inline constexpr uint64_t kAlignedBuildMinBytes = uint64_t{1} << 20;

// Appends a whole filter of num_bytes bit bytes laid out as `geometry` and
// its trailer to *dst, its bits set by fill(uint8_t* bits, Geometry
// geometry) on zeroed bytes: in *dst, or in a cache-line-aligned scratch
// buffer from kAlignedBuildMinBytes. REQUIRES: as AppendTrailer.
template <typename Fill>
void AppendFilterBits(uint64_t num_bytes, int num_probes, Geometry geometry, std::string* dst,
                      Fill&& fill) {
  const size_t start = dst->size();
  std::unique_ptr<uint8_t[], internal::AlignedFree> scratch;
  if (num_bytes >= kAlignedBuildMinBytes) scratch = internal::AlignedZeroedBytes(num_bytes);
  if (scratch == nullptr) {  // small, or no memory for the scratch copy
    // One resize for the bits and the trailer: LevelDB's small filters (a
    // few keys each) pay it once per filter.
    dst->resize(start + static_cast<size_t>(num_bytes) + kTrailerSize, '\0');
    uint8_t* bits = reinterpret_cast<uint8_t*>(&(*dst)[start]);
    fill(bits, geometry);
    WriteTrailer(num_probes, geometry, bits + num_bytes);
    return;
  }
  fill(scratch.get(), geometry);
  dst->append(reinterpret_cast<const char*>(scratch.get()), static_cast<size_t>(num_bytes));
  AppendTrailer(num_probes, dst, geometry);
}

// The same with the geometry of WriterGeometry(num_bytes) (the class's
// writer). REQUIRES: 1 <= num_probes <= 16.
template <typename Fill>
void AppendFilterBits(uint64_t num_bytes, int num_probes, std::string* dst, Fill&& fill) {
  AppendFilterBits(num_bytes, num_probes, WriterGeometry(num_bytes), dst, std::forward<Fill>(fill));
}

// Appends a whole filter (bits and trailer) of num_bytes bit bytes laid out
// as `geometry` to *dst, key_at(i) (i in [0, n); anything convertible to
// std::string_view) hashed in L1-sized slices (internal::ForEachHashSlice),
// then added. The blocked policies build the same bytes for their layout
// (policy/filter_sizing.h) in one per-target loop (key_probe-inl.h,
// AddKeys); this composition is the reference their tests compare against.
// REQUIRES: as AppendTrailer.
template <typename KeyAt>
void AppendFilter(size_t n, uint64_t num_bytes, int num_probes, Geometry geometry, KeyAt&& key_at,
                  std::string* dst) {
  AppendFilterBits(num_bytes, num_probes, geometry, dst, [&](uint8_t* bits, Geometry) {
    internal::ForEachHashSlice(
        n, std::forward<KeyAt>(key_at), [&](absl::Span<const uint64_t> hashes, size_t) {
          AddHashes(hashes.data(), hashes.size(), num_bytes, num_probes, geometry, bits);
        });
  });
}

// The same with the geometry of WriterGeometry(num_bytes).
template <typename KeyAt>
void AppendFilter(size_t n, uint64_t num_bytes, int num_probes, KeyAt&& key_at, std::string* dst) {
  AppendFilter(n, num_bytes, num_probes, WriterGeometry(num_bytes), std::forward<KeyAt>(key_at),
               dst);
}

}  // namespace blocked
}  // namespace blockbloom

#endif  // BLOCKBLOOM_BLOCKED_FORMAT_H_
