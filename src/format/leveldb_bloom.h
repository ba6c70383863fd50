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

#include <cstdint>
#include <string_view>

namespace blockbloom {
namespace format {

// LevelDB's 32-bit hash (util/hash.cc, a Murmur-like mix: 4-byte
// little-endian words, then the 1-3 tail bytes taken unsigned).
uint32_t LevelDbHash(std::string_view data, uint32_t seed);

// The seed of the built-in Bloom filter's hash.
inline constexpr uint32_t kLevelDbBloomSeed = 0xbc9f1d34;

// Whether `key` may be in `filter`, a filter in LevelDB's built-in format,
// with exactly the answer of LevelDB's BloomFilterPolicy::KeyMayMatch for any
// bytes. Never reads outside `filter`.
bool LevelDbBloomMayMatch(std::string_view key, std::string_view filter);

}  // namespace format
}  // namespace blockbloom

#endif  // BLOCKBLOOM_FORMAT_LEVELDB_BLOOM_H_
