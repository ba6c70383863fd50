// The version-2 reader's hot path (docs/FORMAT.md, "Compact filter, version
// 2"), inline: compact/format.cc compiles it for the baseline CPU (ParseV2,
// V2MayContainHash) and compact/key_probe.cc for each Highway target, where
// BMI2 and POPCNT shorten each column's read and parity. One definition, so
// every target gives the same answers.
//
// Thread-safety: pure functions over caller-owned bytes.
#ifndef BLOCKBLOOM_COMPACT_V2_PROBE_H_
#define BLOCKBLOOM_COMPACT_V2_PROBE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "common/coding.h"
#include "compact/format.h"

namespace blockbloom {
namespace compact {
namespace v2 {

#define BLOCKBLOOM_V2_INLINE inline __attribute__((always_inline))

// The 8 bytes at p, little-endian (one load on a little-endian host).
BLOCKBLOOM_V2_INLINE uint64_t LoadLittle64(const uint8_t* p) {
  return internal::DecodeFixed64(reinterpret_cast<const char*>(p));
}

// ParseV2: true and *view filled for a well-formed version-2 trailer.
BLOCKBLOOM_V2_INLINE bool ParseTrailer(std::string_view encoded, V2View* view) {
  const size_t n = encoded.size();
  if (n < kV2TrailerSize + 1) return false;  // at least one body byte
  const auto* data = reinterpret_cast<const uint8_t*>(encoded.data());
  const uint8_t last = data[n - 1];
  if (!IsV2Marker(last)) return false;
  const int r = (last & ~kV2MarkerMask) + 1;  // 1..32
  const size_t body = n - kV2TrailerSize;
  const uint64_t slots = V2Slots(body, r);
  if (slots == 0) return false;
  view->data = data;
  view->size = n;
  view->body_bytes = body;
  view->slots = slots;
  view->fingerprint_bits = r;
  const uint8_t seed = data[n - 2] & 0x0F;
  const uint16_t check = static_cast<uint16_t>(data[n - 3] << 4 | data[n - 2] >> 4);
  if (check != V2Check(n, r, seed)) return false;
  view->seed = seed;
  return true;
}

// The 64 bits starting at bit `pos` of data[0, size) (bytes past `size`
// read as zero).
BLOCKBLOOM_V2_INLINE uint64_t Load64At(const uint8_t* data, size_t size, uint64_t pos) {
  const uint64_t byte = pos >> 3;
  const int shift = static_cast<int>(pos & 7);
  uint64_t lo = 0, hi = 0;
  if (byte + 9 <= size) {
    lo = LoadLittle64(data + byte);
    hi = data[byte + 8];
  } else if (size >= 8 && byte < size) {
    // Near the end: the last 8 bytes, shifted down (no byte-by-byte loop:
    // most probes of a small filter land here).
    lo = byte + 8 <= size ? LoadLittle64(data + byte)
                          : LoadLittle64(data + size - 8) >> (8 * (byte + 8 - size));
    hi = byte + 8 < size ? data[byte + 8] : 0;
  } else {
    for (uint64_t i = 0; i < 8 && byte + i < size; ++i) {
      lo |= static_cast<uint64_t>(data[byte + i]) << (8 * i);
    }
    if (byte + 8 < size) hi = data[byte + 8];
  }
  return shift == 0 ? lo : (lo >> shift) | (hi << (64 - shift));
}

// How a column's 64 bits are read (bits [pos, pos + 64) of the encoding,
// of which the probe's coefficients keep the w = min(m, 64) from pos).
enum class ColumnRead {
  // m >= kUncheckedMinSlots: the 9 bytes from pos / 8 lie in the encoding,
  // read with no bounds test. Column b starts at pos = b m + start with
  // start <= m - w, so pos <= R m - w; the last byte read, pos / 8 + 8, is
  // at most (R m - w) / 8 + 8 <= R m / 8 + 2 <= body + 2 (m = floor(8 body /
  // R)) when w >= 48, and the trailer's 3 bytes follow the body. That holds
  // for any view ParseTrailer accepts (its geometry comes from the size and
  // R alone).
  kUnchecked,
  // m < kUncheckedMinSlots in an encoding of at least 8 bytes: one 8-byte
  // load at min(pos / 8, size - 8), shifted down to pos. Every key starts at
  // slot 0 (w = m), so the column's m bits end inside the body, and with
  // m <= 57 they fit in the 64 bits from pos / 8 at any shift, or, past
  // size - 8, in the encoding's last 8 bytes.
  kClamped,
  // Anything else (under 8 bytes): Load64At, which tests every byte.
  kChecked,
};
inline constexpr uint64_t kUncheckedMinSlots = 48;
static_assert(kUncheckedMinSlots <= 57, "kClamped reads m < kUncheckedMinSlots bits in one load");

// Column b's parity for the probe p: bits [b m + start, b m + start + w) of
// the body (start + w <= m, so they all lie in the body), at bit `pos`.
template <ColumnRead kRead>
BLOCKBLOOM_V2_INLINE uint32_t ColumnParity(const V2View& view, const V2Probe& p, uint64_t pos) {
  uint64_t bits;
  if (kRead == ColumnRead::kUnchecked) {
    const uint64_t byte = pos >> 3;
    const int shift = static_cast<int>(pos & 7);
    const uint64_t lo = LoadLittle64(view.data + byte);
    const uint64_t hi = view.data[byte + 8];
    bits = (lo >> shift) | ((hi << 1) << (63 - shift));  // no branch for shift 0
  } else if (kRead == ColumnRead::kClamped) {
    const uint64_t last = view.size - 8;
    const uint64_t byte = pos >> 3 < last ? pos >> 3 : last;
    bits = LoadLittle64(view.data + byte) >> (pos - 8 * byte);
  } else {
    bits = Load64At(view.data, view.size, pos);
  }
  return static_cast<uint32_t>(__builtin_parityll(bits & p.coefficients));
}

// A key not in the set disagrees with each column w.p. 1/2, so the first
// kFirstColumns columns answer "no" for 15 of 16 absent keys; a key that
// agrees with all of them reads the rest with no further exit. (A test per
// column exits at a random column: a mispredicted branch per absent key.)
template <ColumnRead kRead>
BLOCKBLOOM_V2_INLINE bool ColumnsAgree(const V2View& view, const V2Probe& p) {
  constexpr int kFirstColumns = 4;
  const int r = view.fingerprint_bits;
  const int first = r < kFirstColumns ? r : kFirstColumns;
  uint32_t got = 0;
  uint64_t pos = p.start;
  for (int b = 0; b < first; ++b, pos += view.slots) {
    got |= ColumnParity<kRead>(view, p, pos) << b;
  }
  if (got != (p.fingerprint & ((uint32_t{1} << first) - 1))) return false;
  for (int b = first; b < r; ++b, pos += view.slots) {
    got |= ColumnParity<kRead>(view, p, pos) << b;
  }
  return got == p.fingerprint;
}

// V2MayContainHash. REQUIRES: ParseTrailer accepted `view`.
BLOCKBLOOM_V2_INLINE bool MayContainHash(const V2View& view, uint64_t hash) {
  const V2Probe p = V2ProbeFor(hash, view.seed, view.slots, view.fingerprint_bits);
  if (view.slots >= kUncheckedMinSlots) return ColumnsAgree<ColumnRead::kUnchecked>(view, p);
  if (view.size >= 8) return ColumnsAgree<ColumnRead::kClamped>(view, p);
  return ColumnsAgree<ColumnRead::kChecked>(view, p);
}

#undef BLOCKBLOOM_V2_INLINE

}  // namespace v2
}  // namespace compact
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMPACT_V2_PROBE_H_
