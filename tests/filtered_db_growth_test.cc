// FilteredDB when its d-left index REFUSES an insert, driven with real keys:
// with every index's seed fixed (testing_hooks.h: otherwise each index draws
// a random one, and nobody outside can choose colliding keys), keys are
// searched whose index hashes (KeyIndex::HashOf: XXH3 under that seed)
// collide in a tiny d-left index, so that
//   - a counter overflows (4 keys share a whole fingerprint, i.e. the top
//     b + 14 bits of their hash at B = 2^b: blockbloom/dleft_counting_bloom.h),
//   - a bucket fills (33 keys whose d candidate buckets are the same 4).
// Each premise is first checked on a bare DleftCountingBloomFilter through its
// public API, so a change of geometry fails here loudly instead of silently
// testing nothing. Then, on a real LevelDB database on disk against a
// std::map oracle: every Get agrees (no live key is ever ruled out), the
// refusal is counted and answered with a larger rebuild, a refusal that
// persists through every rebuild attempt saturates the index (every Get passes
// through, nothing lost), RebuildIndex() and reopen recover, and afterwards the
// index rules out absent keys from memory again.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "blockbloom/dleft_counting_bloom.h"
#include "blockbloom/filtered_db.h"
#include "blockbloom/hash.h"
#include "common/xxh3_inline.h"  // XXH3_kSecret
#include "filtered_db/key_index.h"
#include "filtered_db/testing_hooks.h"
#include "leveldb/env.h"
#include "leveldb/write_batch.h"
#include "test_keys.h"
#include "test_paths.h"

namespace blockbloom {
namespace {

using Filter = DleftCountingBloomFilter;
using testing_keys::Key;
using testing_keys::SplitMix64;

constexpr int kR = Filter::kRemainderBits;

// ---- Choosing colliding keys ------------------------------------------------

// The seed every index of these tests takes (Harness fixes it).
constexpr uint64_t kSeed = 0x5EED0F1D3C0FFEE5ull;

// The key's hash in an index of seed kSeed.
uint64_t IndexHash(const std::string& key) { return KeyIndex::HashOf(key, kSeed); }

uint64_t TopBits(const std::string& key, int bits) { return IndexHash(key) >> (64 - bits); }

// `count` keys "<prefix><i>" whose hashes share their top `shared_bits` bits
// but do not all share the next bit: all of them share one cell (one
// fingerprint) in a d-left index with 2^(shared_bits - 14) buckets per
// subtable, and not in one with twice as many.
std::vector<std::string> KeysSharingFingerprint(const std::string& prefix, int shared_bits,
                                                size_t count) {
  std::unordered_map<uint64_t, std::vector<std::string>> groups;
  for (uint64_t i = 0;; ++i) {
    std::string key = prefix + std::to_string(i);
    std::vector<std::string>& group = groups[TopBits(key, shared_bits)];
    group.push_back(std::move(key));
    if (group.size() < count) continue;
    size_t next_bit_set = 0;
    for (const std::string& k : group) next_bit_set += TopBits(k, shared_bits + 1) & 1;
    if (next_bit_set != 0 && next_bit_set != count) return group;
    group.erase(group.begin());  // all share the next bit too: keep looking
  }
}

// The candidate bucket of `key` in subtable i at B = 2^log2_buckets, per the
// geometry of blockbloom/dleft_counting_bloom.h (f = top b+14 hash bits,
// bucket = high b bits of a_i * f mod 2^(b+14)) with the multipliers a_i of
// src/dleft/dleft_counting_bloom.cc (the first four SplitMix64(0) outputs,
// made odd). Only used to choose inputs: FullBucketKeys' caller checks on a
// real filter that they are refused where this predicts.
uint64_t CandidateBucket(const std::string& key, int subtable, int log2_buckets) {
  SplitMix64 rng(0);
  uint64_t a = 0;
  for (int i = 0; i <= subtable; ++i) a = rng.Next() | 1;
  const int f_bits = log2_buckets + kR;
  const uint64_t f = TopBits(key, f_bits);
  const uint64_t p = (a * f) & ((uint64_t{1} << f_bits) - 1);
  return p >> kR;
}

// `count` keys with distinct fingerprints whose candidate bucket at
// B = 2^log2_buckets is bucket 0 in every subtable: the first
// d * w = 32 of them fill those 4 buckets; any further one is refused.
std::vector<std::string> FullBucketKeys(const std::string& prefix, int log2_buckets, size_t count) {
  std::vector<std::string> keys;
  std::unordered_map<uint64_t, bool> fingerprints;
  for (uint64_t i = 0; keys.size() < count; ++i) {
    const std::string key = prefix + std::to_string(i);
    bool all_zero = true;
    for (int t = 0; t < Filter::kSubtables; ++t) {
      all_zero = all_zero && CandidateBucket(key, t, log2_buckets) == 0;
    }
    if (!all_zero) continue;
    if (!fingerprints.emplace(TopBits(key, log2_buckets + kR), true).second) continue;
    keys.push_back(key);
  }
  return keys;
}

// Inserts `keys` in order into a bare filter with 2^log2_buckets buckets per
// subtable; returns the index of the first refused key (-1 if none) and sets
// *overflows / *full to the filter's refusal counters.
int FirstRefusal(const std::vector<std::string>& keys, int log2_buckets,
                 uint64_t* overflows = nullptr, uint64_t* full = nullptr) {
  auto filter = Filter::CreateWithGeometry(log2_buckets);
  EXPECT_TRUE(filter.ok());
  int first = -1;
  for (size_t i = 0; i < keys.size(); ++i) {
    const absl::Status s = (*filter)->InsertHash(IndexHash(keys[i]));
    if (!s.ok()) {
      EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
      first = static_cast<int>(i);
      break;
    }
  }
  if (overflows != nullptr) *overflows = (*filter)->stats().counter_overflows;
  if (full != nullptr) *full = (*filter)->stats().full_bucket_failures;
  return first;
}

// ---- The database and its oracle ---------------------------------------------

// A FilteredDB (d-left index) and a std::map holding what it must contain.
class Harness {
 public:
  explicit Harness(const std::string& tag) : path_(TestPath(tag)) {
    DestroyFilteredDB(path_, leveldb::Options());
    filtered_db::SetIndexSeedForTesting(true, kSeed);
  }
  ~Harness() {
    db_.reset();
    DestroyFilteredDB(path_, leveldb::Options());
    filtered_db::SetIndexBudgetSlackForTesting(KeyIndex::kDefaultBudgetSlackBytes);
    filtered_db::SetIndexSeedForTesting(false, 0);
  }

