// Little-endian fixed-width integers and a saturating size conversion, shared
// by the formats' encoders and decoders (docs/FORMAT.md: every multi-byte field
// is little-endian).
//
// Thread-safety: pure functions, safe from any thread.
#ifndef BLOCKBLOOM_COMMON_CODING_H_
#define BLOCKBLOOM_COMMON_CODING_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace blockbloom {
namespace internal {

// The byte order of the host: on a little-endian one (every supported
// target) each fixed-width field is one load or store; the byte loops below
// were not always merged into one by GCC 12 (LevelDB's 32-bit hash in
// format::LevelDbHash took 108 instructions per 20-byte key through them, and
// LevelDB's own 46, by callgrind).
// A compiler that does not say takes the byte loops.
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
inline constexpr bool kLittleEndianHost = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
#else
inline constexpr bool kLittleEndianHost = false;
#endif

// Overwrites p[0, 4) with v, little-endian. REQUIRES: 4 writable bytes.
inline void EncodeFixed32(char* p, uint32_t v) {
  if (kLittleEndianHost) {
    std::memcpy(p, &v, sizeof(v));
  } else {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
  }
}

inline void PutFixed32(std::string* dst, uint32_t v) {
  char buf[4];
  EncodeFixed32(buf, v);
  dst->append(buf, 4);
}

// REQUIRES: p points at 4 readable bytes.
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  if (kLittleEndianHost) {
    std::memcpy(&v, p, sizeof(v));
  } else {
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  }
  return v;
}

// Overwrites p[0, 8) with v, little-endian. REQUIRES: 8 writable bytes.
inline void EncodeFixed64(char* p, uint64_t v) {
  if (kLittleEndianHost) {
    std::memcpy(p, &v, sizeof(v));
  } else {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
  }
}

inline void PutFixed64(std::string* dst, uint64_t v) {
  char buf[8];
  EncodeFixed64(buf, v);
  dst->append(buf, 8);
}

// REQUIRES: p points at 8 readable bytes.
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  if (kLittleEndianHost) {
    std::memcpy(&v, p, sizeof(v));
  } else {
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  }
  return v;
}

// Bounds-checked readers: each takes its value off the front of *in and
// returns true, or returns false and changes nothing when *in is too short.
inline bool GetByte(std::string_view* in, uint8_t* v) {
  if (in->empty()) return false;
  *v = static_cast<uint8_t>((*in)[0]);
  in->remove_prefix(1);
  return true;
}
inline bool GetFixed32(std::string_view* in, uint32_t* v) {
  if (in->size() < 4) return false;
  *v = DecodeFixed32(in->data());
  in->remove_prefix(4);
  return true;
}
inline bool GetFixed64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = DecodeFixed64(in->data());
  in->remove_prefix(8);
  return true;
}

// A byte count computed in double, as uint64_t: UINT64_MAX when it is NaN or
// at least 9.2e18 (below 2^63: such a size cannot be allocated anyway, and
// the conversion of anything >= 2^64 would be undefined).
inline uint64_t SaturatingBytes(double bytes) {
  if (!(bytes < 9.2e18)) return UINT64_MAX;
  return static_cast<uint64_t>(bytes);
}

// The words of `blocks` (a range of structs, each with a `words` array of
// std::atomic<uint64_t>), in order, as little-endian u64s: the in-memory
// state of the counting, d-left and FilteredDB front filters. Relaxed loads:
// the caller excludes writers for a consistent image.
template <typename Blocks>
void AppendAtomicWords(const Blocks& blocks, std::string* out) {
  out->reserve(out->size() + blocks.size() * sizeof(blocks[0].words));
  for (const auto& block : blocks) {
    for (const auto& word : block.words) PutFixed64(out, word.load(std::memory_order_relaxed));
  }
}

// The inverse: stores every word of *blocks from `in`, calling on_word(w)
// for each (to recount occupancy), and returns the end of what it read.
// REQUIRES: `in` holds 8 bytes per word of *blocks.
template <typename Blocks, typename OnWord>
const char* LoadAtomicWords(const char* in, Blocks* blocks, OnWord&& on_word) {
  for (auto& block : *blocks) {
    for (auto& word : block.words) {
      const uint64_t w = DecodeFixed64(in);
      in += 8;
      on_word(w);
      word.store(w, std::memory_order_relaxed);
    }
  }
  return in;
}

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMMON_CODING_H_
