// LevelDB filter policies backed by blockbloom. The one entry point a LevelDB
// application needs:
//
//   #include "blockbloom/leveldb_filter_policy.h"
//   #include "leveldb/db.h"
//   leveldb::Options options;
//   options.filter_policy = blockbloom::NewBlockedBloomFilterPolicy(10);
//   ... open, use and close the DB ...
//   delete options.filter_policy;  // after the DB is closed, as with LevelDB's
//
// LevelDB calls CreateFilter once per ~2 KB of table data and KeyMayMatch on
// every Get that reaches a table. Filters use the format of docs/FORMAT.md
// (blocked Bloom): for n keys, the bits LevelDB's built-in filter would
// spend, max(n * bits_per_key, 64) in whole bytes, plus a 3-byte trailer,
// laid out flat with the best k for those bits (never a higher FPR than the
// built-in's; fewer probes where that k's FPR is below 2^-20, never fewer
// than the built-in's), in 512-bit blocks only for filters of millions of keys
// (docs/FORMAT.md, "How the LevelDB policies size a filter"). Every policy reads every blockbloom
// format (one recognizer: a blocked policy reads compact filters too; blockbloom/filter_format.h
// names them). A
// filter whose trailer this policy cannot parse (damaged, truncated, or from a newer version)
// answers "may match": that damage costs a disk read, never a missed key. Damage a 3-byte
// trailer cannot see may answer "no", as in LevelDB's own filter: a flipped bit in the filter
// bits or in a blocked filter's k (checked only for its range); a truncation that ends in another
// valid trailer (a compact version-2 marker whose 12-bit check also agrees: at most 2^-15 of
// truncations); and, for the migrating policy, which answers to LevelDB's built-in name and so
// reads a filter ending in a byte <= 30 as a built-in one as LevelDB's own policy does, a
// blockbloom filter truncated to such a byte (its k, or version 1's 0x13). LevelDB's block
// checksums (paranoid_checks, verify_checksums) catch such damage on disk. A filter under 2
// bytes matches nothing, as in LevelDB (util/bloom.cc). Probe counts:
// blockbloom/filter_stats.h.
//
// bits_per_key is clamped into [1, 64]; NaN means 10 (see blocked_bloom.h).
//
// Thread-safety: the returned policies are immutable apart from their probe
// counters (relaxed atomics, blockbloom/filter_stats.h); LevelDB may call them
// from any number of threads at once.
#ifndef BLOCKBLOOM_LEVELDB_FILTER_POLICY_H_
#define BLOCKBLOOM_LEVELDB_FILTER_POLICY_H_

#include "leveldb/filter_policy.h"

namespace blockbloom {

// Name() of the blocked policy. It changes whenever the encoding changes
// incompatibly; LevelDB then ignores old filters (reads them as absent,
// costing disk reads, never wrong answers) until compaction rewrites them.
inline constexpr char kBlockedBloomPolicyName[] = "blockbloom.BlockedBloom.v1";

// The blocked Bloom filter policy. The caller owns the result.
const leveldb::FilterPolicy* NewBlockedBloomFilterPolicy(double bits_per_key);

// For databases written with LevelDB's built-in Bloom filter. Answers to the
// built-in's name ("leveldb.BuiltinBloomFilter2") so existing tables keep
// their filters: a filter in the built-in format is answered exactly as
// leveldb::NewBloomFilterPolicy would answer it (by blockbloom's own reader
// of that format: this policy never calls LevelDB's, so it can stand in for
// it, docs/PRELOAD.md); new tables get blocked
// filters whose last byte (0xBB) is above 30, which stock LevelDB reads as
// "may match"; compact filters (NewMigratingCompactFilterPolicy) are read
// exactly too. A database can therefore switch to this policy and back to
// stock LevelDB at any time and no Get ever misses a key; tables rewritten by
// compaction get the faster, better filter. The caller owns the result.
const leveldb::FilterPolicy* NewMigratingFilterPolicy(double bits_per_key);

}  // namespace blockbloom

#endif  // BLOCKBLOOM_LEVELDB_FILTER_POLICY_H_
