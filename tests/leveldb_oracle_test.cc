// Every filter policy inside real LevelDB databases, against a std::map
// oracle: the promise that no Get ever misses a key, whatever sequence of
// policies and LevelDB options a database is opened with over its life.
//
// One run (OracleRun) drives one database through sessions. Each session
// opens it with a policy drawn from every way a user can set
// options.filter_policy (none; LevelDB's built-in; blockbloom's blocked,
// compact and both migrating policies, from C++ and through blockbloom/c.h;
// LevelDB's built-in through leveldb/c.h) at a random bits_per_key, and with
// random LevelDB options (block_size from below LevelDB's 1 KiB floor to its
// 4 MiB ceiling, restart interval, compression, paranoid_checks,
// write_buffer_size and max_file_size down to their floors so there are many
// tables and compactions, reuse_logs, table and block cache sizes). It then
// applies random Puts, Deletes and WriteBatches (keys from empty to 64 KiB,
// a few hot keys rewritten many times, a snapshot held now and then so old
// versions survive compaction), Gets (at the snapshot too) and CompactRanges,
// and checks every key against the oracle at the end of the session and
// after reopening. Between sessions the filters of the tables may be damaged
// the ways the formats promise read as "may match" (docs/FORMAT.md: an
// unknown last byte, version or k, a reserved bit).
//
// That the filters are used, not silently skipped: whenever every table
// holds filters under the current policy's Name() (after a full CompactRange,
// and after reopening such a database with a policy of that name, whichever
// object or API wrote them), Gets of keys never written must be probed
// (GetFilterPolicyStats' probes grow) and mostly ruled out (its negatives).
//
// Deterministic: a run's operations, policies and options are a function of
// its seed (SplitMix64) and the SIMD targets compiled; which tables hold them
// depends on the timing of LevelDB's background compactions. CI runs three
// short runs on LevelDB's in-memory Env (leveldb::NewMemEnv, shipped in
// Debian's libleveldb; shorter still under sanitizers): about 0.6 s in the
// g++ build, 2 s under ASan. BLOCKBLOOM_ORACLE_SOAK=<seconds> runs seed
// after seed (from BLOCKBLOOM_ORACLE_SEED, default 1000) for that long,
// larger runs, half of them on disk (where FilteredDB sessions save and
// reload their index); a failure prints its seed, which
// BLOCKBLOOM_ORACLE_SEED=<seed> BLOCKBLOOM_ORACLE_SOAK=1 replays first, and
// BLOCKBLOOM_ORACLE_VERBOSE=1 prints every run's history.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "blockbloom/c.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/filter_stats.h"
#include "blockbloom/filtered_db.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "leveldb/c.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/env.h"
#include "leveldb/filter_policy.h"
#include "leveldb/helpers/memenv.h"
#include "leveldb/options.h"
#include "leveldb/write_batch.h"
#include "sanitizers.h"
#include "targets.h"
#include "test_keys.h"
#include "test_paths.h"

namespace blockbloom {
namespace {

using testing_keys::SplitMix64;

// ---- Policies, as a user sets them ----

enum class PolicyKind {
  kNone,
  kBuiltin,            // leveldb::NewBloomFilterPolicy
  kBlocked,            // NewBlockedBloomFilterPolicy
  kMigrating,          // NewMigratingFilterPolicy
  kCompact,            // NewCompactFilterPolicy
  kMigratingCompact,   // NewMigratingCompactFilterPolicy
  kCBuiltin,           // leveldb_filterpolicy_create_bloom
  kCBlocked,           // blockbloom_filterpolicy_create_blocked
  kCCompact,           // blockbloom_filterpolicy_create_compact
  kCMigrating,         // blockbloom_filterpolicy_create_migrating_blocked
  kCMigratingCompact,  // blockbloom_filterpolicy_create_migrating_compact
  kCount
};

const char* KindName(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::kNone:
      return "none";
    case PolicyKind::kBuiltin:
      return "builtin";
    case PolicyKind::kBlocked:
      return "blocked";
    case PolicyKind::kMigrating:
      return "migrating";
    case PolicyKind::kCompact:
      return "compact";
    case PolicyKind::kMigratingCompact:
      return "migrating-compact";
    case PolicyKind::kCBuiltin:
      return "C builtin";
    case PolicyKind::kCBlocked:
      return "C blocked";
    case PolicyKind::kCCompact:
      return "C compact";
    case PolicyKind::kCMigrating:
      return "C migrating";
    case PolicyKind::kCMigratingCompact:
      return "C migrating-compact";
    case PolicyKind::kCount:
      break;
  }
  return "?";
}

// The filter block name each kind must read and write under (LevelDB uses a
// table's filter only under the current policy's Name()): the C policies
// share their C++ counterparts' names, the migrating ones the built-in's.
const char* DocumentedName(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::kNone:
      return "";
    case PolicyKind::kBlocked:
    case PolicyKind::kCBlocked:
      return "blockbloom.BlockedBloom.v1";
    case PolicyKind::kCompact:
    case PolicyKind::kCCompact:
      return "blockbloom.Compact.v1";
    default:
      return "leveldb.BuiltinBloomFilter2";
  }
}

// What LevelDB's built-in policy (which takes an int) is given for a
// bits_per_key drawn for every policy.
int BuiltinBits(double bits_per_key) {
  if (!(bits_per_key >= 0)) return 10;  // NaN, negative
  return static_cast<int>(std::min(bits_per_key, 100.0));
}

