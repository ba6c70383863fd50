// Deterministic key and hash generators shared by the tests.
#ifndef BLOCKBLOOM_TESTS_TEST_KEYS_H_
#define BLOCKBLOOM_TESTS_TEST_KEYS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace blockbloom {
namespace testing_keys {

// SplitMix64: a full-period, well-mixed 64-bit sequence (Steele et al. 2014).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// Keys "k<i>" padded to 16 bytes: present keys use even i, absent keys odd i,
// so the two sets never meet.
inline std::string Key(uint64_t i) {
  std::string s = "k" + std::to_string(i);
  s.resize(16, '.');
  return s;
}

// n keys of random length 0..256. Keys of 8+ bytes embed i and are distinct;
// shorter ones may repeat, which no-false-negative checks do not mind.
inline std::vector<std::string> RandomLengthKeys(size_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<std::string> keys;
  keys.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string key(reinterpret_cast<const char*>(&i), sizeof(i));
    const size_t len = rng.Next() % 257;
    if (len < key.size()) {
      // Short keys: still distinct for small i by using the low bytes.
      key.resize(len);
    } else {
      while (key.size() < len) key.push_back(static_cast<char>(rng.Next()));
    }
    keys.push_back(std::move(key));
  }
  return keys;
}

}  // namespace testing_keys
}  // namespace blockbloom

#endif  // BLOCKBLOOM_TESTS_TEST_KEYS_H_
