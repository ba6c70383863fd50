// XXH3-64 inlined into the hot paths of this library (policy probes, batch
// hashing). Same function, same answers as blockbloom::HashBytes; only the
// call is gone. Internal: public headers must not include xxhash.h.
#ifndef BLOCKBLOOM_COMMON_XXH3_INLINE_H_
#define BLOCKBLOOM_COMMON_XXH3_INLINE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#define XXH_INLINE_ALL
#include <xxhash.h>
#undef XXH_INLINE_ALL

// XXH3's output is frozen from xxHash 0.8.0 on; every filter on disk depends
// on it (the configure step checks this too, cmake/xxhash_version.cmake).
static_assert(XXH_VERSION_NUMBER >= 800, "blockbloom needs xxHash >= 0.8.0 (XXH3 stable)");

namespace blockbloom {
namespace internal {

inline uint64_t InlineHashBytes(const void* data, size_t n) {
  static const char kEmpty = 0;
  return XXH3_64bits(n == 0 ? &kEmpty : data, n);
}

inline uint64_t InlineHashKey(std::string_view key) {
  return InlineHashBytes(key.data(), key.size());
}

// XXH3-64 under `seed` (XXH3_64bits_withSeed; seed 0 is InlineHashBytes).
inline uint64_t InlineHashBytesWithSeed(const void* data, size_t n, uint64_t seed) {
  static const char kEmpty = 0;
  return XXH3_64bits_withSeed(n == 0 ? &kEmpty : data, n, seed);
}

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMMON_XXH3_INLINE_H_