// One policy object for one session; destroyed after the DB is closed, as
// LevelDB requires.
//
// The C policies are handed to the C++ DB as the leveldb::FilterPolicy they
// are: LevelDB's db/c.cc defines leveldb_filterpolicy_t as a struct whose one
// base is leveldb::FilterPolicy (every release since 2011), so the handle's
// address is that base's. Through it LevelDB calls c.cc's adapter, which
// calls blockbloom's C callbacks (plugin/c/c_api.cc): the path a C program's
// database takes.
class SessionPolicy {
 public:
  SessionPolicy(PolicyKind kind, double bits_per_key) : kind_(kind), bits_per_key_(bits_per_key) {
    switch (kind) {
      case PolicyKind::kNone:
        break;
      case PolicyKind::kBuiltin:
        cxx_.reset(leveldb::NewBloomFilterPolicy(BuiltinBits(bits_per_key)));
        break;
      case PolicyKind::kBlocked:
        cxx_.reset(NewBlockedBloomFilterPolicy(bits_per_key));
        break;
      case PolicyKind::kMigrating:
        cxx_.reset(NewMigratingFilterPolicy(bits_per_key));
        break;
      case PolicyKind::kCompact:
        cxx_.reset(NewCompactFilterPolicy(bits_per_key));
        break;
      case PolicyKind::kMigratingCompact:
        cxx_.reset(NewMigratingCompactFilterPolicy(bits_per_key));
        break;
      case PolicyKind::kCBuiltin:
        c_ = leveldb_filterpolicy_create_bloom(BuiltinBits(bits_per_key));
        break;
      case PolicyKind::kCBlocked:
        c_ = blockbloom_filterpolicy_create_blocked(bits_per_key);
        break;
      case PolicyKind::kCCompact:
        c_ = blockbloom_filterpolicy_create_compact(bits_per_key);
        break;
      case PolicyKind::kCMigrating:
        c_ = blockbloom_filterpolicy_create_migrating_blocked(bits_per_key);
        break;
      case PolicyKind::kCMigratingCompact:
        c_ = blockbloom_filterpolicy_create_migrating_compact(bits_per_key);
        break;
      case PolicyKind::kCount:
        break;
    }
  }
  ~SessionPolicy() {
    if (c_ != nullptr) leveldb_filterpolicy_destroy(c_);
  }
  SessionPolicy(const SessionPolicy&) = delete;
  SessionPolicy& operator=(const SessionPolicy&) = delete;

  const leveldb::FilterPolicy* get() const {
    if (c_ != nullptr) return reinterpret_cast<const leveldb::FilterPolicy*>(c_);
    return cxx_.get();
  }
  // The filter block name LevelDB reads and writes ("" without a policy).
  std::string name() const { return get() == nullptr ? "" : get()->Name(); }
  bool is_c() const { return c_ != nullptr; }
  // The bits per key the filters get: LevelDB's policies take an int;
  // blockbloom's clamp into [1, 64], NaN meaning 10.
  double bits_per_key() const {
    if (kind_ == PolicyKind::kBuiltin || kind_ == PolicyKind::kCBuiltin) {
      return BuiltinBits(bits_per_key_);
    }
    if (std::isnan(bits_per_key_)) return 10;
    return std::clamp(bits_per_key_, 1.0, 64.0);
  }

  // blockbloom's counters (available == false for LevelDB's own policies).
  FilterPolicyStats stats() const {
    FilterPolicyStats s;
    if (c_ != nullptr) {
      s.available = blockbloom_filterpolicy_stats(c_, &s.probes, &s.negatives) != 0;
      return s;
    }
    return GetFilterPolicyStats(cxx_.get());
  }
  bool counted() const { return stats().available; }

  std::string Describe() const {
    std::ostringstream out;
    out << KindName(kind_);
    if (get() != nullptr) out << "(" << bits_per_key_ << ")";
    return out.str();
  }

 private:
  PolicyKind kind_;
  double bits_per_key_;
  std::unique_ptr<const leveldb::FilterPolicy> cxx_;
  leveldb_filterpolicy_t* c_ = nullptr;
};

// ---- The filter blocks of a table file, for damage between sessions ----

bool GetVarint64(std::string_view* in, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    v |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

uint32_t Fixed32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}

// The [begin, end) offsets in `table` of the filter block's contents, from
// the footer and an uncompressed metaindex block (LevelDB's
// doc/table_format.md); nullopt when the table has no filter block or its
// metaindex is compressed.
std::optional<std::pair<size_t, size_t>> FindFilterBlock(const std::string& table) {
  constexpr size_t kFooter = 48;
  if (table.size() < kFooter) return std::nullopt;
  std::string_view footer(table.data() + table.size() - kFooter, kFooter);
  uint64_t meta_offset = 0, meta_size = 0;
  if (!GetVarint64(&footer, &meta_offset) || !GetVarint64(&footer, &meta_size)) return std::nullopt;
  if (meta_offset + meta_size + 5 > table.size() || meta_size < 4) return std::nullopt;
  if (table[meta_offset + meta_size] != 0) return std::nullopt;  // compressed
  const std::string block = table.substr(meta_offset, meta_size);
  const uint32_t restarts = Fixed32(block, block.size() - 4);
  if (4 + 4 * static_cast<uint64_t>(restarts) > block.size()) return std::nullopt;
  std::string_view entries(block.data(), block.size() - 4 - 4 * restarts);
  std::string key;
  while (!entries.empty()) {
    uint64_t shared = 0, non_shared = 0, value_size = 0;
    if (!GetVarint64(&entries, &shared) || !GetVarint64(&entries, &non_shared) ||
        !GetVarint64(&entries, &value_size) || shared > key.size() ||
        non_shared + value_size > entries.size()) {
      return std::nullopt;
    }
    key.resize(shared);
    key.append(entries.data(), non_shared);
    std::string_view value(entries.data() + non_shared, value_size);
    entries.remove_prefix(non_shared + value_size);
    if (key.rfind("filter.", 0) != 0) continue;
    uint64_t offset = 0, size = 0;
    if (!GetVarint64(&value, &offset) || !GetVarint64(&value, &size)) return std::nullopt;
    if (offset + size > table.size()) return std::nullopt;
    return std::make_pair(static_cast<size_t>(offset), static_cast<size_t>(offset + size));
  }
  return std::nullopt;
}

