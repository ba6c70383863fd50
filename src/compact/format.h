// The compact filter's serialized form (format version 1): a Golomb-Rice
// coded set of sorted fingerprints (GCS) cut into buckets, with a bit-offset
// index so a probe decodes one bucket (~64 entries, ~32 on average) only.
//
//   [ Rice stream: ceil(S/8) bytes ][ bucket index: ceil((B-1)*w/8) bytes ]
//   [ S: rev-varint ][ W: rev-varint ][ B: rev-varint ]
//   [ params: reserved:2 | rice_bits:6 ][ check ][ version ][ marker ]
//
// docs/FORMAT.md draws the layout and gives the rules; this file is its only
// reader and writer. The trailer is read from the end backwards: the last
// three bytes are fixed, then three "reverse varints" (LEB128 whose bytes are
// stored last-group-first, so a reader walking backwards meets the low group
// first). `check` is ParamsCheck(B, W, S, params): a damaged trailer whose
// sizes still add up (a flipped Rice parameter, say) is caught w.p. 255/256
// and read as "may match" instead of decoding a different set. The marker
// (0xCF) is above 30 so stock LevelDB reads the filter as
// "may match", and differs from the blocked format's 0xBB so a reader can
// tell the two apart.
//
// Fingerprints. A key's hash h (blockbloom::HashKey, XXH3-64) picks
//   bucket j = floor(h * B / 2^64)            in [0, B)
//   fingerprint f = floor(h * B * W / 2^64)   in [0, B*W)
// and since floor(floor(xW)/W) = floor(x), f lies in bucket j's range
// [j*W, (j+1)*W); the bucket-local value is v = f - j*W in [0, W). Bucket j
// holds the distinct local values of its keys, ascending, each coded as the
// Rice code (parameter r = rice_bits) of its gap from the previous value (the
// first from 0): q = gap >> r zero bits, a one bit, then the low r bits of
// the gap, least significant first. Bits are numbered so that bit p is bit
// p % 8 of byte p / 8. Bucket j occupies bits [off(j), off(j+1)) with
// off(0) = 0, off(B) = S and off(1..B-1) stored in the index as w-bit
// fields, w = bit_width(S).
//
// A query is a false positive exactly when its fingerprint equals a stored
// one, so a filter with E entries over range U = B*W has FPR E/U for random
// keys.
//
// Thread-safety: pure functions over caller-owned bytes.
#ifndef BLOCKBLOOM_COMPACT_FORMAT_H_
#define BLOCKBLOOM_COMPACT_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "range_reduction.h"

