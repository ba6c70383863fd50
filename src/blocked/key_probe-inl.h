// Per-target key-level probes of the blocked filter: XXH3 of the key, the
// trailer parse (for an encoded filter) and the in-register probe, inlined
// into one function per Highway target. A Get then costs one indirect call
// into straight-line code for the CPU's best target, instead of separate
// out-of-line hash, parse and probe calls.
//
// Included once per target through foreach_target.h by
// src/blocked/key_probe.cc (which exports the entry points) and by
// tests/blocked_key_probe_test.cc (which tests each target by name). Same answers as
// the scalar composition: blocked::EncodedMayContainHash(encoded,
// HashBytes(key)) and blocked::MayContainHash / flat::MayContainHash.

// Per-target include guard (the pattern Highway requires).
#if defined(BLOCKBLOOM_BLOCKED_KEY_PROBE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BLOCKBLOOM_BLOCKED_KEY_PROBE_INL_H_
#undef BLOCKBLOOM_BLOCKED_KEY_PROBE_INL_H_
#else
#define BLOCKBLOOM_BLOCKED_KEY_PROBE_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "blocked/format.h"
#include "blocked_bloom-inl.h"
#include "blocked_kernel.h"
#include "common/xxh3_inline.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {

// Whether the key with `hash` may be in non-empty filter bits laid out flat
// or in 512-bit blocks. REQUIRES: total_bits > 0, 1 <= num_probes <= 16.
HWY_INLINE bool BitsMayContainHash(uint64_t hash, uint64_t total_bits, int num_probes,
                                   const uint8_t* HWY_RESTRICT data, bool flat) {
  if (flat) return blocked::flat::MayContainHashEarlyOut(hash, total_bits, num_probes, data);
  return MayContainHashOne(hash, total_bits, num_probes, data);
}

// The LevelDB policy's probe of one encoded filter: 1 if the key may be in
// it, 0 if not, -1 if `filter` is not a blocked filter at all (its last byte
// is not blocked::kMarker, or it is under 2 bytes): the caller then routes it
// through format::Recognize. A blocked filter with a damaged trailer answers
// 1 (may match), as blocked::EncodedMayContainHash does. Never reads outside
// [filter, filter + filter_len).
HWY_INLINE int EncodedKeyMayMatch(const char* key, size_t key_len, const char* filter,
                                  size_t filter_len) {
  if (filter_len < 2 || static_cast<uint8_t>(filter[filter_len - 1]) != blocked::kMarker) {
    return -1;
  }
  // Hash first: its latency overlaps the trailer checks.
  const uint64_t hash = internal::InlineHashBytes(key, key_len);
  blocked::FilterView view;
  if (!blocked::ParseFilter(std::string_view(filter, filter_len), &view)) return 1;
  if (view.num_bytes == 0) return 0;  // the empty set
  return BitsMayContainHash(hash, view.num_bytes * 8, view.num_probes, view.bits,
                            view.geometry == blocked::Geometry::kFlat)
             ? 1
             : 0;
}

// BlockedBloomFilter::MayContain: the key against raw bits of `total_bits`
// bits (0: the empty set, answers false) laid out flat or in 512-bit blocks.
// REQUIRES: 1 <= num_probes <= 16; data holds ceil(total_bits / 8) bytes.
HWY_INLINE bool MayContainKey(const char* key, size_t key_len, uint64_t total_bits, int num_probes,
                              const uint8_t* HWY_RESTRICT data, bool flat) {
  const uint64_t hash = internal::InlineHashBytes(key, key_len);
  if (HWY_UNLIKELY(total_bits == 0)) return false;
  return BitsMayContainHash(hash, total_bits, num_probes, data, flat);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#endif  // include guard
