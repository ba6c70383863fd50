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

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "blocked/format.h"
#include "blocked_bloom-inl.h"
#include "blocked_bloom_simd.h"  // kPrefetchMinBytes, kDefaultWindow
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
  if (filter_len > blocked::kTrailerSize) {
    // A flat filter (what LevelDB's own filter sizes make: up to
    // kFlatMaxBytes) is recognised by one compare of its version and marker
    // bytes, ahead of the general parse: at 20 and 100 keys per filter, ours
    // over LevelDB's probe time for present keys 1.035 -> 0.980 and 1.056
    // -> 1.024 on AMD Zen 4, blocked filters unchanged (scripts/kernel_ab.py
    // OLD NEW --policy, 6 rounds). The same path for blocked filters made
    // them slower (0.38 -> 0.39 absent, 0.55 -> 0.60 present at 16 KiB); on
    // an AMD EPYC Zen 3 (AVX2) it made absent keys faster and present ones
    // slower at 16 KiB (absent 0.638 -> 0.605 and 0.538 -> 0.481, present
    // 0.645 -> 0.678 and 0.660 -> 0.686; two runs, 10 and 16 rounds), so
    // blocked filters keep the general parse.
    const uint32_t word = blocked::TrailerWord(filter, filter_len);
    const unsigned k = (word >> 8) & 0xFF;
    if (word >> 16 == blocked::kFlatTrailerTag && k - 1 < unsigned{blocked::kMaxFlatProbes}) {
      return blocked::flat::MayContainHashEarlyOut(hash, (filter_len - blocked::kTrailerSize) * 8,
                                                   static_cast<int>(k),
                                                   reinterpret_cast<const uint8_t*>(filter))
                 ? 1
                 : 0;
    }
  }
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

