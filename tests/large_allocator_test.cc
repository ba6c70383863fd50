// common/large_allocator.h: the arrays behind the counting, d-left and
// FilteredDB front filters.
#include "common/large_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "blockbloom/dleft_counting_bloom.h"

namespace blockbloom {
namespace {

struct Freer {
  void operator()(void* p) const { internal::FreeLarge(p); }
};

// The VmFlags line of the mapping of /proc/self/smaps that holds `p`, or ""
// when it cannot be read (not Linux, no procfs).
std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(LargeAllocatorTest, SmallArraysAreLineAligned) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{64}, size_t{1000}, (size_t{2} << 20) - 1}) {
    std::unique_ptr<void, Freer> p(internal::AllocateLarge(bytes));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % 64, 0u) << bytes;
  }
}

// Arrays of 2 MiB and more start on a 2 MiB boundary and their mapping
// carries the MADV_HUGEPAGE hint ("hg" in VmFlags): the kernel may back
// them with huge pages (whether it does depends on the system's THP setting
// and free memory, so that is not asserted).
TEST(LargeAllocatorTest, LargeArraysAreHugePageAlignedAndAdvised) {
  for (size_t bytes : {size_t{2} << 20, (size_t{4} << 20) + 12345}) {
    std::unique_ptr<void, Freer> p(internal::AllocateLarge(bytes));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % (size_t{2} << 20), 0u) << bytes;
    std::memset(p.get(), 1, bytes);  // writable, all of it
    const std::string flags = VmFlagsOf(p.get());
    if (flags.empty()) GTEST_SKIP() << "no /proc/self/smaps";
#ifdef __linux__
    EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
#endif
  }
}

TEST(LargeAllocatorTest, ImpossibleSizesThrowBadAlloc) {
  EXPECT_THROW(internal::AllocateLarge(SIZE_MAX), std::bad_alloc);
  EXPECT_THROW(internal::AllocateLarge(SIZE_MAX - 100), std::bad_alloc);
  internal::LargeAllocator<uint64_t> a;
  EXPECT_THROW(a.allocate(SIZE_MAX / 4), std::bad_alloc);
}

// A d-left filter's 4 MiB table is one such array: the filter works on it.
TEST(LargeAllocatorTest, DleftTableOfSeveralHugePages) {
  auto made = DleftCountingBloomFilter::CreateWithGeometry(16);  // 4 * 2^16 * 16 B = 4 MiB
  ASSERT_TRUE(made.ok()) << made.status();
  DleftCountingBloomFilter& f = **made;
  ASSERT_GE(f.memory_bytes(), uint64_t{4} << 20);
  for (uint64_t h = 1; h <= 1000; ++h) ASSERT_TRUE(f.InsertHash(h * 0x9E3779B97F4A7C15ull).ok());
  for (uint64_t h = 1; h <= 1000; ++h) ASSERT_TRUE(f.MayContainHash(h * 0x9E3779B97F4A7C15ull));
}

}  // namespace
}  // namespace blockbloom
