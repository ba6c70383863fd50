// One cell of the policy workload matrix: a real LevelDB database of one
// value size, block size, bits/key and key shape, written with one filter
// policy; then the data-block reads of absent Gets (block cache off: every
// data block a Get needs is one counted read) and the filter bytes the
// policy wrote. bench/policy_matrix_bench.cc runs the whole matrix;
// tests/policy_matrix_test.cc a small part of it in CI.
//
// Every cell writes the same keys and values in the same order for every
// policy: the database is written with a write buffer larger than the data,
// so reopening it flushes one level-0 table, built once, whose data blocks
// are identical whatever the policy. Its filters are then exactly the
// CreateFilter calls made by that flush (FilterCounter), and an absent Get
// probes one filter.
#ifndef BLOCKBLOOM_BENCH_POLICY_MATRIX_H_
#define BLOCKBLOOM_BENCH_POLICY_MATRIX_H_

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/filtered_db.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "testing/read_counting_env.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/env.h"
#include "leveldb/filter_policy.h"
#include "leveldb/options.h"
#include "leveldb/write_batch.h"

namespace blockbloom {
namespace matrix {

enum class KeyShape { kSequential, kRandom, kSharedPrefix, kShort };
enum class Policy { kBuiltin, kBlocked, kCompact, kFilteredDB };

inline const char* ShapeName(KeyShape s) {
  switch (s) {
    case KeyShape::kSequential:
      return "sequential";
    case KeyShape::kRandom:
      return "random";
    case KeyShape::kSharedPrefix:
      return "prefix";
    case KeyShape::kShort:
      return "short";
  }
  return "?";
}

inline const char* PolicyName(Policy p) {
  switch (p) {
    case Policy::kBuiltin:
      return "builtin";
    case Policy::kBlocked:
      return "blocked";
    case Policy::kCompact:
      return "compact";
    case Policy::kFilteredDB:
      return "filtereddb";
  }
  return "?";
}

using bench::SplitMix64Of;

// Key number x of a shape. Present key i is the number i * kStride +
// Jitter(i); absent keys are the other numbers below keys * kStride: they
// fall between present ones (inside the table's range), are distinct, and
// have no arithmetic relation to the present ones (a fixed stride or parity
// would let a weak hash place absent keys' bits away from present keys'
// ones: a property of the pattern, not of the filter).
//   sequential: 12 decimal digits; random: 16 bytes of SplitMix64Of(i);
//   prefix: a 48-byte shared prefix then 12 digits; short: 4 bytes,
//   big-endian i (in key order).
inline constexpr uint64_t kStride = 1024;
inline uint64_t Jitter(uint64_t i) { return SplitMix64Of(i ^ 0xA5A5A5A5ull) % kStride; }
inline uint64_t PresentNumber(uint64_t i) { return i * kStride + Jitter(i); }
// Absent number g of a database of `keys` keys.
inline uint64_t AbsentNumber(uint64_t g, uint64_t keys) {
  for (uint64_t salt = 0;; ++salt) {
    const uint64_t x = SplitMix64Of(g * 31 + salt + 0x1234567) % (keys * kStride);
    if (x % kStride != Jitter(x / kStride)) return x;
  }
}
inline std::string MakeKey(KeyShape shape, uint64_t i) {
  char digits[32];
  switch (shape) {
    case KeyShape::kSequential:
      std::snprintf(digits, sizeof(digits), "%012llu", static_cast<unsigned long long>(i));
      return digits;
    case KeyShape::kRandom: {
      std::string key(16, '\0');
      const uint64_t a = SplitMix64Of(i), b = SplitMix64Of(i ^ 0x5555555555555555ull);
      for (int j = 0; j < 8; ++j) {
        key[j] = static_cast<char>(a >> (8 * j));
        key[8 + j] = static_cast<char>(b >> (8 * j));
      }
      return key;
    }
    case KeyShape::kSharedPrefix:
      std::snprintf(digits, sizeof(digits), "%012llu", static_cast<unsigned long long>(i));
      return "tenant-000042/collection-documents/object-shard/" + std::string(digits);
    case KeyShape::kShort:
      return std::string{static_cast<char>(i >> 24), static_cast<char>(i >> 16),
                         static_cast<char>(i >> 8), static_cast<char>(i)};
  }
  return {};
}

struct Cell {
  size_t value_size = 100;
  size_t block_size = 4096;
  int bits_per_key = 10;
  KeyShape shape = KeyShape::kSequential;
};

struct Result {
  uint64_t keys = 0;          // keys in the database
  uint64_t gets = 0;          // absent Gets measured
  uint64_t reads = 0;         // data-block reads they made
  uint64_t filters = 0;       // CreateFilter calls of the table's build
  uint64_t filter_keys = 0;   // keys those filters hold
  uint64_t filter_bytes = 0;  // bytes they wrote
  double reads_per_get() const { return gets ? static_cast<double>(reads) / gets : 0.0; }
  double filter_bytes_per_key() const {
    return filter_keys ? static_cast<double>(filter_bytes) / filter_keys : 0.0;
  }
};

// Forwards to a policy and counts what its CreateFilter writes while
// counting() is on. Probes are forwarded unchanged.
class FilterCounter : public leveldb::FilterPolicy {
 public:
  explicit FilterCounter(const leveldb::FilterPolicy* inner) : inner_(inner) {}
  const char* Name() const override { return inner_->Name(); }
  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    const size_t before = dst->size();
    inner_->CreateFilter(keys, n, dst);
    if (counting_.load()) {
      filters_.fetch_add(1);
      keys_.fetch_add(static_cast<uint64_t>(n));
      bytes_.fetch_add(dst->size() - before);
    }
  }
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    return inner_->KeyMayMatch(key, filter);
  }
  void set_counting(bool on) { counting_.store(on); }
  uint64_t filters() const { return filters_.load(); }
  uint64_t keys() const { return keys_.load(); }
  uint64_t bytes() const { return bytes_.load(); }

