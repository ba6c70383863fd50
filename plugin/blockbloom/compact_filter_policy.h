// LevelDB filter policies whose per-block filters are compact filters
// (blockbloom/compact_filter.h): a Golomb-Rice coded fingerprint set that at
// 10 bits/key has 0.19-0.32% FPR on LevelDB's 10..1,000-key filters. In a
// real database that is 0.0030 data-block reads per absent-key Get against
// 0.0107 for LevelDB's built-in filter at the same memory (docs/FORMAT.md,
// "Compact filter", has the measurements and commands).
//
//   #include "blockbloom/compact_filter_policy.h"
//   leveldb::Options options;
//   options.filter_policy = blockbloom::NewCompactFilterPolicy(10);
//   ... open, use and close the DB ...
//   delete options.filter_policy;  // after the DB is closed
//
// Filters are built once per ~2 KB of table data (LevelDB's kFilterBaseLg)
// and never modified, which is what a static structure needs. A filter that
// cannot be parsed (damaged, truncated, from a newer version) answers "may
// match": a damaged filter costs a disk read, never a missed key. An empty
// key set gives a filter that matches nothing.
//
// bits_per_key is clamped into [1, 64]; NaN means 10 (ClampBitsPerKey in
// blockbloom/blocked_bloom.h).
//
// Thread-safety: the returned policies are immutable; LevelDB may call them
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
// tells filters apart by their last byte:
//   <= 30        LevelDB's built-in format: answered by LevelDB's own
//                leveldb::NewBloomFilterPolicy, so exactly as stock LevelDB;
//   0xCF         a compact filter (this policy writes these);
//   0xBB         a blocked Bloom filter written by NewMigratingFilterPolicy;
//   anything else: LevelDB's own answer (it reads a last byte above 30 as
//                "may match").
// Stock LevelDB reads a last byte above 30 as "may match", so a database can
// switch to this policy and back at any time and no Get ever misses a key.
// The caller owns the result.
const leveldb::FilterPolicy* NewMigratingCompactFilterPolicy(double bits_per_key);

}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMPACT_FILTER_POLICY_H_