// Sets the bits of keys [0, n) (HashBytes of key_at(i), then
// blocked::AddHash or, flat, blocked::flat::AddHash): the bytes of hashing
// every key first and adding the hashes, built in one loop so that a key's
// XXH3 (integer work) runs beside the previous key's mask and OR (vector
// work) instead of after it. By size: flat filters and blocked ones of 2-8
// blocks mark a byte map (AddHashesByteMap), one block is built in
// registers (AddHashesToOneBlock), larger filters OR each key's mask into
// its line (AddHashOne), and filters over simd::kPrefetchMinBytes keep a
// rolling window of simd::kDefaultWindow hashes ahead, each key's line
// prefetched for writing when its hash is computed.
// Flat filters larger than the byte map set each probe's bit in place.
// KeyAt: size_t -> something with data() and size() (std::string_view,
// leveldb::Slice). REQUIRES: total_bits > 0 if n > 0, 1 <= num_probes <= 16
// (blocked) or blocked::kMaxFlatProbes (flat); data holds
// ceil(total_bits / 8) writable bytes.
template <typename KeyAt>
HWY_INLINE void AddKeys(size_t n, KeyAt&& key_at, uint64_t total_bits, int num_probes,
                        uint8_t* HWY_RESTRICT data, bool flat) {
  const auto hash_of = [&](size_t i) {
    const auto& key = key_at(i);
    return internal::InlineHashBytes(key.data(), key.size());
  };
  if (flat) {
    if (total_bits <= 64) {  // a few keys: every probe's bit in one register
      uint64_t mask = 0;
      if (total_bits == 64) {
        // LevelDB's smallest filter (1-6 keys at 10 bits/key), where k is
        // up to 30: FastRange64(x, 64) is x >> 58, one multiply per probe
        // instead of two.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
        // Eight probes per vector multiply (AVX-512 has 64-bit lanes'
        // products): the 1-key policy build 34 -> 18 ns (kernel_bench
        // build/bbpolicy-best/1, LevelDB's build/leveldb/1: 17.8).
        const hn::FixedTag<uint64_t, 8> d;
        // The powers padded to whole vectors (lanes past k are masked).
        alignas(64) static constexpr blocked::ProbePowers<uint64_t, blocked::kFlatMultiplier, 32>
            kPowers{};
        static_assert(blocked::kMaxFlatProbes <= 32, "whole vectors of powers");
        auto bits = hn::Zero(d);
        const auto one = hn::Set(d, 1);
        for (size_t i = 0; i < n; ++i) {
          const auto hash = hn::Set(d, hash_of(i));
          for (int p = 0; p < num_probes; p += 8) {
            const auto x = hn::Mul(hash, hn::Load(d, kPowers.of + p));
            const auto bit = one << hn::ShiftRight<58>(x);
            bits = hn::Or(bits, hn::IfThenElseZero(hn::FirstN(d, num_probes - p), bit));
          }
        }
        alignas(64) uint64_t lanes[8];
        hn::Store(bits, d, lanes);
        for (uint64_t lane : lanes) mask |= lane;
#else
        for (size_t i = 0; i < n; ++i) {
          const uint64_t hash = hash_of(i);
          // Two probes a step, into two masks: half the loop's branches
          // and no chain through one register.
          uint64_t other = 0;
          int p = 0;
          for (; p + 2 <= num_probes; p += 2) {
            mask |= uint64_t{1} << ((hash * blocked::kFlatProbePowers.of[p]) >> 58);
            other |= uint64_t{1} << ((hash * blocked::kFlatProbePowers.of[p + 1]) >> 58);
          }
          if (p < num_probes)
            mask |= uint64_t{1} << ((hash * blocked::kFlatProbePowers.of[p]) >> 58);
          mask |= other;
        }
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        // Bit p is bit p % 8 of byte p / 8: the mask as one little-endian
        // word (eight byte updates were a sixth of a 1-key build).
        uint64_t word;
        std::memcpy(&word, data, sizeof(word));
        word |= mask;
        std::memcpy(data, &word, sizeof(word));
#else
        for (int b = 0; b < 8; ++b) data[b] = static_cast<uint8_t>(data[b] | (mask >> (8 * b)));
#endif
        return;
      }
      for (size_t i = 0; i < n; ++i) {
        const uint64_t hash = hash_of(i);
        for (int p = 0; p < num_probes; ++p) {
          mask |= uint64_t{1} << blocked::flat::BitOf(hash, p, total_bits);
        }
      }
      for (uint64_t b = 0; b < (total_bits + 7) / 8; ++b) {
        data[b] = static_cast<uint8_t>(data[b] | (mask >> (8 * b)));
      }
      return;
    }
    // Even at 2 and 4 keys the byte map beats setting each bit in place
    // (LevelDB's CreateFilter time over ours 1.33 against 1.17 at 2 keys,
    // equal at 1: scripts/kernel_ab.py --build --build-sizes 1,2,4,8).
    if (total_bits <= kByteMapMaxBits) {
      AddHashesByteMap<true>(n, hash_of, total_bits, num_probes, data);
    } else {
      for (size_t i = 0; i < n; ++i) {
        blocked::flat::AddHash(hash_of(i), total_bits, num_probes, data);
      }
    }
    return;
  }
  if (total_bits <= blocked::kBlockBits) {  // one block: every key lands in it
    AddHashesToOneBlock(n, hash_of, static_cast<uint32_t>(total_bits), num_probes, data);
    return;
  }
  if (total_bits <= kByteMapMaxBits) {
    AddHashesByteMap<false>(n, hash_of, total_bits, num_probes, data);
    return;
  }
  if (total_bits / 8 <= simd::kPrefetchMinBytes) {  // in cache: nothing to prefetch
    for (size_t i = 0; i < n; ++i) AddHashOne(hash_of(i), total_bits, num_probes, data);
    return;
  }
  constexpr size_t kWindow = simd::kDefaultWindow;
  static_assert((kWindow & (kWindow - 1)) == 0, "the ring's index is a mask");
  uint64_t ring[kWindow];
  const auto hash_ahead = [&](size_t i) {
    const uint64_t h = hash_of(i);
    __builtin_prefetch(data + blocked::LocateBlock(h, total_bits).first_bit / 8, 1, 3);
    ring[i & (kWindow - 1)] = h;
  };
  const size_t ahead = std::min(kWindow, n);
  for (size_t i = 0; i < ahead; ++i) hash_ahead(i);
  for (size_t i = 0; i < n; ++i) {
    // Read key i's hash before key i + kWindow's takes its slot.
    const uint64_t h = ring[i & (kWindow - 1)];
    if (i + kWindow < n) hash_ahead(i + kWindow);
    AddHashOne(h, total_bits, num_probes, data);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#endif  // include guard