 private:
  std::unique_ptr<const leveldb::FilterPolicy> inner_;
  std::atomic<bool> counting_{false};
  mutable std::atomic<uint64_t> filters_{0}, keys_{0}, bytes_{0};
};

inline const leveldb::FilterPolicy* NewPolicy(Policy p, int bits_per_key) {
  switch (p) {
    case Policy::kBuiltin:
      return leveldb::NewBloomFilterPolicy(bits_per_key);
    case Policy::kBlocked:
    case Policy::kFilteredDB:
      return NewBlockedBloomFilterPolicy(bits_per_key);
    case Policy::kCompact:
      return NewCompactFilterPolicy(bits_per_key);
  }
  return nullptr;
}

// Writes the cell's database under `dir` (destroyed first and after) on
// `base_env`: max(min_keys, data_bytes / (key + value)) keys, then
// `gets` absent Gets. Returns false with *error set on any failure,
// including a present key that is not found.
inline bool RunCell(const Cell& cell, Policy policy, leveldb::Env* base_env, const std::string& dir,
                    uint64_t data_bytes, uint64_t min_keys, uint64_t gets, Result* out,
                    std::string* error) {
  *out = Result();
  const std::string path = dir + "/matrix_db";
  ReadCountingEnv env(base_env);
  FilterCounter counter(NewPolicy(policy, cell.bits_per_key));
  std::unique_ptr<leveldb::Cache> no_cache(leveldb::NewLRUCache(0));
  leveldb::Options options;
  options.env = &env;
  options.create_if_missing = true;
  options.block_size = cell.block_size;
  options.block_cache = no_cache.get();
  options.filter_policy = &counter;
  options.write_buffer_size = 1ull << 30;  // everything in one memtable
  options.max_file_size = 1ull << 30;
  leveldb::DestroyDB(path, options);

  const uint64_t entry = MakeKey(cell.shape, 0).size() + cell.value_size;
  uint64_t keys = std::max<uint64_t>(min_keys, data_bytes / entry);
  if (cell.shape == KeyShape::kShort)
    keys = std::min<uint64_t>(keys, (uint64_t{1} << 32) / kStride);
  const auto fail = [&](const std::string& what, const leveldb::Status& s) {
    *error = what + ": " + s.ToString();
    return false;
  };
  {
    leveldb::DB* raw = nullptr;
    leveldb::Status s = leveldb::DB::Open(options, path, &raw);
    if (!s.ok()) return fail("open", s);
    std::unique_ptr<leveldb::DB> db(raw);
    std::string value(cell.value_size, '\0');
    for (uint64_t i = 0; i < keys; ++i) {
      uint64_t r = SplitMix64Of(i * 7 + 3);
      for (size_t j = 0; j < value.size(); ++j) {  // incompressible
        if (j % 8 == 0 && j) r = SplitMix64Of(r);
        value[j] = static_cast<char>(r >> (8 * (j % 8)));
      }
      s = db->Put(leveldb::WriteOptions(), MakeKey(cell.shape, PresentNumber(i)), value);
      if (!s.ok()) return fail("put", s);
    }
  }
  // The reopen flushes the log into one level-0 table: its filters are the
  // ones counted.
  counter.set_counting(true);
  leveldb::DB* raw = nullptr;
  std::unique_ptr<leveldb::DB> plain;
  leveldb::Status s = leveldb::DB::Open(options, path, &raw);
  if (!s.ok()) return fail("reopen", s);
  plain.reset(raw);
  counter.set_counting(false);
  leveldb::DB* db = plain.get();
  std::unique_ptr<leveldb::DB> filtered;
  if (policy == Policy::kFilteredDB) {
    plain.reset();
    FilteredDBOptions fdb_options;
    fdb_options.expected_keys = keys;
    s = OpenFilteredDB(fdb_options, options, path, &raw);
    if (!s.ok()) return fail("open FilteredDB", s);
    filtered.reset(raw);
    db = filtered.get();
  }
  std::string got;
  const uint64_t checks = std::min<uint64_t>(keys, 200);
  for (uint64_t c = 0; c < checks; ++c) {  // present keys are found; opens the table
    const uint64_t i = c * keys / checks;
    s = db->Get(leveldb::ReadOptions(), MakeKey(cell.shape, PresentNumber(i)), &got);
    if (!s.ok()) return fail("present key " + std::to_string(i), s);
  }
  env.ResetReads();
  for (uint64_t g = 0; g < gets; ++g) {
    const uint64_t x = AbsentNumber(g, keys);
    s = db->Get(leveldb::ReadOptions(), MakeKey(cell.shape, x), &got);
    if (!s.IsNotFound()) return fail("absent key " + std::to_string(x), s);
  }
  out->keys = keys;
  out->gets = gets;
  out->reads = env.reads();
  out->filters = counter.filters();
  out->filter_keys = counter.keys();
  out->filter_bytes = counter.bytes();
  filtered.reset();
  plain.reset();
  leveldb::DestroyDB(path, options);
  return true;
}

// Whether `ours` read no more data blocks than `builtin` beyond chance: the
// two counts, over the same Gets, are compared as Poisson counts:
// ours - builtin <= z * sqrt(ours + builtin) + 1.
inline bool NotWorse(uint64_t ours, uint64_t builtin, double z) {
  const double a = static_cast<double>(ours), b = static_cast<double>(builtin);
  return a - b <= z * std::sqrt(a + b) + 1.0;
}

}  // namespace matrix
}  // namespace blockbloom

#endif  // BLOCKBLOOM_BENCH_POLICY_MATRIX_H_
