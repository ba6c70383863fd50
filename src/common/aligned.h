// Cache-line-aligned, zeroed byte buffers owned by a unique_ptr.
#ifndef BLOCKBLOOM_COMMON_ALIGNED_H_
#define BLOCKBLOOM_COMMON_ALIGNED_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace blockbloom {
namespace internal {

struct AlignedFree {
  void operator()(uint8_t* p) const { std::free(p); }
};

// `n` zeroed bytes at a 64-byte boundary (the allocation is rounded up to
// whole 64-byte lines), or nullptr if the memory is not available.
inline std::unique_ptr<uint8_t[], AlignedFree> AlignedZeroedBytes(uint64_t n) {
  constexpr uint64_t kLine = 64;
  if (n > SIZE_MAX - kLine) return nullptr;
  const size_t padded = static_cast<size_t>((n + kLine - 1) / kLine * kLine);
  auto* raw = static_cast<uint8_t*>(std::aligned_alloc(kLine, padded == 0 ? kLine : padded));
  if (raw != nullptr) std::memset(raw, 0, padded);
  return std::unique_ptr<uint8_t[], AlignedFree>(raw);
}

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMMON_ALIGNED_H_
