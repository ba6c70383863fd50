#include "common/large_allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>

namespace blockbloom {
namespace internal {

void* AllocateLarge(size_t bytes) {
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t align = bytes >= kHugePage ? kHugePage : 64;
  // aligned_alloc wants a multiple of the alignment.
  if (bytes > SIZE_MAX - align) throw std::bad_alloc();
  const size_t rounded = (std::max<size_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (align == kHugePage) (void)madvise(p, rounded, MADV_HUGEPAGE);  // a hint
#endif
  return p;
}

void FreeLarge(void* p) { std::free(p); }

}  // namespace internal
}  // namespace blockbloom
