// libFuzzer: arbitrary bytes as a compact filter. They go to both compact
// policies' KeyMayMatch (the migrating one also routes them to the blocked
// and built-in readers by their last byte), to the lenient probe, and to
// CompactFilter::Deserialize. The bytes are copied to the very end of a heap
// allocation of exactly their size, so ASan reports any read past the end.
// Nothing may crash, hang or read out of bounds; a filter that passes
// Deserialize's full validation must answer like the lenient reader; bytes
// ending in a compact marker that do not parse must read as "may match".
//
// Random bytes rarely carry a valid trailer (its check byte), so each input
// is also read a second way: the first bytes choose B, r and W, the rest is
// taken as an arbitrary Rice stream and arbitrary index offsets, and a valid
// trailer is written for them. That drives the bucket decoder over arbitrary
// stream contents, but only with sane sizes (B <= 8, S <= 8x the payload).
//
// Inputs starting with kRawTrailerTag are read a third way (RawTrailer): the
// input chooses every trailer field of either version raw, including values
// no writer produces (S, W, B near 2^64 or 2^62, r > 60, reserved bits, a
// version byte other than 1), how each varint is written (canonical, one
// zero group too many, or raw bytes), whether the check is right, and
// whether the body has exactly the size the fields claim. A hostile S near
// 2^64 once made a 24-byte filter "account for every byte" and hung a Get;
// the first two readings reach such a trailer only through a hand-made seed
// or a 1-in-256 check byte. This mode found that hang again from the corpus
// without its seed, against the reader before the fix, in ~45 s (173,000
// runs under ASan).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "blockbloom/compact_filter.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/hash.h"
#include "compact/format.h"
#include "fuzz_input.h"
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"

