// Filter statistics a LevelDB application can watch in production, in the
// spirit of RocksDB's rocksdb.bloom.filter.useful / full.positive tickers.
//
//   const leveldb::FilterPolicy* policy = blockbloom::NewBlockedBloomFilterPolicy(10);
//   ... open a DB with options.filter_policy = policy, serve Gets ...
//   blockbloom::FilterPolicyStats s = blockbloom::GetFilterPolicyStats(policy);
//   // s.negatives: data-block reads the filters avoided
//
// Every policy made by blockbloom's New*FilterPolicy functions counts, from
// its creation:
//   probes     KeyMayMatch calls (one per table a Get consults whose filter
//              LevelDB asks about);
//   negatives  of those, "no" answers: each is a data-block read avoided.
// probes - negatives are the "may match" answers: true positives (the key
// was there) plus false positives. The policy never learns whether a Get
// found its key, so the live FPR,
//   FPR = (probes - negatives - true_positives) / (probes - true_positives),
// needs the count of filter probes whose Get then found the key: FilteredDB
// (blockbloom/filtered_db.h) keeps it, or the application can (for a Get
// that reads one table, each found key is one true positive).
//
// Cost: a probe adds 1 to one counter (of its answer: "no" or "may match";
// probes are their sum) in a shard owned by the calling thread (one cache
// line per thread, up to 64 threads at a time, then a shared line with
// atomic adds), never to a line all threads write: the project's
// kernel_bench (policy/blockbloom) measures the probe with them.
//
// Thread-safety: GetFilterPolicyStats may run concurrently with any number
// of probes on any threads, and with the creation and destruction of other
// policies (tested under TSan).
// Counters are relaxed atomics: a snapshot taken during probes may miss the
// latest probes of other threads, never shows negatives > probes, and
// counts are monotonic; a snapshot taken after the probing threads are
// joined is exact.
#ifndef BLOCKBLOOM_FILTER_STATS_H_
#define BLOCKBLOOM_FILTER_STATS_H_

#include <cstdint>

#include "leveldb/filter_policy.h"

namespace blockbloom {

struct FilterPolicyStats {
  // False if the policy is not one of blockbloom's (counts are then 0).
  bool available = false;
  uint64_t probes = 0;     // KeyMayMatch calls
  uint64_t negatives = 0;  // of those, "no" answers = data-block reads avoided
};

// Counts of a policy made by blockbloom's New*FilterPolicy functions since
// its creation. `policy` may be null or any other leveldb::FilterPolicy
// (available is false then), including one from a LevelDB built without RTTI:
// blockbloom's policies are recognised by address, not by dynamic_cast.
// REQUIRES: `policy` is not being destroyed concurrently.
FilterPolicyStats GetFilterPolicyStats(const leveldb::FilterPolicy* policy);

}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTER_STATS_H_