  // The index is sized for the live keys within a memory budget of 4 bytes
  // per key plus `budget_slack` (KeyIndex::CapacityFor). With no slack (the
  // tests' default) a few keys get the smallest table that holds 33/32 of
  // them, and a rebuild after a refusal doubles that, as the premises below
  // assume; with the default slack, `expected_keys` sizes the first index.
  void Open(uint64_t expected_keys, uint64_t budget_slack = 0) {
    filtered_db::SetIndexBudgetSlackForTesting(budget_slack);
    db_.reset();
    leveldb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = 64 << 10;
    FilteredDBOptions index;
    index.kind = IndexKind::kDleft;
    index.expected_keys = expected_keys;
    // 16-bit cells, 24 keys per bucket row at capacity: the layout the
    // premises compute with (FilteredDB picks it for targets below 0.168%).
    index.target_fpr = 1e-4;
    index.persist_index = false;  // every Open scans: the tests size the index
    const leveldb::Status s = FilteredDB::Open(index, options, path_, &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void Put(const std::string& key) {
    const std::string value = "v" + std::to_string(++version_) + "-" + key;
    const leveldb::Status s = db_->Put(leveldb::WriteOptions(), key, value);
    ASSERT_TRUE(s.ok()) << s.ToString();
    oracle_[key] = value;
    Touch(key);
  }
  void Delete(const std::string& key) {
    const leveldb::Status s = db_->Delete(leveldb::WriteOptions(), key);
    ASSERT_TRUE(s.ok()) << s.ToString();
    oracle_.erase(key);
    Touch(key);
  }
  // One atomic batch: Put of every key in `puts`, then Delete of every key in
  // `deletes`.
  void Write(const std::vector<std::string>& puts, const std::vector<std::string>& deletes) {
    leveldb::WriteBatch batch;
    std::map<std::string, std::string> after = oracle_;
    for (const std::string& key : puts) {
      const std::string value = "b" + std::to_string(++version_) + "-" + key;
      batch.Put(key, value);
      after[key] = value;
      Touch(key);
    }
    for (const std::string& key : deletes) {
      batch.Delete(key);
      after.erase(key);
      Touch(key);
    }
    const leveldb::Status s = db_->Write(leveldb::WriteOptions(), &batch);
    ASSERT_TRUE(s.ok()) << s.ToString();
    oracle_ = std::move(after);
  }

  // Every key ever written, and `absent` keys never written, read back
  // through the index: each answer is the oracle's. The index holds exactly
  // the live keys while it is active.
  void ExpectAgrees(const std::string& where, int absent = 500) {
    db_->WaitForGrowth();
    std::vector<std::string> keys(touched_.begin(), touched_.end());
    for (int i = 0; i < absent; ++i) keys.push_back("absent-" + std::to_string(i));
    for (const std::string& key : keys) {
      std::string value;
      const leveldb::Status s = db_->Get(leveldb::ReadOptions(), key, &value);
      const auto it = oracle_.find(key);
      if (it == oracle_.end()) {
        ASSERT_TRUE(s.IsNotFound()) << where << ": " << key << " " << s.ToString();
      } else {
        ASSERT_TRUE(s.ok()) << where << ": live key missing: " << key << " " << s.ToString();
        ASSERT_EQ(value, it->second) << where;
      }
    }
    const FilteredDBStats stats = db_->index_stats();
    if (stats.index_active) EXPECT_EQ(stats.keys, oracle_.size()) << where;
  }

  // Gets of `n` never-written keys; returns how many the index ruled out
  // (gets_ruled_out delta), after checking each answer is NotFound.
  uint64_t RuledOutOf(int n) {
    db_->WaitForGrowth();
    const uint64_t before = db_->index_stats().gets_ruled_out;
    for (int i = 0; i < n; ++i) {
      std::string value;
      EXPECT_TRUE(
          db_->Get(leveldb::ReadOptions(), "never-" + std::to_string(i), &value).IsNotFound());
    }
    return db_->index_stats().gets_ruled_out - before;
  }

  FilteredDB& db() { return *db_; }
  FilteredDBStats stats() const {
    db_->WaitForGrowth();
    return db_->index_stats();
  }
  size_t live() const { return oracle_.size(); }

 private:
  void Touch(const std::string& key) { touched_.insert(key); }

  const std::string path_;
  std::unique_ptr<FilteredDB> db_;
  std::map<std::string, std::string> oracle_;
  std::set<std::string> touched_;
  uint64_t version_ = 0;
};

// The premise of the tests below: an empty database gives B = 1 (one bucket
// per subtable, fingerprint = top 14 bits, capacity 6 * 4 * 1 = 24 keys), and
// expected_keys = 48 within the default budget gives B = 2.
TEST(FilteredDBGrowthTest, GeometryPremise) {
  Harness h("premise");
  h.Open(1);
  EXPECT_EQ(h.stats().capacity, 24u);
  h.Open(48, KeyIndex::kDefaultBudgetSlackBytes);
  EXPECT_EQ(h.stats().capacity, 48u);
}

// Four keys with one 14-bit fingerprint overflow its 2-bit counter in the
// B = 1 index while the index is far below capacity: the refusal triggers a
// rebuild at B = 2, where the fingerprints differ, and the index goes on
// ruling out absent keys.
TEST(FilteredDBGrowthTest, CounterOverflowRebuildsLargerAndKeepsFiltering) {
  const std::vector<std::string> q = KeysSharingFingerprint("overflow-", kR, 4);
  std::vector<std::string> fillers;
  for (int i = 0; i < 8; ++i) fillers.push_back(Key(i));
  std::vector<std::string> sequence = fillers;
  sequence.insert(sequence.end(), q.begin(), q.end());
  uint64_t overflows = 0;
  ASSERT_EQ(FirstRefusal(sequence, 0, &overflows), static_cast<int>(sequence.size()) - 1);
  ASSERT_EQ(overflows, 1u);
  ASSERT_EQ(FirstRefusal(sequence, 1), -1);

  Harness h("overflow");
  h.Open(1);
  for (const std::string& key : fillers) h.Put(key);
  for (int i = 0; i < 3; ++i) h.Put(q[i]);
  FilteredDBStats s = h.stats();
  ASSERT_TRUE(s.index_active);
  EXPECT_EQ(s.rebuilds, 1u);  // Open's
  EXPECT_EQ(s.insert_refusals, 0u);
  EXPECT_EQ(s.capacity, 24u);
  h.ExpectAgrees("three sharing one cell");

  h.Put(q[3]);  // the fourth: refused by the B = 1 index
  s = h.stats();
  EXPECT_TRUE(s.index_active);
  EXPECT_EQ(s.insert_refusals, 1u);
  EXPECT_EQ(s.rebuilds, 2u);
  EXPECT_GE(s.capacity, 48u);
  EXPECT_EQ(s.keys, h.live());
  EXPECT_EQ(s.failed_writes, 0u);
  h.ExpectAgrees("after the overflow rebuild");
  EXPECT_GE(h.RuledOutOf(1000), 990u);  // answered from memory again

  // Erase and re-add the colliding keys in the rebuilt index.
  h.Delete(q[0]);
  h.Delete(q[3]);
  h.ExpectAgrees("after deletes");
  h.Put(q[3]);
  h.Put(q[0]);
  h.ExpectAgrees("after re-puts");

  // A full rebuild sized from the 12 keys (B = 1) meets the same overflow,
  // counts it and doubles until B = 2 takes them.
  ASSERT_TRUE(h.db().RebuildIndex().ok());
  s = h.stats();
  EXPECT_TRUE(s.index_active);
  EXPECT_EQ(s.rebuilds, 3u);
  EXPECT_EQ(s.insert_refusals, 2u);
  h.ExpectAgrees("after RebuildIndex");
  EXPECT_GE(h.RuledOutOf(1000), 990u);
}

// Four keys sharing their top 17 bits collide at B = 1, 2, 4 and 8: the
// growth rebuild (in the background) doubles past them to B = 16, where they
// fit, and the index comes back by itself. RebuildIndex() while they still
// collide at every attempted size saturates the index and every Get passes
// through -- correctly; once one of them is deleted (or the keys are many
// enough to size the index at B = 16) the index comes back.
TEST(FilteredDBGrowthTest, PersistentRefusalSaturatesThenRecovers) {
  const std::vector<std::string> q = KeysSharingFingerprint("saturate-", kR + 3, 4);
  for (int log2 = 0; log2 <= 3; ++log2) ASSERT_EQ(FirstRefusal(q, log2), 3) << log2;
  ASSERT_EQ(FirstRefusal(q, 4), -1);

  Harness h("saturate");
  h.Open(1);
  for (int i = 0; i < 3; ++i) h.Put(q[i]);
  EXPECT_GE(h.RuledOutOf(200), 190u);
  h.Put(q[3]);  // refused at B = 1; the growth rebuild is refused at B = 2, 4, 8, takes B = 16
  FilteredDBStats s = h.stats();
  EXPECT_TRUE(s.index_active);
  EXPECT_EQ(s.insert_refusals, 4u);
  EXPECT_EQ(s.rebuilds, 2u);
  EXPECT_EQ(s.keys, 4u);
  EXPECT_GE(s.capacity, 384u);
  h.ExpectAgrees("grown past the collision");
  EXPECT_GE(h.RuledOutOf(200), 190u);

  // Saturate it: a RebuildIndex sized from 4 keys (B = 1, 2, 4, 8) refuses.
  ASSERT_TRUE(h.db().RebuildIndex().ok());
  s = h.stats();
  EXPECT_FALSE(s.index_active);
  EXPECT_EQ(s.keys, 0u);
  EXPECT_EQ(s.insert_refusals, 8u);
  std::string text;
  ASSERT_TRUE(h.db().GetProperty("blockbloom.stats", &text));
  EXPECT_NE(text.find("index-active: 0\n"), std::string::npos) << text;
  h.ExpectAgrees("saturated");
  EXPECT_EQ(h.RuledOutOf(200), 0u);  // everything passes through

  // Writes while saturated: Put, overwrite, Delete, batches.
  for (int i = 0; i < 30; ++i) h.Put(Key(i));
  for (int i = 0; i < 30; i += 3) h.Delete(Key(i));
  h.Put(q[2]);
  h.Write({Key(100), Key(101), Key(1)}, {Key(2), "never-written"});
  h.ExpectAgrees("writes while saturated");

  // 25 live keys size the index at B = 2, then 4, 8, 16: the fourth attempt
  // takes them, after three counted refusals.
  ASSERT_EQ(h.live(), 25u);
  const uint64_t refusals_before = h.stats().insert_refusals;
  ASSERT_TRUE(h.db().RebuildIndex().ok());
  s = h.stats();
  EXPECT_TRUE(s.index_active);
  EXPECT_EQ(s.rebuilds, 3u);
  EXPECT_EQ(s.insert_refusals, refusals_before + 3);
  h.ExpectAgrees("recovered by RebuildIndex");
  EXPECT_GE(h.RuledOutOf(1000), 990u);

  // Back to four colliding keys only: every attempted size (B = 1, 2, 4, 8)
  // refuses one of them, the rebuild saturates.
  for (int i = 0; i < 30; ++i) h.Delete(Key(i));
  h.Write({}, {Key(100), Key(101)});
  ASSERT_EQ(h.live(), 4u);
  ASSERT_TRUE(h.db().RebuildIndex().ok());
  s = h.stats();
  EXPECT_FALSE(s.index_active);
  EXPECT_EQ(s.insert_refusals, refusals_before + 3 + 4);
  h.ExpectAgrees("saturated by RebuildIndex");

  // Deleting one colliding key while saturated, then rebuilding: back.
  h.Delete(q[1]);
  ASSERT_TRUE(h.db().RebuildIndex().ok());
  s = h.stats();
  EXPECT_TRUE(s.index_active);
  EXPECT_EQ(s.keys, 3u);
  h.ExpectAgrees("recovered after delete");
  EXPECT_GE(h.RuledOutOf(1000), 990u);

  // Re-adding it is refused, and growth takes it at B = 16 again; a reopen
  // whose expected_keys sizes it at B = 16 agrees.
  h.Put(q[1]);
  EXPECT_TRUE(h.stats().index_active);
  h.ExpectAgrees("grown again");
  h.Open(384, KeyIndex::kDefaultBudgetSlackBytes);
  s = h.stats();
  EXPECT_TRUE(s.index_active);
  EXPECT_EQ(s.keys, 4u);
  EXPECT_EQ(s.capacity, 384u);
  h.ExpectAgrees("reopened at B = 16");
  EXPECT_GE(h.RuledOutOf(1000), 990u);
}

// A FilteredDB (random seeds) of 1,000 ordinary keys and `q`: after a
// rebuild the index is active, refused none of them, holds them all, and
// rules out absent keys from memory.
void ExpectHeldAsOrdinaryKeys(const std::string& tag, const FilteredDBOptions& fdb_options,
                              const std::vector<std::string>& q) {
  const std::string path = TestPath(tag);
  DestroyFilteredDB(path, leveldb::Options());
  leveldb::Options options;
  options.create_if_missing = true;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(fdb_options, options, path, &db).ok());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), "normal" + std::to_string(i), "v").ok());
  }
  for (const std::string& key : q) ASSERT_TRUE(db->Put(leveldb::WriteOptions(), key, "x").ok());
  db->WaitForGrowth();
  ASSERT_TRUE(db->RebuildIndex().ok());
  const FilteredDBStats s = db->index_stats();
  EXPECT_TRUE(s.index_active);
  EXPECT_EQ(s.insert_refusals, 0u);
  EXPECT_EQ(s.keys, 1000 + q.size());
  std::string value;
  for (const std::string& key : q) EXPECT_TRUE(db->Get(leveldb::ReadOptions(), key, &value).ok());
  const uint64_t ruled_out_before = db->index_stats().gets_ruled_out;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(db->Get(leveldb::ReadOptions(), "absent" + std::to_string(i), &value).IsNotFound());
  }
  EXPECT_GE(db->index_stats().gets_ruled_out - ruled_out_before, 990u);
  db.reset();
  DestroyFilteredDB(path, leveldb::Options());
}

