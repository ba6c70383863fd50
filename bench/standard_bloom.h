// A textbook (unblocked) Bloom filter, the benchmarks' reference point for
// what cache-line blocking buys: each of a key's k bits may land in a
// different cache line (Bloom 1970; k = round(ln2 * bits/key), the standard
// optimum). Positions come from one 64-bit hash by double hashing (Kirsch and
// Mitzenmacher, "Less Hashing, Same Performance", ESA 2006):
//   x_0 = h, x_{i+1} = x_i + (rotl(h, 21) | 1),  pos_i = floor(x_i * m / 2^64).
// Benchmark-only: no serialized form, no format promise.
//
// Thread-safety: const methods may run concurrently; Add* need exclusive access.
#ifndef BLOCKBLOOM_BENCH_STANDARD_BLOOM_H_
#define BLOCKBLOOM_BENCH_STANDARD_BLOOM_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace blockbloom {
namespace bench {

class TextbookBloomFilter {
 public:
  TextbookBloomFilter() = default;
  TextbookBloomFilter(uint64_t num_keys, double bits_per_key)
      : num_bits_(
            std::max<uint64_t>(64, static_cast<uint64_t>(std::ceil(num_keys * bits_per_key)))),
        num_probes_(
            std::clamp(static_cast<int>(std::lround(bits_per_key * 0.6931471805599453)), 1, 30)),
        words_((num_bits_ + 63) / 64, 0) {}

  int num_probes() const { return num_probes_; }
  uint64_t num_bytes() const { return words_.size() * 8; }

  void AddHash(uint64_t h) {
    uint64_t x = h;
    const uint64_t delta = Delta(h);
    for (int i = 0; i < num_probes_; ++i) {
      const uint64_t pos = Range(x);
      words_[pos >> 6] |= uint64_t{1} << (pos & 63);
      x += delta;
    }
  }

  // Adds n hashes, prefetching every probe's word one chunk ahead of use.
  void AddHashes(const uint64_t* hashes, size_t n) {
    constexpr size_t kChunk = 32;
    uint64_t pos[kChunk * 30];
    for (size_t start = 0; start < n; start += kChunk) {
      const size_t count = std::min(kChunk, n - start);
      for (size_t j = 0; j < count; ++j) {
        uint64_t x = hashes[start + j];
        const uint64_t delta = Delta(x);
        for (int i = 0; i < num_probes_; ++i) {
          pos[j * num_probes_ + i] = Range(x);
          __builtin_prefetch(&words_[pos[j * num_probes_ + i] >> 6], 1);
          x += delta;
        }
      }
      for (size_t t = 0; t < count * num_probes_; ++t) {
        words_[pos[t] >> 6] |= uint64_t{1} << (pos[t] & 63);
      }
    }
  }

  // Early exit on the first clear bit, as textbook filters (and LevelDB's) do.
  bool MayContainHash(uint64_t h) const {
    uint64_t x = h;
    const uint64_t delta = Delta(h);
    for (int i = 0; i < num_probes_; ++i) {
      const uint64_t pos = Range(x);
      if ((words_[pos >> 6] >> (pos & 63) & 1) == 0) return false;
      x += delta;
    }
    return true;
  }

  // Batch probe: the first probe's word of each key is prefetched `window`
  // keys ahead (the others are fetched on demand, as the early exit means
  // absent keys rarely need them).
  void MayContainHashes(const uint64_t* hashes, size_t n, bool* out, size_t window) const {
    for (size_t j = 0; j < std::min(window, n); ++j) Prefetch(hashes[j]);
    for (size_t j = 0; j < n; ++j) {
      if (j + window < n) Prefetch(hashes[j + window]);
      out[j] = MayContainHash(hashes[j]);
    }
  }

 private:
  static uint64_t Delta(uint64_t h) { return ((h << 21) | (h >> 43)) | 1; }
  uint64_t Range(uint64_t x) const {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(x) * num_bits_) >> 64);
  }
  void Prefetch(uint64_t h) const { __builtin_prefetch(&words_[Range(h) >> 6]); }

  uint64_t num_bits_ = 64;
  int num_probes_ = 1;
  std::vector<uint64_t> words_;
};

}  // namespace bench
}  // namespace blockbloom

#endif  // BLOCKBLOOM_BENCH_STANDARD_BLOOM_H_