namespace {

void Probe(const uint8_t* data, size_t size, uint64_t salt) {
  static const leveldb::FilterPolicy* const compact = blockbloom::NewCompactFilterPolicy(10);
  static const leveldb::FilterPolicy* const migrating =
      blockbloom::NewMigratingCompactFilterPolicy(10);

  // Exactly `size` bytes on the heap, the filter flush against the end.
  std::unique_ptr<char[]> heap = std::make_unique<char[]>(size == 0 ? 1 : size);
  char* filter = heap.get() + (size == 0 ? 1 : 0);
  if (size > 0) std::memcpy(filter, data, size);
  const std::string_view bytes(filter, size);
  const leveldb::Slice slice(filter, size);

  // Bytes ending in a compact marker that their version's parser rejects
  // must read as "may match" everywhere (docs/FORMAT.md).
  namespace fmt = blockbloom::compact;
  const uint8_t last = size > 0 ? static_cast<uint8_t>(bytes.back()) : 0;
  fmt::FilterView v1;
  fmt::V2View v2;
  const bool unparseable =
      size >= 2 && ((last & fmt::kV2MarkerMask) == fmt::kV2MarkerBase ? !fmt::ParseV2(bytes, &v2)
                    : last == fmt::kMarker ? !fmt::ParseFilter(bytes, &v1)
                                           : false);
  for (int i = 0; i < 16; ++i) {
    const std::string key = "key" + std::to_string(salt + i);
    const bool a = compact->KeyMayMatch(key, slice);
    const bool b = migrating->KeyMayMatch(key, slice);
    const bool c = fmt::EncodedMayContainHash(bytes, blockbloom::HashKey(key));
    if (unparseable && !(a && b && c)) std::abort();
  }

  auto parsed = blockbloom::CompactFilter::Deserialize(bytes);
  if (parsed.ok()) {
    for (uint64_t i = 0; i < 256; ++i) {
      const uint64_t h = (salt + i) * 0x9E3779B97F4A7C15ull;
      if (parsed->MayContainHash(h) != blockbloom::compact::EncodedMayContainHash(bytes, h)) {
        std::abort();
      }
    }
  }
}

// A valid trailer over arbitrary stream and index contents.
std::string WithValidTrailer(const uint8_t* data, size_t size) {
  namespace compact = blockbloom::compact;
  if (size < 4) return {};
  compact::Params p;
  p.num_buckets = 1 + data[0] % 8;
  p.rice_bits = data[1] % (compact::kMaxRiceBits + 1);
  p.bucket_width = 1 + ((uint64_t{data[2]} << 8 | data[3]) << (data[2] % 48));
  if (p.bucket_width > compact::kMaxRange / p.num_buckets) {
    p.bucket_width = compact::kMaxRange / p.num_buckets;
  }
  const uint8_t* payload = data + 4;
  const size_t payload_size = size - 4;
  p.stream_bits = 8 * payload_size - (payload_size > 0 ? data[2] % 8 : 0);
  std::string out(reinterpret_cast<const char*>(payload), (p.stream_bits + 7) / 8);
  if (!out.empty() && p.stream_bits % 8 != 0) {
    out.back() = static_cast<char>(out.back() & ((1 << (p.stream_bits % 8)) - 1));
  }
  // Offsets: sorted or not, in range or not, as the input says.
  std::vector<uint64_t> offsets(p.num_buckets - 1);
  for (size_t j = 0; j < offsets.size(); ++j) {
    const uint64_t x = payload_size > 0 ? payload[(j * 7) % payload_size] : 0;
    offsets[j] = (data[3] & 1) ? (p.stream_bits * (j + 1)) / p.num_buckets + (x % 5)
                               : (x * p.stream_bits) / 255;
    offsets[j] &= (uint64_t{1} << compact::BitWidth(p.stream_bits)) - 1;
  }
  compact::AppendIndexAndTrailer(p, offsets.data(), &out);
  return out;
}

// ---- RawTrailer: every trailer field as the input says. ----

inline constexpr uint8_t kRawTrailerTag = 0xA7;
// Largest body written to match the fields' claimed sizes (bounds the work
// of one input; hostile claims beyond it get the input's own bytes instead).
inline constexpr uint64_t kMaxClaimedBody = uint64_t{1} << 16;

// A 64-bit field value, steered towards edges: a kind byte, then its bytes.
uint64_t RawValue(blockbloom::fuzz::FuzzInput* in) {
  const uint8_t kind = in->Byte();
  switch (kind % 8) {
    case 0:
      return in->Byte();
    case 1:
      return in->U16();
    case 2:
      return in->U32();
    case 3: {
      const uint64_t lo = in->U32();
      return lo | uint64_t{in->U32()} << 32;
    }
    case 4: {  // 2^k plus a signed delta (wrapping)
      const int k = in->Byte() % 64;
      return (uint64_t{1} << k) + static_cast<uint64_t>(static_cast<int8_t>(in->Byte()));
    }
    case 5:  // just below 2^64
      return UINT64_MAX - in->Byte();
    case 6: {  // around 2^62 / d: B * W at the range limit
      const uint64_t d = 1 + in->Byte();
      return (uint64_t{1} << 62) / d + static_cast<uint64_t>(static_cast<int8_t>(in->Byte()));
    }
    default:  // 0
      return 0;
  }
}

// A reverse varint of `v` (read backwards from the end, low group first),
// as the input says: canonical, with one zero group too many (not
// canonical), or raw bytes from the input (0..11 of them).
void AppendRawVarint(uint64_t v, blockbloom::fuzz::FuzzInput* in, std::string* dst) {
  const uint8_t how = in->Byte();
  if (how % 3 == 2) {
    const size_t len = in->Byte() % 12;
    for (size_t i = 0; i < len; ++i) dst->push_back(static_cast<char>(in->Byte()));
    return;
  }
  char groups[11];
  int n = 0;
  do {
    groups[n++] = static_cast<char>((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
    v >>= 7;
  } while (v != 0);
  if (how % 3 == 1) {  // a zero group after the last: more than 10, or not canonical
    groups[n - 1] = static_cast<char>(groups[n - 1] | 0x80);
    groups[n++] = 0;
  }
  for (int i = n - 1; i >= 0; --i) dst->push_back(groups[i]);
}

// `len` body bytes: the input's remaining bytes, cycled (zeros if none).
std::string BodyFrom(const uint8_t* rest, size_t rest_size, uint64_t len) {
  std::string body(static_cast<size_t>(len), '\0');
  if (rest_size > 0) {
    for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>(rest[i % rest_size]);
  }
  return body;
}

// REQUIRES: data[0] == kRawTrailerTag. Layout after the tag:
//   flags: bit 0 version 2 (else 1); bit 1 raw check (else the right one);
//          bit 2 version 1: a body of the size the fields claim, if at
//          most kMaxClaimedBody (else the input's remaining bytes);
//          version 2: a body of a length the input gives (else the
//          remaining bytes); bit 3 a raw version byte (version 1; else 1)
//   version 1: S, W, B (RawValue each), their varint encodings
//              (AppendRawVarint), params byte, [check byte], [version byte]
//   version 2: R - 1 (byte, mod 32), seed (low 4 bits of a byte), a 12-bit
//              check (U16; used if bit 1), [body length (U16) if bit 2]
//   then the body's bytes.
std::string RawTrailer(const uint8_t* data, size_t size) {
  namespace compact = blockbloom::compact;
  blockbloom::fuzz::FuzzInput in(data + 1, size - 1);
  const uint8_t flags = in.Byte();
  std::string trailer;
  uint64_t claimed_body = UINT64_MAX;
  if ((flags & 1) == 0) {
    const uint64_t s = RawValue(&in), w = RawValue(&in), b = RawValue(&in);
    AppendRawVarint(s, &in, &trailer);
    AppendRawVarint(w, &in, &trailer);
    AppendRawVarint(b, &in, &trailer);
    const uint8_t params = in.Byte();
    trailer.push_back(static_cast<char>(params));
    trailer.push_back(
        static_cast<char>((flags & 2) ? in.Byte() : compact::ParamsCheck(b, w, s, params)));
    trailer.push_back(static_cast<char>((flags & 8) ? in.Byte() : compact::kFormatVersion));
    trailer.push_back(static_cast<char>(compact::kMarker));
    // ceil(S/8) + ceil((B-1) bit_width(S) / 8), where it stays small.
    const uint64_t stream = s / 8 + (s % 8 != 0);
    const unsigned __int128 index_bits =
        b > 1 ? static_cast<unsigned __int128>(b - 1) * compact::BitWidth(s) : 0;
    const unsigned __int128 claimed = stream + (index_bits + 7) / 8;
    claimed_body = claimed <= kMaxClaimedBody ? static_cast<uint64_t>(claimed) : UINT64_MAX;
  } else {
    const int r = 1 + in.Byte() % compact::kV2MaxFingerprintBits;
    const uint8_t seed = in.Byte() & 0x0F;
    const uint16_t raw_check = in.U16() & 0xFFF;
    const uint64_t body_len = (flags & 4) ? in.U16() : in.remaining();
    const uint8_t* rest = data + 1 + in.consumed();
    std::string out = BodyFrom(rest, in.remaining(), body_len);
    // The check covers the total size, known once the body is.
    const uint64_t total = out.size() + compact::kV2TrailerSize;
    const uint16_t check = (flags & 2) ? raw_check : compact::V2Check(total, r, seed);
    out.push_back(static_cast<char>(check >> 4));
    out.push_back(static_cast<char>((check & 0x0F) << 4 | seed));
    out.push_back(static_cast<char>(compact::kV2MarkerBase | (r - 1)));
    return out;
  }
  const uint64_t body_len =
      (flags & 4) && claimed_body != UINT64_MAX ? claimed_body : in.remaining();
  std::string out = BodyFrom(data + 1 + in.consumed(), in.remaining(), body_len);
  out += trailer;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint64_t salt = 0;
  for (size_t i = 0; i < size && i < 8; ++i) salt = (salt << 8) | data[i];
  Probe(data, size, salt);
  const std::string repaired = WithValidTrailer(data, size);
  if (!repaired.empty()) {
    blockbloom::compact::FilterView view;
    if (!blockbloom::compact::ParseFilter(repaired, &view)) std::abort();  // writer/reader agree
    Probe(reinterpret_cast<const uint8_t*>(repaired.data()), repaired.size(), salt);
  }
  if (size >= 1 && data[0] == kRawTrailerTag) {
    const std::string raw = RawTrailer(data, size);
    Probe(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), salt);
  }
  return 0;
}
