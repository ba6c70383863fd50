// Shared pieces of the benchmark binaries: the 16-byte key generator, the
// probe sets built from it, and the quick/full mode switch.
//
// Keys. Key(i) is 16 bytes: an 8-byte mix of i followed by i itself (both
// little-endian), so keys are distinct for distinct i and look random to any
// hash. Present keys use ids [0, n); absent keys use ids with the top bit set,
// so the two sets never meet. Keys are generated from their id on demand:
// a 1 GiB filter at 10 bits/key holds ~860M keys, which are never stored.
//
// Mode. Quick mode (CI) restricts sizes so the whole suite runs in seconds;
// it is chosen by the environment variable BLOCKBLOOM_BENCH_QUICK=1 or by a
// --quick flag, which ConsumeQuickFlag removes before Google Benchmark parses
// the command line.
//
// Thread-safety: pure functions, except ConsumeQuickFlag (call once from main).
#ifndef BLOCKBLOOM_BENCH_BENCH_COMMON_H_
#define BLOCKBLOOM_BENCH_BENCH_COMMON_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "blockbloom/hash.h"

namespace blockbloom {
namespace bench {

inline constexpr size_t kKeyBytes = 16;
inline constexpr uint64_t kAbsentBase = uint64_t{1} << 63;

// SplitMix64 (Steele, Lea, Flood 2014) at state z: its finaliser of z + the
// golden gamma, a bijection on 64 bits.
inline uint64_t SplitMix64Of(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Writes the 16 bytes of key `id` to out[0, 16).
inline void WriteKey(uint64_t id, char* out) {
  const uint64_t head = SplitMix64Of(id);
  std::memcpy(out, &head, 8);
  std::memcpy(out + 8, &id, 8);
}

inline std::string Key(uint64_t id) {
  std::string s(kKeyBytes, '\0');
  WriteKey(id, &s[0]);
  return s;
}

// Keys to probe with: ids drawn uniformly from [0, n) (present) or absent
// ids, stored with their hashes and views so the timed loops only probe.
struct ProbeSet {
  std::vector<char> bytes;
  std::vector<uint64_t> hashes;
  std::vector<std::string_view> views;
  size_t size() const { return hashes.size(); }
  const char* key(size_t i) const { return bytes.data() + i * kKeyBytes; }
};

inline ProbeSet MakeProbeSet(uint64_t n, bool present, size_t count, uint64_t seed) {
  ProbeSet ps;
  ps.bytes.resize(count * kKeyBytes);
  ps.hashes.resize(count);
  ps.views.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = SplitMix64Of(seed * 0x100000001B3ull + i);
    const uint64_t id = present
                            ? static_cast<uint64_t>((static_cast<unsigned __int128>(r) * n) >> 64)
                            : kAbsentBase + seed * (uint64_t{1} << 40) + i;
    char* k = ps.bytes.data() + i * kKeyBytes;
    WriteKey(id, k);
    ps.hashes[i] = HashKey(std::string_view(k, kKeyBytes));
    ps.views[i] = std::string_view(k, kKeyBytes);
  }
  return ps;
}

// Keys needed for a filter of `filter_bytes` bytes at `bits_per_key`.
inline uint64_t KeysForBytes(uint64_t filter_bytes, double bits_per_key) {
  return static_cast<uint64_t>(static_cast<double>(filter_bytes) * 8.0 / bits_per_key);
}

// Removes "--quick" from argv (if present) and reports whether quick mode is
// on, by flag or by BLOCKBLOOM_BENCH_QUICK=1.
inline bool ConsumeQuickFlag(int* argc, char** argv) {
  bool quick = false;
  int out = 0;
  for (int i = 0; i < *argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  const char* env = std::getenv("BLOCKBLOOM_BENCH_QUICK");
  if (env != nullptr && env[0] != '\0' && env[0] != '0') quick = true;
  return quick;
}

}  // namespace bench
}  // namespace blockbloom

#endif  // BLOCKBLOOM_BENCH_BENCH_COMMON_H_
