#include "compact/format.h"

#include <algorithm>
#include <cstring>

#include "compact/v2_probe.h"

namespace blockbloom {
namespace compact {
#define BB_ALWAYS_INLINE inline __attribute__((always_inline))

namespace {

constexpr int kParamsAt = 4, kCheckAt = 3, kVersionAt = 2, kMarkerAt = 1;  // from end
constexpr uint8_t kRiceMask = 0x3F;                                        // low 6 bits
constexpr int kMaxVarintBytes = 10;

// The 57+ bits starting at bit `pos`, in the low bits of the result. Bytes at
// or past `size` read as zero, so this never reads outside [data, data+size).
BB_ALWAYS_INLINE uint64_t LoadBits(const uint8_t* data, size_t size, uint64_t pos) {
  const uint64_t byte = pos >> 3;
  uint64_t w = 0;
  if (byte + 8 <= size) {
    w = v2::LoadLittle64(data + byte);
  } else {
    for (uint64_t i = 0; i < 8 && byte + i < size; ++i) {
      w |= static_cast<uint64_t>(data[byte + i]) << (8 * i);
    }
  }
  return w >> (pos & 7);
}

BB_ALWAYS_INLINE uint64_t LowMask(int bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

// `bits` (0..64) bits at `pos`.
uint64_t ReadBits(const uint8_t* data, size_t size, uint64_t pos, int bits) {
  if (bits <= 32) return LoadBits(data, size, pos) & LowMask(bits);
  const uint64_t lo = LoadBits(data, size, pos) & LowMask(32);
  const uint64_t hi = LoadBits(data, size, pos + 32) & LowMask(bits - 32);
  return lo | (hi << 32);
}

// ceil(S / 8) without the wrap of (S + 7) / 8 for S within 7 of 2^64 (a
// hostile trailer's claim).
uint64_t StreamBytes(uint64_t stream_bits) { return stream_bits / 8 + (stream_bits % 8 != 0); }

// Reads a reverse varint ending just before byte `*end` (exclusive) and not
// reaching below `begin`. On success moves *end to its first byte.
bool ReadReverseVarint(const uint8_t* data, size_t begin, size_t* end, uint64_t* v) {
  uint64_t result = 0;
  size_t at = *end;
  for (int i = 0; i < kMaxVarintBytes; ++i) {
    if (at <= begin) return false;
    const uint8_t b = data[--at];
    const uint64_t group = b & 0x7F;
    if (i == 9 && group > 1) return false;  // would overflow 64 bits
    result |= group << (7 * i);
    if ((b & 0x80) == 0) {
      if (i > 0 && b == 0) return false;  // not canonical
      *end = at;
      *v = result;
      return true;
    }
  }
  return false;
}

void AppendReverseVarint(uint64_t v, std::string* dst) {
  char buf[kMaxVarintBytes];
  int n = 0;
  do {
    buf[n++] = static_cast<char>((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
    v >>= 7;
  } while (v != 0);
  for (int i = n - 1; i >= 0; --i) dst->push_back(buf[i]);
}

// off(j) for j in [0, B]. REQUIRES: view parsed.
BB_ALWAYS_INLINE uint64_t BucketOffset(const FilterView& view, uint64_t j) {
  if (j == 0) return 0;
  if (j >= view.params.num_buckets) return view.params.stream_bits;
  const uint64_t pos = uint64_t{8} * view.index_byte + (j - 1) * view.offset_bits;
  return ReadBits(view.data, view.size, pos, view.offset_bits);
}

// Walks one bucket [begin, end): unary parts forward from `begin` (q zero
// bits then a one), remainders of r bits backward from `end` (entry i's at
// end - (i+1)*r). The bucket is exhausted exactly when the two meet.
// Every step checks what a valid filter guarantees, so damaged bytes end the
// walk with kCorrupt instead of reading out of bounds or looping.
class BucketCursor {
 public:
  BB_ALWAYS_INLINE BucketCursor(const FilterView& view, uint64_t begin, uint64_t end)
      : data_(view.data),
        size_(view.size),
        r_(view.params.rice_bits),
        rmask_(LowMask(view.params.rice_bits)),
        width_(view.params.bucket_width),
        max_q_((view.params.bucket_width - 1) >> view.params.rice_bits),
        upos_(begin),
        rpos_(end) {}

  bool done() const { return upos_ >= rpos_; }
  uint64_t value() const { return value_; }

  // Decodes the next entry into value(). REQUIRES: !done().
  // Returns false if the bytes break the format.
  //
  // Speed: the unary bits sit in a 57-bit window whose consumed ones are
  // cleared with x & (x - 1), so the only loop-carried work per entry is that
  // and the add to value_; remainder loads are independent of each other.
  BB_ALWAYS_INLINE bool Next() {
    while (window_ == 0) {                    // window exhausted: load the next 57 bits
      if (next_load_ >= rpos_) return false;  // no unary one left
      base_ = next_load_;
      window_ = LoadBits(data_, size_, base_) & LowMask(57);
      next_load_ = base_ + 57;
    }
    const uint64_t one = base_ + static_cast<uint64_t>(__builtin_ctzll(window_));
    window_ &= window_ - 1;
    const uint64_t q = one - upos_;
    upos_ = one + 1;
    if (upos_ > rpos_ || rpos_ - upos_ < static_cast<uint64_t>(r_)) return false;
    rpos_ -= static_cast<uint64_t>(r_);
    const uint64_t rem =
        r_ <= 57 ? LoadBits(data_, size_, rpos_) & rmask_ : ReadBits(data_, size_, rpos_, r_);
    if (q > max_q_) return false;
    const uint64_t gap = (q << r_) | rem;
    if (gap >= width_ - value_) return false;  // value + gap must stay < W
    if (gap == 0 && !first_) return false;     // entries strictly increase
    first_ = false;
    value_ += gap;
    return true;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  int r_;
  uint64_t rmask_;
  uint64_t width_;
  uint64_t max_q_;
  uint64_t upos_;               // bit after the last unary one consumed
  uint64_t rpos_;               // end of the next remainder
  uint64_t next_load_ = upos_;  // where the next window starts
  uint64_t base_ = 0;           // bit position of window_'s bit 0
  uint64_t window_ = 0;         // unread unary bits, consumed ones cleared
  uint64_t value_ = 0;
  bool first_ = true;
};

}  // namespace

int VarintLength(uint64_t v) {
  int n = 1;
  while (v > 0x7F) {
    v >>= 7;
    ++n;
  }
  return n;
}

uint64_t EncodedSize(const Params& p) {
  const uint64_t stream_bytes = StreamBytes(p.stream_bits);
  const uint64_t index_bits = p.num_buckets > 1 ? (p.num_buckets - 1) * BitWidth(p.stream_bits) : 0;
  return stream_bytes + (index_bits + 7) / 8 + VarintLength(p.stream_bits) +
         VarintLength(p.bucket_width) + VarintLength(p.num_buckets) + kFixedTrailerSize;
}

void AppendIndexAndTrailer(const Params& p, const uint64_t* offsets, std::string* dst) {
  const int w = BitWidth(p.stream_bits);
  uint64_t acc = 0;
  int acc_bits = 0;
  for (uint64_t j = 1; j < p.num_buckets; ++j) {
    const uint64_t off = offsets[j - 1];
    // Emit w bits of off, least significant first, through a byte queue.
    for (int done = 0; done < w;) {
      const int take = std::min(w - done, 56 - acc_bits);
      acc |= ((off >> done) & LowMask(take)) << acc_bits;
      acc_bits += take;
      done += take;
      while (acc_bits >= 8) {
        dst->push_back(static_cast<char>(acc & 0xFF));
        acc >>= 8;
        acc_bits -= 8;
      }
    }
  }
  if (acc_bits > 0) dst->push_back(static_cast<char>(acc & 0xFF));
  AppendReverseVarint(p.stream_bits, dst);
  AppendReverseVarint(p.bucket_width, dst);
  AppendReverseVarint(p.num_buckets, dst);
  const uint8_t params = static_cast<uint8_t>(p.rice_bits);  // reserved bits 6..7 = 0
  dst->push_back(static_cast<char>(params));
  dst->push_back(
      static_cast<char>(ParamsCheck(p.num_buckets, p.bucket_width, p.stream_bits, params)));
  dst->push_back(static_cast<char>(kFormatVersion));
  dst->push_back(static_cast<char>(kMarker));
}

bool ParseFilter(std::string_view encoded, FilterView* view) {
  const size_t n = encoded.size();
  if (n < kFixedTrailerSize) return false;
  const auto* data = reinterpret_cast<const uint8_t*>(encoded.data());
  if (data[n - kMarkerAt] != kMarker || data[n - kVersionAt] != kFormatVersion) {
    return false;
  }
  const uint8_t params = data[n - kParamsAt];
  if ((params & ~kRiceMask) != 0) return false;  // reserved bits
  Params p;
  p.rice_bits = params & kRiceMask;
  if (p.rice_bits > kMaxRiceBits) return false;
  size_t end = n - kFixedTrailerSize;
  if (!ReadReverseVarint(data, 0, &end, &p.num_buckets) ||
      !ReadReverseVarint(data, 0, &end, &p.bucket_width) ||
      !ReadReverseVarint(data, 0, &end, &p.stream_bits)) {
    return false;
  }
  if (data[n - kCheckAt] != ParamsCheck(p.num_buckets, p.bucket_width, p.stream_bits, params)) {
    return false;
  }
  if (p.num_buckets == 0) {
    // The empty set: nothing else may be present.
    if (p.bucket_width != 0 || p.stream_bits != 0 || end != 0) return false;
  } else {
    __extension__ typedef unsigned __int128 u128;  // products below, without divisions
    if (p.bucket_width == 0 || u128{p.num_buckets} * p.bucket_width > kMaxRange) return false;
    const int w = BitWidth(p.stream_bits);
    const u128 index_bits = u128{p.num_buckets - 1} * static_cast<uint64_t>(w);
    if (index_bits > (u128{1} << 60)) return false;
    const uint64_t stream_bytes = StreamBytes(p.stream_bits);
    const uint64_t index_bytes = (static_cast<uint64_t>(index_bits) + 7) / 8;
    if (stream_bytes > end || index_bytes != end - stream_bytes) return false;
    view->offset_bits = w;
    view->index_byte = static_cast<size_t>(stream_bytes);
  }
  view->params = p;
  view->data = data;
  view->size = n;
  return true;
}

bool MayContainHash(const FilterView& view, uint64_t hash) {
  const Params& p = view.params;
  if (p.num_buckets == 0) return false;  // the empty set
  const uint64_t j = FastRange64(hash, p.num_buckets);
  const uint64_t target = FastRange64(hash, p.num_buckets * p.bucket_width) - j * p.bucket_width;
  const uint64_t begin = BucketOffset(view, j);
  const uint64_t end = BucketOffset(view, j + 1);
  if (begin > end || end > p.stream_bits) return true;  // corrupt index
  // The probe loop checks only what memory safety and termination need
  // (LoadBits never reads outside the encoding; upos rises by >= 1 per entry
  // and never passes rpos, which only falls). Value-level rules are checked by
  // ValidateStream; a damaged stream can change answers either way, as a
  // damaged Bloom filter can, but never crashes the reader.
  const int r = p.rice_bits;
  const uint64_t rmask = LowMask(r);
  uint64_t upos = begin, rpos = end, next_load = begin, base = 0, window = 0;
  uint64_t value = 0;
  while (upos < rpos) {
    while (window == 0) {
      if (next_load >= rpos) return true;  // corrupt: no unary one left
      base = next_load;
      window = LoadBits(view.data, view.size, base) & LowMask(57);
      next_load = base + 57;
    }
    const uint64_t one = base + static_cast<uint64_t>(__builtin_ctzll(window));
    window &= window - 1;
    const uint64_t q = one - upos;
    upos = one + 1;
    if (upos > rpos || rpos - upos < static_cast<uint64_t>(r)) return true;  // corrupt
    rpos -= static_cast<uint64_t>(r);
    const uint64_t rem = r <= 57 ? LoadBits(view.data, view.size, rpos) & rmask
                                 : ReadBits(view.data, view.size, rpos, r);
    value += (q << r) | rem;
    if (value >= target) return value == target;
  }
  return false;
}

bool EncodedMayContainHash(std::string_view encoded, uint64_t hash) {
  if (!encoded.empty() && IsV2Marker(static_cast<uint8_t>(encoded.back()))) {
    V2View v2;
    if (!ParseV2(encoded, &v2)) return true;
    return V2MayContainHash(v2, hash);
  }
  FilterView view;
  if (!ParseFilter(encoded, &view)) return true;
  return MayContainHash(view, hash);
}

int TrailerVersion(std::string_view encoded) {
  const size_t n = encoded.size();
  if (n == 0) return -1;
  const uint8_t last = static_cast<uint8_t>(encoded[n - 1]);
  if (IsV2Marker(last)) return 2;
  if (last == kMarker) return n >= 2 ? static_cast<uint8_t>(encoded[n - 2]) : 0;
  return -1;
}

bool ParseV2(std::string_view encoded, V2View* view) { return v2::ParseTrailer(encoded, view); }

bool V2MayContainHash(const V2View& view, uint64_t hash) { return v2::MayContainHash(view, hash); }

bool ValidateV2(const V2View& view) {
  const uint64_t used = view.slots * static_cast<uint64_t>(view.fingerprint_bits);
  const uint64_t total = 8 * static_cast<uint64_t>(view.body_bytes);
  for (uint64_t bit = used; bit < total; ++bit) {
    if ((view.data[bit >> 3] >> (bit & 7)) & 1) return false;
  }
  return true;
}

int64_t ValidateStream(const FilterView& view) {
  const Params& p = view.params;
  if (p.num_buckets == 0) return 0;
  // The loop below visits every bucket. ParseFilter bounds B by the bytes
  // present only through the index, (B-1)*w bits with w = bit_width(S): with
  // S = 0, w is 0 and a 15-byte trailer may claim B = 2^62 empty buckets
  // (once ~10 s per 2^30 of them, centuries for 2^62). Every offset is then
  // 0 and every bucket empty, which is what the loop would conclude: a
  // valid filter of no entries. With S >= 1, w >= 1 and B <= 8 * size + 1,
  // so the loop is linear in the encoding's size.
  if (p.stream_bits == 0) return 0;
  int64_t entries = 0;
  uint64_t prev_end = 0;
  for (uint64_t j = 0; j < p.num_buckets; ++j) {
    const uint64_t begin = BucketOffset(view, j);
    const uint64_t end = BucketOffset(view, j + 1);
    if (begin != prev_end || begin > end || end > p.stream_bits) return -1;
    BucketCursor cursor(view, begin, end);
    while (!cursor.done()) {
      if (!cursor.Next()) return -1;
      ++entries;
    }
    prev_end = end;
  }
  return prev_end == p.stream_bits ? entries : -1;
}

}  // namespace compact
}  // namespace blockbloom
