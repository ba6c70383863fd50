// The blocked policy's KeyMayMatch without its answer counters: the same
// per-target hash, trailer parse and in-register probe
// (blocked/key_probe-inl.h, EncodedKeyMayMatch) in a virtual KeyMayMatch
// compiled for the single probe's target, as the policy's is. Beside
// policy/blockbloom, the difference is what counting the answers costs
// where the policy counts them. Reads blocked filters only (anything else
// answers "may match"); CreateFilter is never called.
#ifndef BLOCKBLOOM_BENCH_UNCOUNTED_POLICY_H_
#define BLOCKBLOOM_BENCH_UNCOUNTED_POLICY_H_

#include "leveldb/filter_policy.h"

namespace blockbloom {
namespace bench {

const leveldb::FilterPolicy& UncountedPolicy();

}  // namespace bench
}  // namespace blockbloom

#endif  // BLOCKBLOOM_BENCH_UNCOUNTED_POLICY_H_
