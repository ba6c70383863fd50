// Batch operations over keys hash them in slices: bounded scratch on the
// stack, hashes still in L1 when the filter kernel reads them.
#ifndef BLOCKBLOOM_COMMON_HASH_SLICES_H_
#define BLOCKBLOOM_COMMON_HASH_SLICES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/types/span.h"
#include "common/xxh3_inline.h"

namespace blockbloom {
namespace internal {

inline constexpr size_t kHashSlice = 256;

// Calls fn(hashes, first) for consecutive slices of `keys`, where hashes[i]
// is HashKey(keys[first + i]).
template <typename Fn>
void ForEachHashSlice(absl::Span<const std::string_view> keys, Fn&& fn) {
  uint64_t hashes[kHashSlice];
  for (size_t first = 0; first < keys.size(); first += kHashSlice) {
    const size_t count = std::min(kHashSlice, keys.size() - first);
    for (size_t i = 0; i < count; ++i) hashes[i] = InlineHashKey(keys[first + i]);
    fn(absl::Span<const uint64_t>(hashes, count), first);
  }
}

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMMON_HASH_SLICES_H_