// Damages the trailer of filters in the filter block [begin, end) of
// `table` in ways docs/FORMAT.md promises every reader (blockbloom's,
// LevelDB's) answers "may match": a last byte no format claims (LevelDB's
// k = 0, a "future" k above 30, bytes outside every blockbloom marker), or,
// for a blocked filter, a version byte, k or reserved bit no version has.
// Returns the number of filters damaged. (Damage inside the bits can hide a
// key; LevelDB's block CRC, checked with paranoid_checks, is what guards
// those: docs/FORMAT.md, "Integrity".)
int DamageFilters(std::string* table, size_t begin, size_t end, SplitMix64* rng) {
  const size_t n = end - begin;
  if (n < 5) return 0;
  const uint32_t array = Fixed32(*table, end - 5);
  if (array > n - 5) return 0;
  const size_t num = (n - 5 - array) / 4;
  int damaged = 0;
  for (size_t i = 0; i < num; ++i) {
    const uint32_t start = Fixed32(*table, begin + array + 4 * i);
    const uint32_t limit = Fixed32(*table, begin + array + 4 * i + 4);
    if (start > limit || limit > array || limit - start < 3) continue;
    if (rng->Next() % 2 != 0) continue;
    char* f = &(*table)[begin + start];
    const size_t size = limit - start;
    const bool blocked = static_cast<uint8_t>(f[size - 1]) == 0xBB;
    switch (blocked ? rng->Next() % 4 : 0) {
      case 0: {
        static constexpr uint8_t kUnknownLast[] = {0x00, 0x1F, 0x3F, 0x60, 0x7F, 0xBC, 0xCE, 0xFF};
        f[size - 1] = static_cast<char>(kUnknownLast[rng->Next() % sizeof(kUnknownLast)]);
        break;
      }
      case 1: {  // version:4 geometry:4 other than 0x13 (v1) and 0x20 (v2 flat)
        static constexpr uint8_t kUnknownVersion[] = {0x00, 0x12, 0x14, 0x21, 0x33, 0xF3};
        f[size - 2] = static_cast<char>(kUnknownVersion[rng->Next() % sizeof(kUnknownVersion)]);
        break;
      }
      case 2:  // k outside 1..16, reserved bits clear
        f[size - 3] = static_cast<char>(rng->Next() % 2 == 0 ? 0 : 17 + rng->Next() % 15);
        break;
      default:  // a reserved bit
        f[size - 3] = static_cast<char>(f[size - 3] | (0x20 << (rng->Next() % 3)));
        break;
    }
    ++damaged;
  }
  return damaged;
}

// ---- The run ----

struct RunConfig {
  uint64_t seed = 1;
  int sessions = 6;
  int ops_per_session = 600;
  int universe = 500;     // distinct keys (about 2/3 ever written)
  bool on_disk = false;   // else leveldb::NewMemEnv
  bool huge = false;      // 10-64 KiB keys and up to 256 KiB values
  int bulk_max = 2000;    // keys of one bulk load (small keys and values)
  int bulk_total = 3000;  // keys of all bulk loads of the run
  // 4 MiB blocks, 64 MiB tables and bulk loads of bulk_max keys: filters of
  // 100,000+ keys (blocked filters over 1 MiB, compact version 1).
  bool big_filters = false;
};

class OracleRun {
 public:
  explicit OracleRun(const RunConfig& config) : config_(config), rng_(config.seed) {}

  // "" on success, else what went wrong and the run's history.
  std::string Run() {
    if (config_.on_disk) {
      path_ = TestPath("db-" + std::to_string(config_.seed));
      env_ = leveldb::Env::Default();
    } else {
      mem_env_.reset(leveldb::NewMemEnv(leveldb::Env::Default()));
      env_ = mem_env_.get();
      path_ = "/oracle-db";
    }
    MakeKeys();
    for (session_ = 0; session_ < config_.sessions && error_.empty(); ++session_) {
      // Damage now and then, and before the last session if not yet (which
      // tables exist then depends on LevelDB's background compactions).
      const bool last = session_ + 1 == config_.sessions;
      if (session_ > 0 && (Below(4) == 0 || (last && damaged_ == 0))) DamageTables(last);
      if (!error_.empty()) break;
      Open();
      if (error_.empty()) Session();
      Close();
    }
    if (error_.empty()) {
      // Last, every policy reads the final database once more.
      for (int k = 0; k < static_cast<int>(PolicyKind::kCount) && error_.empty(); ++k) {
        OpenWith(static_cast<PolicyKind>(k), 10, /*random_options=*/false);
        if (error_.empty()) VerifyAll("final read");
        Close();
      }
    }
    simd::ForceTargetForTesting(0);
    leveldb::Options destroy;
    destroy.env = env_;
    DestroyFilteredDB(path_, destroy);  // LevelDB's files and the index's
    if (error_.empty()) return "";
    return "seed " + std::to_string(config_.seed) + ": " + error_ + "\nhistory:\n" + history_;
  }

  uint64_t ops() const { return ops_; }
  const std::string& history() const { return history_; }
  uint64_t damaged_filters() const { return damaged_; }
  uint64_t filter_checks() const { return filter_checks_; }

 private:
  bool Check(bool ok, const std::string& what) {
    if (!ok && error_.empty()) {
      error_ = "session " + std::to_string(session_) + ", op " + std::to_string(op_) + ": " + what;
    }
    return ok;
  }

