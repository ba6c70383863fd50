#include "blockbloom/hash.h"

#include "common/xxh3_inline.h"

namespace blockbloom {

uint64_t HashBytes(const void* data, size_t n) { return internal::InlineHashBytes(data, n); }

}  // namespace blockbloom