// Keys chosen offline to collide under blockbloom::HashKey alone (XXH3-64,
// seed 0, which anyone can compute): these four share their top 28 hash bits
// and have their low 18 bits below 2^14, so they share one 16-bit d-left
// cell's fingerprint (and segment) at every size a rebuild of a small index
// tries. When the index hashed keys with HashKey, they saturated a FilteredDB
// at target_fpr 1e-4 (16-bit cells) for good: every Get passed through.
// Under the index's random seed they are four ordinary keys.
TEST(FilteredDBGrowthTest, KeysCollidingUnderThePublicHashAreOrdinaryKeys) {
  const std::vector<std::string> q = {"adv55964378", "adv58052207", "adv67429558", "adv76722112"};
  for (const std::string& key : q) {  // the premise
    EXPECT_EQ(HashKey(key) >> 36, HashKey(q[0]) >> 36) << key;
    EXPECT_LT(HashKey(key) & ((1u << 18) - 1), 1u << 14) << key;
  }
  FilteredDBOptions fdb_options;
  fdb_options.target_fpr = 1e-4;  // 16-bit cells
  ExpectHeldAsOrdinaryKeys("public_hash_collisions", fdb_options, q);
}

// 200 keys with one XXH3 value under seed 0, built without any search: 32
// bytes whose first 8 are the first 8 of XXH3's default secret zero the
// product of XXH3's 16-byte mixer, so bytes 8-15 may be anything. A remix
// of that value (under any seed) would keep them equal, and 200 equal keys
// overflow any d-left index; the index hashes the key bytes under its seed
// (KeyIndex::HashOf), where they are 200 ordinary keys.
TEST(FilteredDBGrowthTest, KeysWithOneXxh3ValueAreOrdinaryKeys) {
  std::vector<std::string> q;
  for (uint64_t i = 0; i < 200; ++i) {
    std::string key(32, 'x');
    std::memcpy(&key[0], XXH3_kSecret, 8);
    std::memcpy(&key[8], &i, 8);
    q.push_back(key);
  }
  for (const std::string& key : q) ASSERT_EQ(HashKey(key), HashKey(q[0]));  // the premise
  ExpectHeldAsOrdinaryKeys("one_xxh3_value", FilteredDBOptions(), q);
}

