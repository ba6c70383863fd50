// Batch operations over keys hash them in slices: bounded scratch on the
// stack, hashes still in L1 when the filter kernel reads them.
#ifndef BLOCKBLOOM_COMMON_HASH_SLICES_H_
#define BLOCKBLOOM_COMMON_HASH_SLICES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/types/span.h"
#include "common/xxh3_inline.h"

namespace blockbloom {
namespace internal {

inline constexpr size_t kHashSlice = 256;

// Calls fn(hashes, first) for consecutive slices of `count` keys, where
// hashes[i] is HashKey(key_at(first + i)) and key_at(j) returns the j-th key
// as something convertible to std::string_view (the LevelDB policies pass
// leveldb::Slice arrays through it without copying them).
template <typename KeyAt, typename Fn>
void ForEachHashSlice(size_t count, KeyAt&& key_at, Fn&& fn) {
  uint64_t hashes[kHashSlice];
  for (size_t first = 0; first < count; first += kHashSlice) {
    const size_t len = std::min(kHashSlice, count - first);
    for (size_t i = 0; i < len; ++i) hashes[i] = InlineHashKey(key_at(first + i));
    fn(absl::Span<const uint64_t>(hashes, len), first);
  }
}

// The same over a span of keys.
template <typename Fn>
void ForEachHashSlice(absl::Span<const std::string_view> keys, Fn&& fn) {
  ForEachHashSlice(
      keys.size(), [&](size_t i) { return keys[i]; }, std::forward<Fn>(fn));
}

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMMON_HASH_SLICES_H_
