// What the standard and partitioned filters share: the probe sequence and
// walk, the sizing from bits per key or FPR, and the 12-byte trailer with its
// encoder and decoder. The probe formulas are specified in
// blockbloom/standard_bloom.h; they and the trailer are part of the serialized
// formats (docs/FORMAT.md).
//
// Thread-safety: pure functions and value types, safe from any thread.
#ifndef BLOCKBLOOM_VARIANTS_PROBES_H_
#define BLOCKBLOOM_VARIANTS_PROBES_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "blockbloom/blocked_bloom.h"  // ClampBitsPerKey
#include "blockbloom/math.h"
#include "blockbloom/standard_bloom.h"
#include "common/coding.h"
#include "range_reduction.h"

namespace blockbloom {
namespace variants {

// 2^48 bits = 32 TiB: beyond any machine this runs on; refusing early gives a
// clear error instead of an allocation failure deep inside.
inline constexpr uint64_t kMaxBits = uint64_t{1} << 48;
inline constexpr uint64_t kMinBits = 64;

// murmur3's fmix64 (Appleby; not the compact format's Mix64): a bijection of 64-bit values with
// full avalanche, so h2 is independent-looking of h1 even though both come from one XXH3 value.
inline uint64_t Fmix64(uint64_t h) {
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
        y_(Fmix64(hash) | 1),
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
  static uint64_t UnitFor(uint64_t range) { return range <= 1 ? 0 : UINT64_MAX / range + 1; }

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
inline bool GetBit(const uint8_t* data, uint64_t bit) { return (data[bit >> 3] >> (bit & 7)) & 1; }

// Saturating counter increment (counters never wrap).
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

// The k probe positions of one key in a bit array: probe i is bit
// i * stride + FastRange64(g_i, range), g_i from ProbeSequence(hash, scheme,
// range). The standard filter has stride 0 and range m (k probes anywhere);
// the partitioned filter stride = range = slice bits (probe i in slice i).
struct ProbeWalk {
  HashScheme scheme;
  int num_probes;
  uint64_t range;
  uint64_t stride;

  void Set(uint8_t* data, uint64_t hash) const {
    ProbeSequence seq(hash, scheme, range);
    uint64_t base = 0;
    for (int i = 0; i < num_probes; ++i, base += stride) {
      SetBit(data, base + internal::FastRange64(seq.Next(), range));
    }
  }
  bool AllSet(const uint8_t* data, uint64_t hash) const {
    ProbeSequence seq(hash, scheme, range);
    uint64_t base = 0;
    for (int i = 0; i < num_probes; ++i, base += stride) {
      if (!GetBit(data, base + internal::FastRange64(seq.Next(), range))) return false;
    }
    return true;
  }
};

// A bit count and k for a bit-array filter (standard or partitioned).
struct Sizing {
  uint64_t num_bits;
  int num_probes;
};

// For `expected_keys` at `bits_per_key` (clamped by ClampBitsPerKey):
// m = max(kMinBits, ceil(n * bpk)) and the k minimising formula (1) of
// blockbloom/math.h, at most kMaxStandardProbes. ResourceExhausted when m
// exceeds kMaxBits.
inline absl::StatusOr<Sizing> SizeForBitsPerKey(uint64_t expected_keys, double bits_per_key) {
  const double bpk = ClampBitsPerKey(bits_per_key);
  const double bits = std::ceil(static_cast<double>(expected_keys) * bpk);
  if (!(bits <= static_cast<double>(kMaxBits))) {
    return absl::ResourceExhaustedError(
        absl::StrCat(expected_keys, " keys at ", bpk, " bits/key do not fit in memory"));
  }
  return Sizing{std::max(kMinBits, static_cast<uint64_t>(bits)),
                std::min(kMaxStandardProbes, *StandardOptimalProbes(bpk, 1.0))};
}

// For n (>= 1) keys at `fpr`: m from the closed form (2) of blockbloom/math.h
// and the k minimising (1) for it, at most kMaxStandardProbes. The callers
// then raise m for the integer k. InvalidArgument for a bad fpr;
// ResourceExhausted when m does not fit.
inline absl::StatusOr<Sizing> SizeForFpr(double n, double fpr) {
  absl::StatusOr<uint64_t> bits = StandardBitsForFpr(n, fpr);
  if (!bits.ok()) {
    if (bits.status().code() != absl::StatusCode::kOutOfRange) return bits.status();
    return absl::ResourceExhaustedError(bits.status().message());
  }
  return Sizing{
      *bits, std::min(kMaxStandardProbes, *StandardOptimalProbes(static_cast<double>(*bits), n))};
}

// The smallest count c >= `start` (of bits, or of slice bits) at which
// `fpr_at(c)` <= `fpr`, for a model that falls with c (the small-m models of
// blockbloom/math.h): `start` itself when it meets `fpr` (the closed form's
// size, the common case at large n), else a search that grows c by doubling
// steps, then bisects to within 1/4096 of c (the answer may exceed the
// smallest by that much; whole bits below 4096). At most ~2 * 48 model
// evaluations, ~20 typically; 0 when no c up to `max_count` meets `fpr`.
template <class FprAt>
uint64_t SmallestCountMeeting(uint64_t start, uint64_t max_count, double fpr, FprAt fpr_at) {
  if (start > max_count) return 0;
  if (fpr_at(start) <= fpr) return start;
  uint64_t lo = start, step = std::max<uint64_t>(1, start / 64), hi;
  for (;;) {  // fpr_at(lo) > fpr
    hi = step > max_count - lo ? max_count : lo + step;
    if (fpr_at(hi) <= fpr) break;
    if (hi == max_count) return 0;
    lo = hi;
    step *= 2;
  }
  while (hi - lo > std::max<uint64_t>(1, lo / 4096)) {  // fpr_at(lo) > fpr >= fpr_at(hi)
    const uint64_t mid = lo + (hi - lo) / 2;
    (fpr_at(mid) <= fpr ? hi : lo) = mid;
  }
  return hi;
}

// Sizing under a small-m model: for k in {k0 - 1, k0, k0 + 1} (within
// [1, kMaxStandardProbes]) the smallest count from SmallestCountMeeting
// (starting at start(k)), and the (count, k) with the fewest bits(count, k)
// (ties to the smaller k). When k0 meets `fpr` at start(k0), that is the
// answer without a search (the closed form's geometry). {0, 0} when none fits.
// k0's search runs first and once: its first evaluation is the model at
// start(k0), which decides between the two.
template <class Start, class Bits, class FprAt>
Sizing SizeUnderModel(int k0, uint64_t max_count, double fpr, Start start, Bits bits,
                      FprAt fpr_at) {
  const auto smallest = [&](int k) {
    return SmallestCountMeeting(start(k), max_count, fpr,
                                [&](uint64_t count) { return fpr_at(count, k); });
  };
  const uint64_t c0 = smallest(k0);
  if (c0 != 0 && c0 == start(k0)) return Sizing{c0, k0};
  Sizing best{0, 0};
  for (int k = std::max(1, k0 - 1); k <= std::min(kMaxStandardProbes, k0 + 1); ++k) {
    const uint64_t c = k == k0 ? c0 : smallest(k);
    if (c != 0 && (best.num_probes == 0 || bits(c, k) < bits(best.num_bits, best.num_probes))) {
      best = Sizing{c, k};
    }
  }
  return best;
}

// The 12-byte trailer of the standard and partitioned formats:
//   [word: u64 LE][k: u8][byte9: u8][version: u8][marker: u8]
// (word: m or slice bits; byte9: hash scheme or reserved 0).
inline constexpr size_t kTrailerSize = 12;

struct Trailer {
  uint64_t word;
  int num_probes;
  uint8_t byte9;
};

// The filter's bytes, then the trailer.
inline std::string EncodeWithTrailer(const uint8_t* bits, size_t num_bytes, const Trailer& t,
                                     uint8_t version, uint8_t marker) {
  std::string out(reinterpret_cast<const char*>(bits), num_bytes);
  internal::PutFixed64(&out, t.word);
  out.push_back(static_cast<char>(t.num_probes));
  out.push_back(static_cast<char>(t.byte9));
  out.push_back(static_cast<char>(version));
  out.push_back(static_cast<char>(marker));
  return out;
}

// Reads the trailer at the end of `encoded`; DataLoss, with messages starting
// with `what`, when it is too short or its marker or version differ.
inline absl::StatusOr<Trailer> DecodeTrailer(std::string_view encoded, const char* what,
                                             uint8_t version, uint8_t marker) {
  if (encoded.size() < kTrailerSize) {
    return absl::DataLossError(absl::StrCat(what, ": shorter than its trailer"));
  }
  const char* t = encoded.data() + encoded.size() - kTrailerSize;
  if (static_cast<uint8_t>(t[11]) != marker) {
    return absl::DataLossError(absl::StrCat(what, ": wrong marker byte"));
  }
  if (static_cast<uint8_t>(t[10]) != version) {
    return absl::DataLossError(
        absl::StrCat(what, ": unknown version ", static_cast<uint8_t>(t[10])));
  }
  return Trailer{internal::DecodeFixed64(t), static_cast<uint8_t>(t[8]),
                 static_cast<uint8_t>(t[9])};
}

// OK when the bytes before the trailer are exactly ceil(num_bits / 8) and no
// bit at or past num_bits is set; DataLoss (messages start with `what`)
// otherwise.
inline absl::Status CheckBitArray(std::string_view encoded, uint64_t num_bits, const char* what) {
  const uint64_t data_bytes = encoded.size() - kTrailerSize;
  if ((num_bits + 7) / 8 != data_bytes) {
    return absl::DataLossError(
        absl::StrCat(what, ": ", data_bytes, " bytes of bits for m=", num_bits));
  }
  if (num_bits % 8 != 0 && (static_cast<uint8_t>(encoded[data_bytes - 1]) >> (num_bits % 8)) != 0) {
    return absl::DataLossError(absl::StrCat(what, ": bits set past m"));
  }
  return absl::OkStatus();
}

// Deserialize of a filter F encoded as its bit array then the trailer:
// decodes the trailer, `num_bits(trailer)` validates the parameters and
// returns the bit count (DataLoss when out of range), the bit array is checked
// against it (CheckBitArray), `create(trailer)` makes the empty filter (a
// StatusOr<F>) and the bits are copied in.
template <class F, class NumBits, class Create>
absl::StatusOr<F> DecodeBitArrayFilter(std::string_view encoded, const char* what, uint8_t version,
                                       uint8_t marker, NumBits num_bits, Create create) {
  absl::StatusOr<Trailer> t = DecodeTrailer(encoded, what, version, marker);
  if (!t.ok()) return t.status();
  absl::StatusOr<uint64_t> m = num_bits(*t);
  if (!m.ok()) return m.status();
  if (absl::Status s = CheckBitArray(encoded, *m, what); !s.ok()) return s;
  absl::StatusOr<F> filter = create(*t);
  if (filter.ok()) {
    std::copy(encoded.begin(), encoded.end() - kTrailerSize, filter->mutable_data());
  }
  return filter;
}

}  // namespace variants
}  // namespace blockbloom

#endif  // BLOCKBLOOM_VARIANTS_PROBES_H_
