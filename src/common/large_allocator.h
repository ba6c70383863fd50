// The allocator of the filters' large arrays (the counting and d-left
// filters' tables, FilteredDB's front filter). Internal: the public headers
// name none of it (their tables are unique_ptrs whose deleter calls
// FreeLarge from the library).
//
// Arrays of 2 MiB and more are placed on 2 MiB boundaries and the kernel is
// asked to back them with transparent huge pages (madvise(MADV_HUGEPAGE);
// Linux, best effort: a refusal leaves ordinary pages). A random probe then
// needs one TLB entry per 2 MiB instead of one per 4 KiB page, and filling a
// fresh table faults once per 2 MiB: under nested paging in a VM both the
// page walks and the faults are expensive. Smaller arrays are cache-line
// aligned.
//
// Thread-safety: stateless; AllocateLarge / FreeLarge are thread-safe.
#ifndef BLOCKBLOOM_COMMON_LARGE_ALLOCATOR_H_
#define BLOCKBLOOM_COMMON_LARGE_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>

namespace blockbloom {
namespace internal {

// `bytes` of uninitialised memory as described above. Throws std::bad_alloc
// like operator new. Free with FreeLarge.
void* AllocateLarge(size_t bytes);
void FreeLarge(void* p);

// `n` value-initialised (zeroed) T from AllocateLarge: free with FreeLarge
// (T must be trivially destructible). Throws std::bad_alloc.
template <typename T>
T* NewLargeArray(size_t n) {
  static_assert(std::is_trivially_destructible<T>::value, "FreeLarge runs no destructor");
  if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
  T* p = static_cast<T*>(AllocateLarge(n * sizeof(T)));
  std::uninitialized_value_construct_n(p, n);
  return p;
}

// A std::allocator stand-in over AllocateLarge, for std::vector.
template <typename T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <typename U>
  LargeAllocator(const LargeAllocator<U>&) {}  // NOLINT: allocator rebinding
  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(AllocateLarge(n * sizeof(T)));
  }
  void deallocate(T* p, size_t) { FreeLarge(p); }
  friend bool operator==(const LargeAllocator&, const LargeAllocator&) { return true; }
  friend bool operator!=(const LargeAllocator&, const LargeAllocator&) { return false; }
};

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMMON_LARGE_ALLOCATOR_H_
