// The standalone blocked filter through the installed core component alone.
#include <cstdio>
#include <string>

#include "blockbloom/blocked_bloom.h"

int main() {
  absl::StatusOr<blockbloom::BlockedBloomFilter> filter =
      blockbloom::BlockedBloomFilter::Create(1000, 10.0);
  if (!filter.ok()) {
    std::fprintf(stderr, "%s\n", std::string(filter.status().message()).c_str());
    return 1;
  }
  for (int i = 0; i < 1000; ++i) filter->AddKey("key" + std::to_string(i));
  for (int i = 0; i < 1000; ++i) {
    if (!filter->MayContain("key" + std::to_string(i))) {
      std::fprintf(stderr, "key%d missing\n", i);
      return 1;
    }
  }
  std::printf("core consumer: ok\n");
  return 0;
}
