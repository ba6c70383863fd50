// Stable key hashing. Part of every on-disk format in this library.
//
// The hash of a key is XXH3-64 (xxHash 0.8 "XXH3_64bits", seed 0) of its
// bytes. XXH3's output is frozen by its specification since xxHash 0.8.0, so a
// filter written today is readable forever; the project's hash tests pin
// known answers. Never substitute absl::Hash or std::hash here: neither is stable
// across builds or processes.
//
// Thread-safety: pure functions, safe from any thread.
#ifndef BLOCKBLOOM_HASH_H_
#define BLOCKBLOOM_HASH_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace blockbloom {

// XXH3-64 of `n` bytes at `data` (seed 0). `data` may be null when n == 0.
uint64_t HashBytes(const void* data, size_t n);

inline uint64_t HashKey(std::string_view key) { return HashBytes(key.data(), key.size()); }

}  // namespace blockbloom

#endif  // BLOCKBLOOM_HASH_H_