// Every index draws its own seed: keys that collide at every size under one
// seed (here fixed, as an attacker would need it to be) saturate that index,
// and the next rebuild, under a seed of its own, holds them.
TEST(FilteredDBGrowthTest, KeysThatCollideInOneIndexDoNotInTheNext) {
  const std::vector<std::string> q = KeysSharingFingerprint("reseed-", kR + 3, 4);
  for (int log2 = 0; log2 <= 3; ++log2) ASSERT_EQ(FirstRefusal(q, log2), 3) << log2;
  Harness h("reseed");
  h.Open(1);
  for (const std::string& key : q) h.Put(key);
  h.db().WaitForGrowth();
  ASSERT_TRUE(h.db().RebuildIndex().ok());  // sized for 4 keys: B = 1, 2, 4, 8 all refuse
  ASSERT_FALSE(h.stats().index_active);
  h.ExpectAgrees("saturated under the fixed seed");
  const uint64_t refusals = h.stats().insert_refusals;

  filtered_db::SetIndexSeedForTesting(false, 0);  // random seeds again
  ASSERT_TRUE(h.db().RebuildIndex().ok());
  const FilteredDBStats s = h.stats();
  EXPECT_TRUE(s.index_active);
  EXPECT_EQ(s.keys, 4u);
  EXPECT_EQ(s.insert_refusals, refusals);  // none refused under the new seed
  h.ExpectAgrees("rebuilt under a random seed");
  EXPECT_GE(h.RuledOutOf(1000), 990u);
}