namespace blockbloom {
namespace compact {

inline constexpr uint8_t kMarker = 0xCF;  // > 30 and != blocked::kMarker (0xBB)
inline constexpr uint8_t kFormatVersion = 1;
inline constexpr size_t kFixedTrailerSize = 4;  // params, check, version, marker
// Rice parameter limit (6 bits are stored). With fingerprints below 2^62 no
// bits-per-key up to 64 asks for more than ~60.
inline constexpr int kMaxRiceBits = 60;
// B*W never exceeds 2^62: fingerprints of 62 bits give FPR ~ n/2^62, far
// below anything 64 bits/key can ask for, and sums never overflow.
inline constexpr uint64_t kMaxRange = uint64_t{1} << 62;
// Target entries per bucket. A negative probe decodes about half a bucket;
// each stored offset costs w bits (~14 at 1,000 keys). 64 gives ~0.2 bits/key
// of index at 1,000 keys; 32 costs 0.05 points of FPR, 128 doubles the
// probe's work (docs/FORMAT.md has the sweep; bench/compact_bench.cc times it).
inline constexpr uint64_t kKeysPerBucket = 64;

struct Params {
  uint64_t num_buckets = 0;   // B; 0 only for the empty set
  uint64_t bucket_width = 0;  // W; 0 only for the empty set
  uint64_t stream_bits = 0;   // S
  int rice_bits = 0;          // r in [0, kMaxRiceBits]
};

// A parsed, well-formed filter header. Pointers refer to the caller's bytes.
struct FilterView {
  Params params;
  const uint8_t* data = nullptr;  // start of the encoding (the stream)
  size_t size = 0;                // bytes of the whole encoding (bounds reads)
  size_t index_byte = 0;          // byte offset of the bucket index
  int offset_bits = 0;            // w
};

// floor(h * n / 2^64) (common/fast_range.h).
using ::blockbloom::internal::FastRange64;

inline int BitWidth(uint64_t x) { return x == 0 ? 0 : 64 - __builtin_clzll(x); }

// The trailer's check byte: the top 8 bits of a multiply-xor mix of the
// parameters (every input bit reaches them).
inline uint8_t ParamsCheck(uint64_t num_buckets, uint64_t bucket_width, uint64_t stream_bits,
                           uint8_t params_byte) {
  uint64_t x = (num_buckets * 0x9E3779B97F4A7C15ull) ^ bucket_width;
  x *= 0xC2B2AE3D27D4EB4Full;
  x ^= stream_bits;
  x *= 0x165667B19E3779F9ull;
  x ^= params_byte;
  x *= 0x9E3779B97F4A7C15ull;
  return static_cast<uint8_t>(x >> 56);
}

// Bytes of a LEB128 varint of v (1..10).
int VarintLength(uint64_t v);

// Total encoded size for these parameters.
uint64_t EncodedSize(const Params& params);

// Appends the bucket index + trailer. `dst` must already end with the
// ceil(S/8)-byte stream; `offsets` holds off(1..B-1).
void AppendIndexAndTrailer(const Params& params, const uint64_t* offsets, std::string* dst);

// True and *view filled if `encoded` has a well-formed version-1 trailer
// whose sizes account for every byte. Anything else: false (callers answer
// "may match"). Does not decode the stream (see ValidateStream).
bool ParseFilter(std::string_view encoded, FilterView* view);

// Whether the key with this hash may be in the filter. Never reads outside
// [view.data, view.data + view.size); inconsistent stream contents answer
// true. REQUIRES: ParseFilter succeeded.
bool MayContainHash(const FilterView& view, uint64_t hash);

// Either version: ParseFilter / ParseV2 and the matching probe;
// unparseable bytes answer true.
bool EncodedMayContainHash(std::string_view encoded, uint64_t hash);

// Decodes every bucket and checks every rule of the format (offsets
// ascending, gaps in range, values strictly increasing, each bucket ending
// exactly at the next offset). Returns the number of entries, or -1.
int64_t ValidateStream(const FilterView& view);

inline bool HasCompactMarker(std::string_view encoded) {
  return !encoded.empty() && static_cast<uint8_t>(encoded.back()) == kMarker;
}

// ---------------------------------------------------------------------------
// Format version 2: a retrieval filter for small key sets (docs/FORMAT.md,
// "Compact filter, version 2").
//
//   [ R columns of m bits each, column-major; zero padding to D bytes ]
//   [ check bits 11..4 ][ check bits 3..0 | seed:4 ][ 0x40 | (R - 1) ]
//    <------------------ 3-byte trailer ------------------->
//
// R = fingerprint bits (1..32), D = body bytes, m = floor(8D / R) slots.
// The last byte is in 0x40..0x5F: above 30 (stock LevelDB reads "may
// match"), and neither 0xBB (blocked) nor 0xCF (compact version 1).
//
// A key with hash h and the stored seed s gets (V2ProbeFor below)
//   x = Mix64(h), y = Mix64(x + 0x9E3779B97F4A7C15)
//   w = min(m, 64); start = floor(y * (m - w + 1) / 2^64)
//   fingerprint f = low R bits of y
//   z = (x ^ (s + 1) * 0x9E3779B97F4A7C15) * 0xD6E8FEB86659FD93
//   coefficients c = (low w bits of z ^ (z >> 32)) | 1
// Only c depends on the seed, so a new seed changes the system's matrix
// (which is what makes it solvable) and nothing else.
// and the filter answers "may contain" iff for every column b,
//   parity(c AND column_b[start, start + w)) == bit b of f.
// The builder solves that linear system over GF(2) for the stored keys (one
// equation per key and column; Gaussian elimination on the band, as in
// Dillinger & Walzer 2021, "Ribbon filter: practically smaller than Bloom
// and Xor", section 4), trying seeds until it is solvable. A key not in the
// set matches with probability exactly 2^-R: f is independent of (c, start)
// and of the solution. This is a static function, not a set of
// fingerprints, so it is not bound by the log2(e) bits/key a fingerprint set
// pays: R bits/key give 2^-R where a Golomb-Rice set needs ~R + 1.47.
// check = V2Check(total size, R, seed), 12 bits: a damaged trailer or a
// truncated filter (of this or another format) whose last byte happens to
// be a version-2 marker (w.p. 32/256) is caught, i.e. read as "may match",
// unless the 12 bits also agree (w.p. 2^-12), so it is accepted w.p. at most
// 2^-12 * 32/256 = 2^-15. A 4-bit check (the first draft of this format)
// let 1 in 16 truncated blocked filters through as a version-2 filter that
// could answer a wrong "no". Damage to the body, as in any Bloom filter, can
// change answers either way.
inline constexpr uint8_t kV2MarkerBase = 0x40;
inline constexpr uint8_t kV2MarkerMask = 0xE0;  // top 3 bits 010
// Whether a last byte is a version-2 marker (0x40..0x5F).
inline constexpr bool IsV2Marker(uint8_t last) { return (last & kV2MarkerMask) == kV2MarkerBase; }
inline constexpr size_t kV2TrailerSize = 3;  // check:8, check:4 | seed:4, marker
inline constexpr int kV2MaxFingerprintBits = 32;
inline constexpr uint32_t kV2WindowBits = 64;
inline constexpr uint64_t kV2SeedStep = 0x9E3779B97F4A7C15ull;
inline constexpr uint64_t kV2CoefficientMultiplier = 0xD6E8FEB86659FD93ull;
inline constexpr int kV2Seeds = 16;  // 4 bits

// A bijective 64-bit mixer (xor-shift / multiply rounds), the compact
// format's; not murmur3's fmix64, which the standard and partitioned filters
// use (variants/probes.h, Fmix64).
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 32;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 32;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 32;
  return x;
}

inline constexpr int kV2CheckBits = 12;

// The trailer's 12-bit check of (total encoded bytes, R, seed): the top 12
// bits of a bijective mix, so every input bit reaches them.
inline uint16_t V2Check(uint64_t total_bytes, int fingerprint_bits, uint8_t seed) {
  return static_cast<uint16_t>(
      Mix64(total_bytes * 0xC2B2AE3D27D4EB4Full ^ (uint64_t(fingerprint_bits) << 8 | seed)) >>
      (64 - kV2CheckBits));
}

// Writes the kV2TrailerSize trailer bytes at `out` for a filter of
// total_bytes bytes (trailer included). REQUIRES: 1 <= R <= 32, seed < 16.
inline void WriteV2Trailer(uint64_t total_bytes, int fingerprint_bits, uint8_t seed, uint8_t* out) {
  const uint16_t check = V2Check(total_bytes, fingerprint_bits, seed);
  out[0] = static_cast<uint8_t>(check >> 4);
  out[1] = static_cast<uint8_t>((check & 0x0F) << 4 | seed);
  out[2] = static_cast<uint8_t>(kV2MarkerBase | (fingerprint_bits - 1));
}

struct V2View {
  const uint8_t* data = nullptr;  // the encoding; the body is its first body_bytes
  size_t size = 0;                // bytes of the whole encoding
  size_t body_bytes = 0;          // D
  uint64_t slots = 0;             // m
  int fingerprint_bits = 0;       // R
  uint8_t seed = 0;
};

struct V2Probe {
  uint64_t start;
  uint64_t coefficients;  // bit j: slot start + j; bit 0 always set
  uint32_t fingerprint;
};

// The seed-independent part of a key's probe: x (coefficient material),
// start and fingerprint. The builder computes it once per key for all seeds.
struct V2KeyBase {
  uint64_t x;
  uint64_t start;
  uint32_t fingerprint;
};

// REQUIRES: slots >= 1, 1 <= fingerprint_bits <= 32.
inline V2KeyBase V2KeyBaseFor(uint64_t hash, uint64_t slots, int fingerprint_bits) {
  const uint64_t x = Mix64(hash);
  const uint64_t y = Mix64(x + kV2SeedStep);
  const uint64_t w = slots < kV2WindowBits ? slots : kV2WindowBits;
  V2KeyBase k;
  k.x = x;
  k.start = FastRange64(y, slots - w + 1);
  k.fingerprint =
      static_cast<uint32_t>(y) & static_cast<uint32_t>((uint64_t{1} << fingerprint_bits) - 1);
  return k;
}

// The coefficients of a key under `seed`: w = min(slots, 64) bits, bit 0 set.
inline uint64_t V2Coefficients(uint64_t x, uint8_t seed, uint64_t slots) {
  uint64_t c = (x ^ (kV2SeedStep * (uint64_t{seed} + 1))) * kV2CoefficientMultiplier;
  c ^= c >> 32;
  const uint64_t w = slots < kV2WindowBits ? slots : kV2WindowBits;
  const uint64_t mask = w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  return (c & mask) | 1;
}

// REQUIRES: slots >= 1, 1 <= fingerprint_bits <= 32.
inline V2Probe V2ProbeFor(uint64_t hash, uint8_t seed, uint64_t slots, int fingerprint_bits) {
  const V2KeyBase k = V2KeyBaseFor(hash, slots, fingerprint_bits);
  return V2Probe{k.start, V2Coefficients(k.x, seed, slots), k.fingerprint};
}

// Slots for a body of `body_bytes` at R bits each.
inline uint64_t V2Slots(uint64_t body_bytes, int fingerprint_bits) {
  return 8 * body_bytes / static_cast<uint64_t>(fingerprint_bits);
}

// True and *view filled for a well-formed version-2 trailer (at least one
// slot). Does not check the padding (ValidateV2 does).
bool ParseV2(std::string_view encoded, V2View* view);

// REQUIRES: ParseV2 succeeded. Never reads outside the encoding.
bool V2MayContainHash(const V2View& view, uint64_t hash);

// Padding bits after the R columns must be zero.
bool ValidateV2(const V2View& view);

// The trailer version `encoded` states: the version byte of a version-1
// trailer (marker 0xCF), 2 for a last byte in 0x40..0x5F, -1 if the bytes
// are not a compact filter at all. Says nothing about whether they parse.
int TrailerVersion(std::string_view encoded);

}  // namespace compact
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMPACT_FORMAT_H_
