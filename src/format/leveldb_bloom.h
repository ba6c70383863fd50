// A reader of LevelDB's built-in Bloom filter format, the one
// leveldb::NewBloomFilterPolicy writes (LevelDB 1.23, util/bloom.cc), written
// for blockbloom: the migrating policies answer to the built-in's name and
// read the old tables' filters with it, without creating LevelDB's own policy.
// So nothing in blockbloom calls leveldb::NewBloomFilterPolicy, and a program
// whose NewBloomFilterPolicy is blockbloom's (the preload library,
// docs/PRELOAD.md) never comes back to it.
//
// The format: m = 8 * (size - 1) bit array (bit i is bit i % 8 of byte i / 8),
// then one byte k, the number of probes. A key's probes are
//   h = LevelDbHash(key, 0xbc9f1d34),  delta = h rotated right by 17,
//   positions (h + j * delta) mod m for j in [0, k)  (32-bit sums)
// and it may match iff all k bits are set. As LevelDB reads it:
//   size < 2        no (matches nothing)
//   k > 30          may match (reserved for other encodings)
//   k == 0          may match (no probe to fail)
// It is tested answer for answer against LevelDB's own KeyMayMatch
// (tests/leveldb_bloom_test.cc), damaged filters included.
//
// Thread-safety: pure functions over caller-owned bytes.
#ifndef BLOCKBLOOM_FORMAT_LEVELDB_BLOOM_H_
#define BLOCKBLOOM_FORMAT_LEVELDB_BLOOM_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/coding.h"

namespace blockbloom {
namespace format {

// The seed of the built-in Bloom filter's hash.
inline constexpr uint32_t kLevelDbBloomSeed = 0xbc9f1d34;
// The largest k the format has: a last byte above it is another encoding.
inline constexpr unsigned kLevelDbMaxProbes = 30;

// Whether `filter` is in LevelDB's built-in format as blockbloom's readers
// tell formats apart (format::Recognize): at least 2 bytes, the last at most
// kLevelDbMaxProbes.
inline bool IsLevelDbBuiltin(std::string_view filter) {
  return filter.size() >= 2 && static_cast<uint8_t>(filter.back()) <= kLevelDbMaxProbes;
}

// LevelDB's 32-bit hash (util/hash.cc, a Murmur-like mix: 4-byte
// little-endian words, then the 1-3 tail bytes taken unsigned).
inline uint32_t LevelDbHash(std::string_view data, uint32_t seed) {
  constexpr uint32_t kMul = 0xc6a4a793;
  const size_t n = data.size();
  // The length enters modulo 2^32, as LevelDB's uint32_t arithmetic has it.
  uint32_t h = seed ^ (static_cast<uint32_t>(n) * kMul);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    h += internal::DecodeFixed32(data.data() + i);
    h *= kMul;
    h ^= h >> 16;
  }
  // The 1-3 tail bytes, unsigned, as LevelDB adds them (no loop).
  const auto byte = [&](size_t j) { return static_cast<uint32_t>(static_cast<uint8_t>(data[j])); };
  switch (n - i) {
    case 3:
      h += byte(i + 2) << 16;
      [[fallthrough]];
    case 2:
      h += byte(i + 1) << 8;
      [[fallthrough]];
    case 1:
      h += byte(i);
      h *= kMul;
      h ^= h >> 24;
      break;
    default:
      break;
  }
  return h;
}

// Whether `key` may be in `filter`, a filter in LevelDB's built-in format,
// with exactly the answer of LevelDB's BloomFilterPolicy::KeyMayMatch for any
// bytes. Never reads outside `filter`. Inline: a migrating policy reads an
// old table's filter with it on every Get; with it and the hash out of line,
// an absent key cost 1.2x LevelDB's own probe, inline 1.0x, and with the
// first probes' branch-free start below 0.56-0.58x (present keys 0.8x;
// bench/kernel_bench.cc, policy-small/migrating-on-leveldb against
// policy-small/leveldb; docs/PRELOAD.md has the figures).
inline bool LevelDbBloomMayMatch(std::string_view key, std::string_view filter) {
  const size_t size = filter.size();
  if (size < 2) return false;
  const unsigned k = static_cast<uint8_t>(filter[size - 1]);
  if (k > kLevelDbMaxProbes) return true;
  // m in 64 bits: (size - 1) * 8 in a 32-bit size_t wraps from 512 MiB (to 0
  // at 2^29 + 1 bytes: a division by zero). LevelDB reduces the 32-bit
  // position modulo m in size_t, the same remainder wherever m does not wrap.
  const uint64_t bits = (static_cast<uint64_t>(size) - 1) * 8;
  const uint32_t h = LevelDbHash(key, kLevelDbBloomSeed);
  const uint32_t delta = (h >> 17) | (h << 15);
  const auto bit = [&](size_t pos) {
    return (static_cast<uint8_t>(filter[pos / 8]) >> (pos % 8)) & 1;
  };
  // Whether probes 0..k-1 are all set, probe j at position(x), x = h + j *
  // delta (mod 2^32). The first kFirstProbes probes run without a branch
  // between them (as blocked::flat's MayContainHashEarlyOut): an absent key
  // misses one of them 15 times in 16, where a branch per probe mispredicted
  // at a random probe. Absent keys 0.57-0.58x the time of a branch per
  // probe, present keys 1.07-1.09x (scripts/kernel_ab.py OLD NEW --rows
  // policy-small/, 4 rounds, Intel Xeon model 207). One loop for both
  // remainders: 0.96-0.99x the time of a copy per remainder (6 rounds).
  const auto all_set = [&](uint32_t x, auto position) {
    constexpr unsigned kFirstProbes = 4;
    const unsigned first = k < kFirstProbes ? k : kFirstProbes;
    unsigned all = 1;
    unsigned j = 0;
    for (; j < first; ++j, x += delta) all &= bit(position(x));
    if (all == 0) return false;
    for (; j < k; ++j, x += delta) {
      if (bit(position(x)) == 0) return false;
    }
    return true;
  };
  if (bits <= UINT32_MAX) {
    // Every filter under 512 MiB: the same remainder in 32 bits (h < 2^32),
    // a shorter division than the 64-bit one.
    const uint32_t bits32 = static_cast<uint32_t>(bits);
    return all_set(h, [bits32](uint32_t v) { return v % bits32; });
  }
  // From 512 MiB every 32-bit position is below m: its own remainder.
  return all_set(h, [](uint32_t v) { return v; });
}

}  // namespace format
}  // namespace blockbloom

#endif  // BLOCKBLOOM_FORMAT_LEVELDB_BLOOM_H_
