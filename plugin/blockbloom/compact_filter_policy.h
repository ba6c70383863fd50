// LevelDB filter policies whose per-block filters are compact filters
// (blockbloom/compact_filter.h). For n keys a filter gets the bits LevelDB's
// built-in filter would spend, max(n * bits_per_key, 64) in whole bytes,
// plus a 3-byte trailer, and holds format version 2, a retrieval filter with
// FPR 2^-R (R the largest fingerprint that leaves the solver its spare
// slots: 2^-9 = 0.195% at 10 bits/key), or, where a Bloom filter of the same
// bytes has the lower FPR (1-3 bits/key) or an FPR below 2^-20 already (1-2
// keys per filter), a flat blocked-format Bloom filter (docs/FORMAT.md, "How
// the LevelDB policies size a filter"). Sets of more
// than 65,536 keys get version 1 (a Golomb-Rice set) where it has the lower
// FPR (from ~5 bits/key), else the Bloom filter; every version is read.
//
//   #include "blockbloom/compact_filter_policy.h"
//   leveldb::Options options;
//   options.filter_policy = blockbloom::NewCompactFilterPolicy(10);
//   ... open, use and close the DB ...
//   delete options.filter_policy;  // after the DB is closed
//
// Filters are built once per ~2 KB of table data (LevelDB's kFilterBaseLg)
// and never modified, which is what a static structure needs. Every policy
// reads every blockbloom format (blockbloom/filter_format.h). A filter that
// cannot be parsed (damaged, truncated, from a newer version) answers "may
// match" (a damaged version-2 trailer, or a truncated filter ending in a
// version-2 marker, passes its 12-bit check with probability 2^-12 only, see
// docs/FORMAT.md); under the migrating policy, which answers to LevelDB's
// built-in name, a filter truncated to a last byte <= 30 reads as a built-in
// filter, as LevelDB's own policy reads it, and may answer "no" (LevelDB's
// block checksums, paranoid_checks, catch such damage on disk). A filter
// under 2 bytes matches nothing, as in LevelDB. Probe counts:
// blockbloom/filter_stats.h.
//
// bits_per_key is clamped into [1, 64]; NaN means 10 (ClampBitsPerKey in
// blockbloom/blocked_bloom.h).
//
// Thread-safety: the returned policies are immutable apart from their probe
// counters (relaxed atomics, blockbloom/filter_stats.h); LevelDB may call them
// from any number of threads at once.
#ifndef BLOCKBLOOM_COMPACT_FILTER_POLICY_H_
#define BLOCKBLOOM_COMPACT_FILTER_POLICY_H_

#include "leveldb/filter_policy.h"

namespace blockbloom {

// Name() of the compact policy. It changes whenever the encoding changes
// incompatibly; LevelDB then ignores old filters until compaction rewrites
// them (costing reads, never wrong answers).
inline constexpr char kCompactPolicyName[] = "blockbloom.Compact.v1";

// The compact filter policy. The caller owns the result.
const leveldb::FilterPolicy* NewCompactFilterPolicy(double bits_per_key);

// For databases written with LevelDB's built-in Bloom filter (or with
// blockbloom::NewMigratingFilterPolicy). Answers to the built-in's name,
// "leveldb.BuiltinBloomFilter2", so existing tables keep their filters. It
// tells filters apart by their last byte (format::Recognize):
//   <= 30        LevelDB's built-in format: answered exactly as stock
//                LevelDB's leveldb::NewBloomFilterPolicy answers (by
//                blockbloom's own reader of that format, tested answer for
//                answer against LevelDB's);
//   0x40..0x5F, 0xCF  a compact filter (this policy writes version 2);
//   0xBB         a blocked Bloom filter written by NewMigratingFilterPolicy;
//   anything else: "may match", as LevelDB answers a last byte above 30.
// Stock LevelDB reads a last byte above 30 as "may match", so a database can
// switch to this policy and back at any time and no Get ever misses a key.
// The caller owns the result.
const leveldb::FilterPolicy* NewMigratingCompactFilterPolicy(double bits_per_key);

}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMPACT_FILTER_POLICY_H_