  // ---- keys and values ----

  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_.Next() % n; }

  std::string RandomBytes(size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng_.Next());
    return s;
  }

  void MakeKeys() {
    std::set<std::string> seen;
    const std::string long_prefix = RandomBytes(4000);
    auto add = [&](std::string key, bool written) {
      if (!seen.insert(key).second) return;
      (written ? written_ : never_).push_back(std::move(key));
    };
    // The edge keys: the empty key, one byte at either end; both sets get
    // short keys.
    add("", true);
    add(std::string(1, '\0'), true);
    add(std::string(1, '\xff'), false);
    add(std::string(2, '\0'), false);
    int huge_keys = 0;
    while (static_cast<int>(seen.size()) < config_.universe) {
      const uint64_t id = rng_.Next();
      const uint64_t shape = Below(100);
      std::string key;
      if (shape < 4) {
        key = RandomBytes(1 + Below(3));
      } else if (shape < 44) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "user%012llu",
                      static_cast<unsigned long long>(id % 1000000000000ull));
        key = buf;
      } else if (shape < 64) {
        for (int i = 7; i >= 0; --i) key.push_back(static_cast<char>(id >> (8 * i)));
      } else if (shape < 84) {
        key = long_prefix.substr(0, 8 + Below(200)) + std::to_string(id);
      } else if (shape < 98 || !config_.huge || huge_keys >= 6) {
        key = long_prefix.substr(0, 300 + Below(3700)) + std::to_string(id);
      } else {
        ++huge_keys;
        key = RandomBytes(10000 + Below(55000));
      }
      add(std::move(key), Below(3) != 0);
    }
    std::sort(written_.begin(), written_.end());
    std::sort(never_.begin(), never_.end());
    universe_written_ = written_.size();
    universe_never_ = never_.size();
    lowest_ = std::min(written_.front(), never_.front());
    highest_ = std::max(written_.back(), never_.back());
    for (int i = 0; i < 8 && i < static_cast<int>(written_.size()); ++i) {
      hot_.push_back(written_[Below(written_.size())]);
    }
  }

  const std::string& AnyWritten() {
    if (Below(10) < 3) return hot_[Below(hot_.size())];
    return written_[Below(written_.size())];
  }

  std::string Value() {
    const uint64_t shape = Below(100);
    size_t n;
    if (shape < 5) {
      n = 0;
    } else if (shape < 45) {
      n = 1 + Below(50);
    } else if (shape < 90) {
      n = 50 + Below(350);
    } else if (shape < 99 || !config_.huge) {
      n = 1000 + Below(7000);
    } else {
      n = 32768 + Below(230000);
    }
    // Half compressible (for snappy), half not.
    if (Below(2) == 0) return std::string(n, static_cast<char>('a' + Below(26)));
    return RandomBytes(n);
  }

  // ---- sessions ----

  void Open() {
    const PolicyKind kind =
        static_cast<PolicyKind>(Below(static_cast<uint64_t>(PolicyKind::kCount)));
    // Out-of-range values too: blockbloom clamps them (NaN means 10).
    static constexpr double kBitsPerKey[] = {1,  2,  3.5,  6,   10,  10, 10,
                                             16, 64, 23.7, 0.5, 100, -3, NAN};
    OpenWith(kind, kBitsPerKey[Below(sizeof(kBitsPerKey) / sizeof(kBitsPerKey[0]))], true);
  }

  void OpenWith(PolicyKind kind, double bits_per_key, bool random_options) {
    // The policy is compiled for the CPU's best SIMD target when created
    // (policy/blocked_policy.h); a database copied to another machine is
    // read with another target's code. Every target writes the same bytes
    // (docs/FORMAT.md), so each session may use any this CPU supports.
    simd::ForceTargetForTesting(0);  // SupportedTargets() honours a forced target
    const std::vector<int64_t> targets = simd::SupportedTargets();
    if (random_options) simd::ForceTargetForTesting(targets[Below(targets.size())]);
    policy_ = std::make_unique<SessionPolicy>(kind, bits_per_key);
    leveldb::Options options;
    options.env = env_;
    options.create_if_missing = true;
    options.filter_policy = policy_->get();
    block_cache_.reset();
    std::ostringstream desc;
    desc << "open " << policy_->Describe() << " target=" << simd::ActiveTargetName();
    if (random_options) {
      // Values below LevelDB's floors are clipped to them (db_impl.cc,
      // SanitizeOptions): block_size >= 1 KiB, write_buffer_size >= 64 KiB,
      // max_file_size >= 1 MiB, max_open_files >= 74.
      static constexpr size_t kBlockSizes[] = {1, 1024, 2048, 4096, 16384, 65536, 1 << 20, 4 << 20};
      options.block_size = kBlockSizes[Below(sizeof(kBlockSizes) / sizeof(kBlockSizes[0]))];
      static constexpr int kRestarts[] = {1, 2, 16, 64};
      options.block_restart_interval = kRestarts[Below(4)];
      options.compression = Below(2) == 0 ? leveldb::kNoCompression : leveldb::kSnappyCompression;
      options.paranoid_checks = Below(2) == 0;
      static constexpr size_t kBuffers[] = {1, 64 << 10, 128 << 10, 1 << 20, 4 << 20};
      options.write_buffer_size = kBuffers[Below(Below(2) == 0 ? 2 : 5)];
      // Up to 64 MiB tables: with 4 MiB blocks, one filter then holds a
      // whole block of a bulk load (filters over 1 MiB take their own build
      // path, blocked/format.h kAlignedBuildMinBytes).
      static constexpr size_t kFileSizes[] = {1, 1, 2 << 20, 64 << 20};
      options.max_file_size = kFileSizes[Below(4)];
      if (config_.big_filters) {
        options.block_size = 4 << 20;
        options.write_buffer_size = 4 << 20;
        options.max_file_size = 64 << 20;
      }
      options.reuse_logs = Below(2) == 0;
      options.max_open_files = Below(3) == 0 ? 0 : 1000;
      switch (options.block_size >= (1 << 20) ? 3 : Below(3)) {
        case 0:
          break;  // LevelDB's own 8 MiB cache
        case 3:
          // A cache that holds megabyte blocks (each of LevelDB's 16 shards
          // gets 1/16 of it): without one every Get of a present key
          // re-reads and checks a block of up to 4 MiB, and runs with bulk
          // loads take hours.
          block_cache_.reset(leveldb::NewLRUCache(256 << 20));
          break;
        case 1:
          block_cache_.reset(leveldb::NewLRUCache(0));
          break;
        default:
          block_cache_.reset(leveldb::NewLRUCache(16 << 10));
          break;
      }
      options.block_cache = block_cache_.get();
      desc << " block_size=" << options.block_size << " restart=" << options.block_restart_interval
           << " snappy=" << (options.compression == leveldb::kSnappyCompression)
           << " paranoid=" << options.paranoid_checks << " buffer=" << options.write_buffer_size
           << " file=" << options.max_file_size << " reuse_logs=" << options.reuse_logs
           << " open_files=" << options.max_open_files << " cache="
           << (block_cache_ == nullptr ? "default" : std::to_string(block_cache_->TotalCharge()));
    }
    history_ += desc.str() + "\n";
    if (!Check(policy_->name() == DocumentedName(kind), "policy named " + policy_->name())) return;
    // A quarter of the sessions open the database as a FilteredDB (a
    // leveldb::DB in front of the same files, whose key index answers
    // absent Gets first; on disk it saves the index at close and reloads it
    // only when the directory is provably unchanged since): switching
    // between it and plain LevelDB is one more way a database lives.
    // After a FilteredDB session that saved its index, half the time
    // another, which may load it.
    filtered_ = random_options && (Below(4) == 0 || (index_saved_ && Below(2) == 0));
    index_saved_ = false;
    leveldb::DB* db = nullptr;
    leveldb::Status s;
    if (filtered_) {
      FilteredDBOptions fdb;
      fdb.expected_keys = 1 + Below(2000);  // small: the index grows
      fdb.kind = Below(2) == 0 ? IndexKind::kDleft : IndexKind::kCounting;
      fdb.target_fpr = Below(2) == 0 ? 0.01 : 0.2;
      fdb.persist_index = Below(4) != 0;
      index_saved_ = fdb.persist_index && config_.on_disk;
      history_ += "  as FilteredDB: expected_keys=" + std::to_string(fdb.expected_keys) +
                  (fdb.kind == IndexKind::kDleft ? " d-left" : " counting") +
                  " persist=" + std::to_string(fdb.persist_index) + "\n";
      s = OpenFilteredDB(fdb, options, path_, &db);
    } else {
      s = leveldb::DB::Open(options, path_, &db);
    }
    if (!Check(s.ok(), "open: " + s.ToString())) return;
    db_.reset(db);
    std::string stats;
    if (filtered_ && db_->GetProperty("blockbloom.stats", &stats)) {
      const size_t at = stats.find("opened-from: ");
      if (at != std::string::npos) {
        history_ += "  " + stats.substr(at, stats.find('\n', at) - at) + "\n";
      }
    }
    // Recovery writes a table only from a non-empty log: a database left
    // with every table under one name keeps it.
    if (uniform_name_.has_value() && *uniform_name_ == policy_->name()) {
      CheckFiltersUsed("after reopen");
    }
  }

  void Close() {
    if (snapshot_ != nullptr) {
      db_->ReleaseSnapshot(snapshot_);
      snapshot_ = nullptr;
    }
    db_.reset();
    policy_.reset();  // after the database, as LevelDB requires
    block_cache_.reset();
  }

  void Session() {
    // Half the sessions start with a bulk load, so big data blocks of
    // small keys (and so filters over 512 bytes, blocked version 1) are
    // written under every policy.
    if (Below(2) == 0) Bulk();
    for (op_ = 0; op_ < config_.ops_per_session && error_.empty(); ++op_) {
      ++ops_;
      const uint64_t r = Below(1000);
      if (r < 420) {
        Put(AnyWritten(), Value());
      } else if (r < 540) {
        Delete(Below(5) == 0 ? never_[Below(never_.size())] : AnyWritten());
      } else if (r < 640) {
        WriteBatch();
      } else if (r < 880) {
        const bool absent = Below(4) == 0;
        Get(absent ? never_[Below(never_.size())] : AnyWritten());
      } else if (r < 890) {
        CompactRange();
      } else if (r < 910) {
        if (snapshot_ == nullptr) {
          snapshot_ = db_->GetSnapshot();
          snapshot_undo_.clear();
        } else {
          db_->ReleaseSnapshot(snapshot_);
          snapshot_ = nullptr;
        }
      } else if (r < 960) {
        if (snapshot_ != nullptr) GetAtSnapshot(AnyWritten());
      } else if (r < 962) {
        FullCompaction();
      } else if (r < 963) {
        Bulk();
      } else {
        Get(AnyWritten());
      }
    }
    if (!error_.empty()) return;
    if (Below(2) == 0) FullCompaction();
    VerifyAll("end of session");
  }

  void Put(const std::string& key, const std::string& value) {
    const leveldb::Status s = db_->Put(leveldb::WriteOptions(), key, value);
    if (!Check(s.ok(), "put: " + s.ToString())) return;
    Record(key, value);
    uniform_name_.reset();
  }

  void Delete(const std::string& key) {
    const leveldb::Status s = db_->Delete(leveldb::WriteOptions(), key);
    if (!Check(s.ok(), "delete: " + s.ToString())) return;
    Record(key, std::nullopt);
    uniform_name_.reset();
  }

  void WriteBatch() {
    leveldb::WriteBatch batch;
    std::map<std::string, std::optional<std::string>> effect;
    std::vector<std::string> keys;
    for (uint64_t i = 0, n = 1 + Below(4); i < n; ++i) keys.push_back(AnyWritten());
    for (uint64_t i = 0, n = 1 + Below(16); i < n; ++i) {
      const std::string& key = keys[Below(keys.size())];
      if (Below(3) == 0) {
        batch.Delete(key);
        effect[key] = std::nullopt;
      } else {
        const std::string value = Value();
        batch.Put(key, value);
        effect[key] = value;
      }
    }
    const leveldb::Status s = db_->Write(leveldb::WriteOptions(), &batch);
    if (!Check(s.ok(), "write: " + s.ToString())) return;
    for (auto& [key, value] : effect) Record(key, std::move(value));
    uniform_name_.reset();
  }

  // The oracle's change: the key's value becomes `value` (nullopt: deleted);
  // while a snapshot is held, the value it had then is kept.
  void Record(const std::string& key, std::optional<std::string> value) {
    const auto it = oracle_.find(key);
    if (snapshot_ != nullptr && snapshot_undo_.count(key) == 0) {
      snapshot_undo_[key] =
          it == oracle_.end() ? std::nullopt : std::optional<std::string>(it->second);
    }
    if (value.has_value()) {
      oracle_[key] = std::move(*value);
    } else if (it != oracle_.end()) {
      oracle_.erase(it);
    }
  }

  std::optional<std::string> Current(const std::string& key) const {
    const auto it = oracle_.find(key);
    return it == oracle_.end() ? std::nullopt : std::optional<std::string>(it->second);
  }

  std::optional<std::string> AtSnapshot(const std::string& key) const {
    const auto it = snapshot_undo_.find(key);
    return it != snapshot_undo_.end() ? it->second : Current(key);
  }

  // Whether db_->Get(key) at `snapshot` (null: now) answers `want`.
  bool GetFrom(const std::optional<std::string>& want, const std::string& key,
               const leveldb::Snapshot* snapshot, const char* what) {
    leveldb::ReadOptions read;
    read.snapshot = snapshot;
    read.verify_checksums = Below(4) == 0;
    std::string value;
    const leveldb::Status s = db_->Get(read, key, &value);
    const std::string shown = KeyForHumans(key);
    if (!want.has_value()) {
      return Check(s.IsNotFound(), std::string(what) + ": absent key " + shown + " gave " +
                                       (s.ok() ? "a value" : s.ToString()));
    }
    if (!Check(s.ok(), std::string(what) + ": MISSED key " + shown + ": " + s.ToString())) {
      return false;
    }
    return Check(value == *want, std::string(what) + ": wrong value for " + shown);
  }

  static std::string KeyForHumans(const std::string& key) {
    std::string out = "(" + std::to_string(key.size()) + " bytes) \"";
    for (size_t i = 0; i < key.size() && i < 24; ++i) {
      const unsigned char c = static_cast<unsigned char>(key[i]);
      if (c >= 0x20 && c < 0x7F) {
        out.push_back(static_cast<char>(c));
      } else {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02x", c);
        out += buf;
      }
    }
    return out + (key.size() > 24 ? "...\"" : "\"");
  }

  void Get(const std::string& key) { GetFrom(Current(key), key, nullptr, "get"); }
  void GetAtSnapshot(const std::string& key) {
    GetFrom(AtSnapshot(key), key, snapshot_, "get at snapshot");
  }

  void CompactRange() {
    std::string a = written_[Below(written_.size())];
    std::string b = written_[Below(written_.size())];
    if (b < a) std::swap(a, b);
    leveldb::Slice begin(a), end(b);
    db_->CompactRange(Below(4) == 0 ? nullptr : &begin, Below(4) == 0 ? nullptr : &end);
  }

  // Many small sequential keys in batches of 1,000: big data blocks then
  // hold tens of thousands of keys, so one filter does (LevelDB cuts filters
  // at data-block boundaries): the policies' large-filter paths (blocked
  // version 1, compact version 1 above 65,536 keys).
  void Bulk() {
    const uint64_t n = std::min<uint64_t>(
        config_.big_filters
            ? config_.bulk_max
            : 1 + Below(Below(8) == 0 ? config_.bulk_max : config_.bulk_max / 4 + 1),
        config_.bulk_total - std::min<uint64_t>(config_.bulk_total, bulk_next_ / 2));
    if (n == 0) return;
    history_ += "  bulk " + std::to_string(n) + "\n";
    leveldb::WriteBatch batch;
    std::vector<std::pair<std::string, std::string>> pending;
    for (uint64_t i = 0; i < n && error_.empty(); ++i) {
      std::string key = "~bulk";
      const uint64_t id = bulk_next_;
      bulk_next_ += 2;
      for (int b = 5; b >= 0; --b) key.push_back(static_cast<char>(id >> (8 * b)));
      std::string value = RandomBytes(Below(6));
      batch.Put(key, value);
      pending.emplace_back(key, std::move(value));
      if (i % 8 == 0) {
        never_.push_back(key.substr(0, key.size() - 1) + static_cast<char>(id + 1));
        highest_ = std::max(highest_, never_.back());
      }
      highest_ = std::max(highest_, key);
      written_.push_back(std::move(key));
      if (pending.size() == 1000 || i + 1 == n) {
        const leveldb::Status s = db_->Write(leveldb::WriteOptions(), &batch);
        if (!Check(s.ok(), "bulk write: " + s.ToString())) return;
        for (auto& [k, v] : pending) Record(k, std::move(v));
        pending.clear();
        batch.Clear();
      }
    }
    uniform_name_.reset();
  }

  // Everything rewritten into tables written with this session's policy.
  //
  // CompactRange(nullptr, nullptr) rewrites a table only if a table of a
  // lower level (or the memtable) overlaps it: the bottom level's tables
  // outside every newer write keep the filters of the policy that wrote them.
  // So first the lowest and the highest key are written again (each with its
  // current value, or deleted again: the oracle does not change), and the
  // flushed memtable overlaps every table of every level.
  void FullCompaction() {
    for (const std::string* key : {&lowest_, &highest_}) {
      const std::optional<std::string> value = Current(*key);
      if (value.has_value()) {
        Put(*key, *value);
      } else {
        Delete(*key);
      }
    }
    if (!error_.empty()) return;
    db_->CompactRange(nullptr, nullptr);
    history_ += "  full compaction\n";
    uniform_name_ = policy_->name();
    uniform_bits_per_key_ = policy_->bits_per_key();
    CheckFiltersUsed("after full compaction");
  }

  // Every table holds filters under this policy's name: Gets of keys never
  // written consult them, and most are ruled out. Checked for blockbloom's
  // policies (the ones with counters), whichever policy object, API or
  // blockbloom format wrote the filters.
  void CheckFiltersUsed(const char* when) {
    // (A FilteredDB's index answers most absent Gets before LevelDB does.)
    if (policy_->get() == nullptr || !policy_->counted() || oracle_.empty() || filtered_) return;
    ++filter_checks_;
    const FilterPolicyStats before = policy_->stats();
    size_t gets = 0;
    ForSample(never_, universe_never_, 1000, [&](const std::string& key) {
      ++gets;
      return GetFrom(Current(key), key, nullptr, "absent get");
    });
    if (!error_.empty()) return;
    const FilterPolicyStats after = policy_->stats();
    const uint64_t probes = after.probes - before.probes;
    const uint64_t negatives = after.negatives - before.negatives;
    const std::string counts = std::string(when) + ": " + std::to_string(probes) + " probes, " +
                               std::to_string(negatives) + " negatives for " +
                               std::to_string(gets) + " absent Gets";
    history_ += "  filters used " + counts + "\n";
    if (!Check(probes > 0, "filters not consulted " + counts)) return;
    // The FPR to expect depends on the bits_per_key of whichever policy
    // wrote the tables (a reopen may read them at another). Measured for
    // filters of 1 to 70,000 keys: at most 0.93 at 1 bit/key (compact,
    // 70,000 keys), 0.64 from 2, 0.25 from 10 (a compact filter of 3 keys:
    // 4 bytes, 1 fingerprint bit). The probe counts asked below make a
    // chance failure at those rates less likely than 1e-7.
    const double bits = uniform_bits_per_key_;
    if (probes >= 500 || (bits >= 2 && probes >= 64)) {
      if (!Check(negatives > 0, "filters never rule a key out " + counts)) return;
    }
    if (bits >= 10 && probes >= 100) {  // at least half say "no"
      Check(2 * negatives >= probes, "filters rule out too few keys " + counts);
    }
  }

  // Calls check(key) for every key of keys[0, first) and for about `rest`
  // keys of the others (the bulk loads'), from a random start at an even
  // stride, until check returns false.
  template <typename Fn>
  void ForSample(const std::vector<std::string>& keys, size_t first, size_t rest, Fn check) {
    for (size_t i = 0; i < first && i < keys.size(); ++i) {
      if (!check(keys[i])) return;
    }
    if (keys.size() <= first) return;
    const size_t stride = std::max<size_t>(1, (keys.size() - first) / rest);
    for (size_t i = first + Below(stride); i < keys.size(); i += stride) {
      if (!check(keys[i])) return;
    }
  }

  // Every key of the universe, written or not, and a sample of the bulk
  // loads' keys (present and absent).
  void VerifyAll(const char* what) {
    const auto check = [&](const std::string& key) {
      return GetFrom(Current(key), key, nullptr, what);
    };
    ForSample(written_, universe_written_, 5000, check);
    ForSample(never_, universe_never_, 1000, check);
  }

  // Between sessions (the database closed): damage filters of some tables
  // (every table when `all`).
  void DamageTables(bool all) {
    std::vector<std::string> children;
    if (!env_->GetChildren(path_, &children).ok()) return;
    int damaged = 0;
    for (const std::string& child : children) {
      if (child.size() < 4 || child.compare(child.size() - 4, 4, ".ldb") != 0) continue;
      if (!all && Below(3) == 0) continue;
      const std::string file = path_ + "/" + child;
      std::string table;
      if (!Check(leveldb::ReadFileToString(env_, file, &table).ok(), "read " + file)) return;
      const auto block = FindFilterBlock(table);
      if (!block.has_value()) continue;
      const int n = DamageFilters(&table, block->first, block->second, &rng_);
      if (n == 0) continue;
      damaged += n;
      if (!Check(leveldb::WriteStringToFile(env_, table, file).ok(), "write " + file)) return;
    }
    damaged_ += damaged;
    history_ += "damaged " + std::to_string(damaged) + " filters\n";
    if (damaged > 0) uniform_name_.reset();  // damaged filters say "may match"
  }

  const RunConfig config_;
  SplitMix64 rng_;
  std::unique_ptr<leveldb::Env> mem_env_;
  leveldb::Env* env_ = nullptr;
  std::string path_;

  std::vector<std::string> written_, never_, hot_;
  uint64_t bulk_next_ = 0;
  // written_ and never_ start with the universe's keys; bulk loads append.
  size_t universe_written_ = 0, universe_never_ = 0;
  // The lowest and highest key a run may write (FullCompaction).
  std::string lowest_, highest_;
  std::map<std::string, std::string> oracle_;
  // While snapshot_ is held: each key changed since, with its value then.
  std::map<std::string, std::optional<std::string>> snapshot_undo_;

  std::unique_ptr<SessionPolicy> policy_;
  std::unique_ptr<leveldb::Cache> block_cache_;
  std::unique_ptr<leveldb::DB> db_;
  bool filtered_ = false;     // db_ is a FilteredDB
  bool index_saved_ = false;  // and saves its index at close
  const leveldb::Snapshot* snapshot_ = nullptr;
  // Set when every table's filter block is under this name ("" none).
  std::optional<std::string> uniform_name_;
  // The bits_per_key of the policy that wrote them (the FPR to expect).
  double uniform_bits_per_key_ = 0;

  int session_ = 0;
  int op_ = 0;
  uint64_t ops_ = 0;
  uint64_t damaged_ = 0;
  uint64_t filter_checks_ = 0;
  std::string error_;
  std::string history_;
};

