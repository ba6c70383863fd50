// What common/large_allocator.h saves when a large table is filled, as
// FilteredDB's Open from its index file fills the d-left table: one array
// zero-filled, then overwritten, on ordinary 4 KiB pages (malloc) and through
// internal::AllocateLarge (2 MiB-aligned, MADV_HUGEPAGE), alternated.
//
//   large_alloc_fill [--mb=80] [--rounds=8]
//
// Prints the median, min and max ms of each side. Under THP "madvise" the
// huge-page side may stall now and then on the kernel's synchronous
// compaction: the max shows it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/large_allocator.h"

namespace {

double FillMs(bool huge, const std::vector<char>& src) {
  const auto t0 = std::chrono::steady_clock::now();
  char* p = static_cast<char*>(huge ? blockbloom::internal::AllocateLarge(src.size())
                                    : std::malloc(src.size()));
  if (p == nullptr) std::abort();
  std::memset(p, 0, src.size());
  std::memcpy(p, src.data(), src.size());
  asm volatile("" : : "r"(p) : "memory");  // the writes happen: no elision with the free below
  const auto t1 = std::chrono::steady_clock::now();
  if (huge) {
    blockbloom::internal::FreeLarge(p);
  } else {
    std::free(p);
  }
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  size_t mb = 80;
  int rounds = 8;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--mb=", 0) == 0) mb = std::strtoull(a.c_str() + 5, nullptr, 10);
    if (a.rfind("--rounds=", 0) == 0) rounds = std::atoi(a.c_str() + 9);
  }
  if (mb == 0 || rounds < 1) return 1;
  const std::vector<char> src(mb << 20, 7);
  std::vector<double> small, huge;
  for (int r = 0; r < rounds; ++r) {
    small.push_back(FillMs(false, src));
    huge.push_back(FillMs(true, src));
  }
  for (auto* v : {&small, &huge}) std::sort(v->begin(), v->end());
  const auto line = [&](const char* name, const std::vector<double>& v) {
    std::printf("%-28s median %7.1f ms  min %7.1f  max %7.1f\n", name, v[v.size() / 2], v.front(),
                v.back());
  };
  std::printf("%zu MB zero-fill + copy, %d alternations:\n", mb, rounds);
  line("4 KiB pages (malloc)", small);
  line("AllocateLarge (huge pages)", huge);
  return 0;
}