// 33 keys whose candidate buckets at B = 2 are bucket 0 of every subtable:
// the 33rd finds all d = 4 buckets (32 cells) full while the index holds 32
// keys of a capacity of 48. The last three arrive in one batch, so the
// refusal comes mid-batch, after other keys of the same batch were inserted.
TEST(FilteredDBGrowthTest, FullBucketMidBatchRebuildsLarger) {
  const std::vector<std::string> keys = FullBucketKeys("full-", 1, 33);
  uint64_t full = 0, overflows = 0;
  ASSERT_EQ(FirstRefusal(keys, 1, &overflows, &full), 32)
      << "the d-left geometry no longer matches CandidateBucket()";
  ASSERT_EQ(full, 1u);
  ASSERT_EQ(overflows, 0u);

  Harness h("full");
  h.Open(48, KeyIndex::kDefaultBudgetSlackBytes);
  for (int i = 0; i < 30; ++i) h.Put(keys[i]);
  FilteredDBStats s = h.stats();
  ASSERT_TRUE(s.index_active);
  EXPECT_EQ(s.insert_refusals, 0u);
  EXPECT_EQ(s.capacity, 48u);
  h.ExpectAgrees("30 keys in 4 buckets");
  EXPECT_GE(h.RuledOutOf(1000), 990u);

  // Whatever order the batch's inserts take, the third one is refused.
  h.Write({keys[30], keys[31], keys[32], "other-key"}, {"never-written", keys[5]});
  s = h.stats();
  EXPECT_TRUE(s.index_active);
  EXPECT_EQ(s.insert_refusals, 1u);
  EXPECT_EQ(s.rebuilds, 2u);
  EXPECT_GE(s.capacity, 96u);
  EXPECT_EQ(s.keys, h.live());
  h.ExpectAgrees("after the full-bucket rebuild");
  EXPECT_GE(h.RuledOutOf(1000), 990u);

  // The rebuilt index keeps taking writes.
  h.Delete(keys[0]);
  h.Put(keys[5]);
  h.Put("full-after");
  h.ExpectAgrees("after more writes");
  EXPECT_EQ(h.stats().insert_refusals, 1u);
}

}  // namespace
}  // namespace blockbloom