struct Totals {
  uint64_t runs = 0, ops = 0, damaged = 0, checks = 0;
};

// One run, added to *totals; "" or its failure. BLOCKBLOOM_ORACLE_VERBOSE=1
// prints each run's history.
std::string RunAndReport(const RunConfig& config, Totals* totals) {
  OracleRun run(config);
  const std::string failure = run.Run();
  if (std::getenv("BLOCKBLOOM_ORACLE_VERBOSE") != nullptr) {
    std::printf("seed %llu:\n%s", static_cast<unsigned long long>(config.seed),
                run.history().c_str());
  }
  totals->runs += 1;
  totals->ops += run.ops();
  totals->damaged += run.damaged_filters();
  totals->checks += run.filter_checks();
  return failure;
}

TEST(LevelDbOracleTest, RandomPolicySwitchesNeverMissAKey) {
  Totals totals;
  for (uint64_t seed : {1, 2}) {
    RunConfig config;
    config.seed = seed;
    if (testing_build::kUnderSanitizer) {  // memory errors show in shorter runs
      config.ops_per_session = 350;
      config.universe = 350;
    }
    ASSERT_EQ(RunAndReport(config, &totals), "");
  }
  // Every run damages filters before its last session at the latest.
  EXPECT_GT(totals.damaged, 0u);
  EXPECT_GT(totals.checks, 0u);
}

