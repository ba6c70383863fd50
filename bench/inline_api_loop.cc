// blockbloom/blocked_bloom_inline.h as a user compiles it: this file is built
// with -march=native (bench/CMakeLists.txt), so the probe is compiled for this
// CPU's static target and inlined into the loop (hash/inline-api in
// kernel_bench; the generic-build fallback if the compiler lacks the flag).
#include "inline_api_loop.h"

#include "blockbloom/blocked_bloom_inline.h"

namespace blockbloom {
namespace bench {

uint64_t CountInlineApi(const BlockedBloomFilter& filter, const uint64_t* hashes, size_t n) {
  uint64_t c = 0;
  for (size_t i = 0; i < n; ++i) c += InlineMayContainHash(filter, hashes[i]);
  return c;
}

const char* InlineApiTarget() { return hwy::TargetName(kInlineProbeTarget); }

}  // namespace bench
}  // namespace blockbloom
