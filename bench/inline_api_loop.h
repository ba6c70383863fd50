// How many of hashes[0, n) may be in `filter`, through
// blockbloom/blocked_bloom_inline.h compiled for this machine's CPU.
#ifndef BLOCKBLOOM_BENCH_INLINE_API_LOOP_H_
#define BLOCKBLOOM_BENCH_INLINE_API_LOOP_H_

#include <cstddef>
#include <cstdint>

#include "blockbloom/blocked_bloom.h"

namespace blockbloom {
namespace bench {

uint64_t CountInlineApi(const BlockedBloomFilter& filter, const uint64_t* hashes, size_t n);
// The Highway target that loop was compiled for (its static target).
const char* InlineApiTarget();

}  // namespace bench
}  // namespace blockbloom

#endif  // BLOCKBLOOM_BENCH_INLINE_API_LOOP_H_