// Filters of thousands of keys (4 MiB blocks of a bulk load: blocked
// version 1, read by every policy at the end), which the runs above, with
// their small random blocks, write only now and then.
TEST(LevelDbOracleTest, LargeFiltersNeverMissAKey) {
  Totals totals;
  RunConfig config;
  config.seed = 3;
  config.big_filters = true;
  config.sessions = 3;
  config.ops_per_session = 300;
  config.universe = 300;
  config.bulk_max = testing_build::kUnderSanitizer ? 1500 : 3000;
  config.bulk_total = 2 * config.bulk_max;
  ASSERT_EQ(RunAndReport(config, &totals), "");
  EXPECT_GT(totals.checks, 0u);
}

// BLOCKBLOOM_ORACLE_SOAK=<seconds>: seed after seed, larger runs, half on
// disk, until the time is up (see the top of this file).
TEST(LevelDbOracleTest, Soak) {
  const char* soak = std::getenv("BLOCKBLOOM_ORACLE_SOAK");
  if (soak == nullptr) GTEST_SKIP() << "set BLOCKBLOOM_ORACLE_SOAK=<seconds> to run";
  const double seconds = std::atof(soak);
  const char* first = std::getenv("BLOCKBLOOM_ORACLE_SEED");
  uint64_t seed = first != nullptr ? std::strtoull(first, nullptr, 10) : 1000;
  const auto start = std::chrono::steady_clock::now();
  Totals totals;
  do {
    RunConfig config;
    config.seed = seed;
    SplitMix64 shape(seed ^ 0x5eed);
    config.sessions = 6 + static_cast<int>(shape.Next() % 20);
    config.ops_per_session = 500 + static_cast<int>(shape.Next() % 4000);
    config.universe = 200 + static_cast<int>(shape.Next() % 4000);
    config.on_disk = shape.Next() % 2 == 0;
    config.huge = shape.Next() % 3 == 0;
    config.bulk_max = shape.Next() % 4 == 0 ? 250000 : 20000;
    config.bulk_total = 2 * config.bulk_max;
    if (seed % 5 == 0) {
      config.big_filters = true;
      config.sessions = 6;
      config.universe = 300;
      config.ops_per_session = 500;
      config.bulk_max = 150000;
      config.bulk_total = 300000;
    }
    Totals run;
    ASSERT_EQ(RunAndReport(config, &run), "");
    std::printf("seed %llu: %d sessions, %s, %llu ops, %llu damaged, %llu checks\n",
                static_cast<unsigned long long>(seed), config.sessions,
                config.on_disk ? "disk" : "memenv", static_cast<unsigned long long>(run.ops),
                static_cast<unsigned long long>(run.damaged),
                static_cast<unsigned long long>(run.checks));
    std::fflush(stdout);
    totals.runs += 1;
    totals.ops += run.ops;
    totals.damaged += run.damaged;
    totals.checks += run.checks;
    ++seed;
  } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
           seconds);
  std::printf(
      "soak: %llu runs (seeds to %llu), %llu ops, %llu filters damaged, %llu filter-use checks\n",
      static_cast<unsigned long long>(totals.runs), static_cast<unsigned long long>(seed - 1),
      static_cast<unsigned long long>(totals.ops), static_cast<unsigned long long>(totals.damaged),
      static_cast<unsigned long long>(totals.checks));
}

}  // namespace
}  // namespace blockbloom
