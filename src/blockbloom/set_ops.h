// Union and intersection of two Bloom filters of identical shape: the
// byte-wise OR / AND of their bits (vectorised, runtime-dispatched Highway
// kernels in simd/bitwise_simd.h). For merging filters built in parallel,
// on several machines, or per shard.
//
//   Union(A, B)        answers "may contain" for every key added to A or B:
//                      it is exactly the filter of A ∪ B built directly.
//   Intersection(A, B) answers "may contain" for every key added to both;
//                      its FPR is at most min(FPR(A), FPR(B)) and at least
//                      that of a filter built from A ∩ B directly (bits set
//                      by different keys of A and B may coincide).
//
// Shape: blocked filters need equal num_bytes, num_probes and flat() (a flat,
// format-version-2 filter from Deserialize lays its bits out differently;
// the result keeps the operands' geometry); standard ones
// equal num_bits, num_probes and scheme; partitioned ones equal slice_bits
// and num_probes. Any mismatch is InvalidArgument, and nothing is merged.
// The resulting num_added() (standard, partitioned) is a bound:
// a + b (saturating) for Union, min(a, b) for Intersection. Blocked results
// report num_added() == 0, as Deserialize does.
//
// Thread-safety: pure functions of their arguments; the arguments may be
// read concurrently by other threads but not written (tested under TSan).
#ifndef BLOCKBLOOM_SET_OPS_H_
#define BLOCKBLOOM_SET_OPS_H_

#include "absl/status/statusor.h"
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/partitioned_bloom.h"
#include "blockbloom/standard_bloom.h"

namespace blockbloom {

absl::StatusOr<BlockedBloomFilter> Union(const BlockedBloomFilter& a, const BlockedBloomFilter& b);
absl::StatusOr<BlockedBloomFilter> Intersection(const BlockedBloomFilter& a,
                                                const BlockedBloomFilter& b);

absl::StatusOr<StandardBloomFilter> Union(const StandardBloomFilter& a,
                                          const StandardBloomFilter& b);
absl::StatusOr<StandardBloomFilter> Intersection(const StandardBloomFilter& a,
                                                 const StandardBloomFilter& b);

absl::StatusOr<PartitionedBloomFilter> Union(const PartitionedBloomFilter& a,
                                             const PartitionedBloomFilter& b);
absl::StatusOr<PartitionedBloomFilter> Intersection(const PartitionedBloomFilter& a,
                                                    const PartitionedBloomFilter& b);

}  // namespace blockbloom

#endif  // BLOCKBLOOM_SET_OPS_H_
