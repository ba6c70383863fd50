// What every blockbloom LevelDB policy shares: one reader for every filter
// encoding (src/format/recognize.h; LevelDB's built-in format through
// src/format/leveldb_bloom.h) and the probe counters of
// blockbloom/filter_stats.h.
// A policy is then only its Name() and its CreateFilter.
//
// Thread-safety: immutable after construction except the counters, which
// are relaxed atomics (see ProbeCounters).
#ifndef BLOCKBLOOM_PLUGIN_POLICY_BASE_H_
#define BLOCKBLOOM_PLUGIN_POLICY_BASE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "blockbloom/filter_stats.h"
#include "blocked/format.h"
#include "common/thread_slot.h"
#include "common/xxh3_inline.h"
#include "format/recognize.h"
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"

namespace blockbloom {
namespace internal {

inline std::string_view View(const leveldb::Slice& s) { return {s.data(), s.size()}; }

// LevelDB's built-in policy's name (leveldb::NewBloomFilterPolicy), which the
// migrating policies answer to.
inline constexpr char kBuiltinPolicyName[] = "leveldb.BuiltinBloomFilter2";

// Per-thread shards of the answers, one cache line each, indexed by the
// calling thread's slot (common/thread_slot.h): every probe adds 1
// to its shard's count of the answer it gave ("no" or "may match"), and the
// probes are the two counts' sum. One read-modify-write per probe, and a
// snapshot can never show more negatives than probes. An owned shard is
// updated with a relaxed load and store (no locked instruction: only its
// owner writes it); the shared slot, and a thread's first probe, take
// CountSlow.
// Counting costs about a tenth of LevelDB's own probe time at 16 KiB, in
// this form or as separate counts of probes and negatives
// (scripts/kernel_ab.py OLD NEW --policy, OLD built without the counters).
class ProbeCounters {
 public:
  // Counts the answer `match` and returns it: the slow path is then a tail
  // call, and no value of the caller lives across it.
  bool Count(bool match) {
    const int slot = tls_thread_slot;
    // One unsigned test for both "no slot yet" (-1) and the shared slot.
    if (__builtin_expect(static_cast<unsigned>(slot) < kSharedThreadSlot, 1)) {
      std::atomic<uint64_t>& c = shards_[slot].answers[match ? 1 : 0];
      c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return match;
    }
    return CountSlow(match);
  }
  FilterPolicyStats Snapshot() const {
    FilterPolicyStats out;
    out.available = true;
    for (const Shard& s : shards_) {
      const uint64_t negatives = s.answers[0].load(std::memory_order_relaxed);
      const uint64_t positives = s.answers[1].load(std::memory_order_relaxed);
      out.negatives += negatives;
      out.probes += negatives + positives;
    }
    return out;
  }

 private:
  __attribute__((noinline)) bool CountSlow(bool match) {
    const unsigned slot = ThreadSlot();
    std::atomic<uint64_t>& c = shards_[slot].answers[match ? 1 : 0];
    if (slot != kSharedThreadSlot) {
      c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    } else {
      c.fetch_add(1, std::memory_order_relaxed);
    }
    return match;
  }

  struct alignas(64) Shard {
    std::atomic<uint64_t> answers[2] = {};  // [0]: "no", [1]: "may match"
  };
  Shard shards_[kThreadSlots];
};

// The base of every blockbloom policy. KeyMayMatch reads every blockbloom
// encoding: blocked filters inline (the hot path), everything else through
// format::Recognize. LevelDB's built-in format: a migrating policy
// (reads_builtin, it answers to the built-in's name) reads it with
// format::LevelDbBloomMayMatch, LevelDB's answers from blockbloom's own code
// (never leveldb::NewBloomFilterPolicy, which a preloaded blockbloom may
// replace; docs/PRELOAD.md); a policy with its own
// name is never handed one by LevelDB, so such bytes are damaged ones of
// its own and answer "may match".
class PolicyBase : public leveldb::FilterPolicy {
 public:
  explicit PolicyBase(bool reads_builtin);
  ~PolicyBase() override;

  // The hot path of every Get: a blocked filter's hash, parse and probe are
  // one call into the CPU's best target (blocked/key_probe.h), then Answer.
  // The blocked policies override it with the same code compiled for one
  // target (policy/blocked_policy.h), which saves this call.
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override;

  FilterPolicyStats stats() const { return counters_.Snapshot(); }
  // The stats of `policy` if it is a live blockbloom policy, else
  // FilterPolicyStats() (available == false). No RTTI needed: live policies
  // register themselves. REQUIRES: `policy` is not destroyed concurrently.
  static FilterPolicyStats StatsOf(const leveldb::FilterPolicy* policy);

 protected:
  // The rest of KeyMayMatch once blocked::EncodedKeyMayMatch answered
  // `blocked` (1 may match, 0 no, -1 not a blocked filter: then the other
  // encodings through format::Recognize), then the count.
  bool Answer(int blocked, const leveldb::Slice& key, const leveldb::Slice& filter) const {
    return counters_.Count(blocked >= 0 ? blocked != 0 : ReadOther(key, View(filter)));
  }

 private:
  __attribute__((noinline)) bool ReadOther(const leveldb::Slice& key,
                                           std::string_view filter) const;

  // Whether filters in LevelDB's built-in format are read (else: "may match").
  const bool reads_builtin_;
  mutable ProbeCounters counters_;
};

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_PLUGIN_POLICY_BASE_H_
