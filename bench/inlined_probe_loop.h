// How many of hashes[0, n) may be in a blocked filter's bits, counted by the
// CPU's best target with the single-key probe inlined into the loop (no call
// per key). REQUIRES: total_bits > 0, 1 <= num_probes <= 16.
#ifndef BLOCKBLOOM_BENCH_INLINED_PROBE_LOOP_H_
#define BLOCKBLOOM_BENCH_INLINED_PROBE_LOOP_H_

#include <cstddef>
#include <cstdint>

namespace blockbloom {
namespace bench {

uint64_t CountMayContainInlined(const uint64_t* hashes, size_t n, uint64_t total_bits,
                                int num_probes, const uint8_t* data);

}  // namespace bench
}  // namespace blockbloom

#endif  // BLOCKBLOOM_BENCH_INLINED_PROBE_LOOP_H_
