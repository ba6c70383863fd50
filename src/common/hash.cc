#include "blockbloom/hash.h"

#include <xxhash.h>

namespace blockbloom {

uint64_t HashBytes(const void* data, size_t n) {
  static const char kEmpty = 0;
  return XXH3_64bits(n == 0 ? &kEmpty : data, n);
}

}  // namespace blockbloom
