// blockbloom/c.h: the C++ policies behind LevelDB's callback-based C filter
// policy (leveldb_filterpolicy_create), and FilteredDB behind LevelDB's own
// leveldb_t handle. Each callback and entry point catches everything: no
// exception crosses into C.
#include "blockbloom/c.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/filter_stats.h"
#include "blockbloom/filtered_db.h"
#include "common/live_set.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "c_api_internal.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/slice.h"
#include "leveldb/status.h"
#include "leveldb/write_batch.h"

#ifndef BLOCKBLOOM_VERSION_STRING
#error "BLOCKBLOOM_VERSION_STRING must be defined by the build (plugin/c/CMakeLists.txt)"
#endif

namespace blockbloom {
namespace capi {
namespace {

// The `state` of a C policy: owns the C++ policy.
struct PolicyState {
  std::unique_ptr<const leveldb::FilterPolicy> policy;
  const leveldb_filterpolicy_t* handle = nullptr;  // registered in PolicyRegistry
  // The handle as the leveldb::FilterPolicy* that leveldb_options_set_filter_policy
  // stores in Options (c.cc's wrapper class), registered in by_options_policy;
  // null if unknown.
  const leveldb::FilterPolicy* options_policy = nullptr;
};

// The C policies alive, by the handle LevelDB's C API returned for them, so
// blockbloom_filterpolicy_stats can find the C++ policy behind a handle
// (leveldb/c.h gives no way back from a leveldb_filterpolicy_t to its
// state), and by the FilterPolicy* a leveldb_options_t holds for it, so
// blockbloom_filtered_db_open can. Entries are removed by Destroy, which
// c.cc calls when the handle is destroyed. Never destroyed itself (policies
// may outlive static destruction).
struct PolicyRegistry {
  std::mutex mu;
  std::unordered_map<const leveldb_filterpolicy_t*, const PolicyState*> live;
  std::unordered_map<const leveldb::FilterPolicy*, const PolicyState*> by_options_policy;
};

PolicyRegistry& GetPolicyRegistry() {
  static PolicyRegistry* registry = new PolicyRegistry;
  return *registry;
}

// A malloc'ed copy of the "may match" filter (c_api_internal.h); LevelDB's
// c.cc frees what create_filter returns with free().
char* MayMatchFilter(size_t* filter_length) {
  char* out = static_cast<char*>(std::malloc(capi_internal::kMayMatchFilterBytes));
  if (out == nullptr) {
    // Nothing can be stored and LevelDB's C API has no way to report it.
    std::fputs("blockbloom: out of memory building a filter\n", stderr);
    std::abort();
  }
  std::memcpy(out, capi_internal::kMayMatchFilter, capi_internal::kMayMatchFilterBytes);
  *filter_length = capi_internal::kMayMatchFilterBytes;
  return out;
}

void Destroy(void* state) {
  auto* policy_state = static_cast<PolicyState*>(state);
  if (policy_state->handle != nullptr) {
    PolicyRegistry& r = GetPolicyRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.live.erase(policy_state->handle);
    if (policy_state->options_policy != nullptr) {
      r.by_options_policy.erase(policy_state->options_policy);
    }
  }
  delete policy_state;
}

const char* Name(void* state) { return static_cast<PolicyState*>(state)->policy->Name(); }

char* CreateFilter(void* state, const char* const* key_array, const size_t* key_length_array,
                   int num_keys, size_t* filter_length) {
  try {
    std::vector<leveldb::Slice> keys;
    keys.reserve(num_keys > 0 ? static_cast<size_t>(num_keys) : 0);
    for (int i = 0; i < num_keys; ++i) keys.emplace_back(key_array[i], key_length_array[i]);
    std::string filter;
    static_cast<PolicyState*>(state)->policy->CreateFilter(keys.data(), num_keys, &filter);
    // malloc(0) may return NULL; ask for at least one byte.
    char* out = static_cast<char*>(std::malloc(filter.empty() ? 1 : filter.size()));
    if (out == nullptr) return MayMatchFilter(filter_length);
    if (!filter.empty()) std::memcpy(out, filter.data(), filter.size());
    *filter_length = filter.size();
    return out;
  } catch (...) {
    return MayMatchFilter(filter_length);
  }
}

uint8_t KeyMayMatch(void* state, const char* key, size_t length, const char* filter,
                    size_t filter_length) {
  try {
    return static_cast<PolicyState*>(state)->policy->KeyMayMatch(
               leveldb::Slice(key, length), leveldb::Slice(filter, filter_length))
               ? 1
               : 0;
  } catch (...) {
    return 1;  // "may match": a read, never a missed key
  }
}

// What leveldb_options_set_filter_policy stores in Options for `handle`: c.cc
// converts its leveldb_filterpolicy_t* to leveldb::FilterPolicy*, a
// conversion only c.cc's complete type can make, so ask c.cc to make it and
// read the result back. Null if LevelDB's handles are not laid out as
// c_api_internal.h assumes (the field could not be read safely).
const leveldb::FilterPolicy* OptionsPolicyOf(leveldb_filterpolicy_t* handle) {
  if (!capi_internal::CheckLevelDBHandleLayout()) return nullptr;
  leveldb_options_t* options = leveldb_options_create();
  leveldb_options_set_filter_policy(options, handle);
  const leveldb::FilterPolicy* out = options->rep.filter_policy;
  leveldb_options_destroy(options);
  return out;
}

// Takes ownership of `policy`; NULL only if `policy` is NULL or out of memory.
leveldb_filterpolicy_t* Wrap(const leveldb::FilterPolicy* policy) {
  std::unique_ptr<const leveldb::FilterPolicy> owned(policy);
  if (owned == nullptr) return nullptr;
  auto* state = new (std::nothrow) PolicyState;
  if (state == nullptr) return nullptr;
  state->policy = std::move(owned);
  leveldb_filterpolicy_t* handle;
  try {
    handle = leveldb_filterpolicy_create(state, &Destroy, &CreateFilter, &KeyMayMatch, &Name);
  } catch (...) {
    delete state;
    return nullptr;
  }
  try {
    const leveldb::FilterPolicy* options_policy = OptionsPolicyOf(handle);
    PolicyRegistry& r = GetPolicyRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.live.emplace(handle, state);
    state->handle = handle;
    if (options_policy != nullptr && r.by_options_policy.emplace(options_policy, state).second) {
      state->options_policy = options_policy;
    }
  } catch (...) {
    // Out of memory: the policy works, only blockbloom_filterpolicy_stats
    // and a FilteredDB's "blockbloom.filter-policy-stats" will not find it.
  }
  return handle;
}

// The C++ policy of a live C policy whose handle Options hold as
// `options_policy` (leveldb_options_t::rep.filter_policy), else null.
// REQUIRES: the C policy is not destroyed concurrently.
const leveldb::FilterPolicy* CxxPolicyOf(const leveldb::FilterPolicy* options_policy) {
  if (options_policy == nullptr) return nullptr;
  PolicyRegistry& r = GetPolicyRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto it = r.by_options_policy.find(options_policy);
  return it == r.by_options_policy.end() ? nullptr : it->second->policy.get();
}

template <typename Factory>
leveldb_filterpolicy_t* Create(Factory factory, double bits_per_key) {
  try {
    return Wrap(factory(bits_per_key));
  } catch (...) {
    return nullptr;
  }
}

// ---------------------------------------------------------------------------
// FilteredDB through leveldb_t.

// LevelDB's C API reports errors by a malloc'ed message in *errptr, freeing
// the one already there (db/c.cc); the same here, so C callers free ours
// with leveldb_free as theirs. errptr == NULL: nothing is reported.
void SaveError(char** errptr, const leveldb::Status& s) {
  if (s.ok() || errptr == nullptr) return;
  std::free(*errptr);
  *errptr = nullptr;
  std::string message;
  try {
    message = s.ToString();
  } catch (...) {
    // Out of memory: strdup below most likely fails as well.
  }
  *errptr = strdup(message.empty() ? "blockbloom: out of memory" : message.c_str());
}

leveldb::Status OutOfMemory(const char* where) {
  return leveldb::Status::IOError(where, "blockbloom: out of memory");
}

// The live FilteredDBs handed out through blockbloom_filtered_db_open, so
// blockbloom_filtered_db_save_index etc. can tell one from a plain leveldb_t
// without dynamic_cast (upstream LevelDB builds without RTTI, and a
// dynamic_cast on a DBImpl would then crash). Never destroyed: a handle may
// be closed during static destruction.
internal::LiveSet<leveldb::DB>& LiveFilteredDBs() {
  static auto* live = new internal::LiveSet<leveldb::DB>();
  return *live;
}

// The rep of a leveldb_t from blockbloom_filtered_db_open: forwards every
// leveldb::DB method to the FilteredDB it owns (a FilteredDB is final, so
// each forward is a direct call), catching what FilteredDB may throw (out of
// memory) and answering it the way leveldb::DB reports errors, and registers
// itself while alive. Thread-safety: as FilteredDB.
//
// LevelDB sees a C policy through c.cc's wrapper, which
// GetFilterPolicyStats cannot see through, so when the database was opened
// with a policy from blockbloom_filterpolicy_create_*, this answers
// "blockbloom.filter-policy-stats" from the C++ policy behind it
// (`cxx_policy`, owned by the C policy, which outlives the database).
class CFilteredDB final : public leveldb::DB {
 public:
  CFilteredDB(std::unique_ptr<FilteredDB> db, const leveldb::FilterPolicy* cxx_policy)
      : db_(std::move(db)), cxx_policy_(cxx_policy) {}
  // REQUIRES: called once, before the handle is published; may throw.
  void Register() { LiveFilteredDBs().Add(this); }
  // Unregisters, then deletes the FilteredDB (closes LevelDB, saves the
  // index when persist_index is set; a failed save leaves no index file).
  ~CFilteredDB() override { LiveFilteredDBs().Remove(this); }

  FilteredDB* filtered() const { return db_.get(); }

  leveldb::Status Put(const leveldb::WriteOptions& options, const leveldb::Slice& key,
                      const leveldb::Slice& value) override {
    try {
      return db_->Put(options, key, value);
    } catch (...) {
      return OutOfMemory("Put");
    }
  }
  leveldb::Status Delete(const leveldb::WriteOptions& options, const leveldb::Slice& key) override {
    try {
      return db_->Delete(options, key);
    } catch (...) {
      return OutOfMemory("Delete");
    }
  }
  leveldb::Status Write(const leveldb::WriteOptions& options,
                        leveldb::WriteBatch* updates) override {
    try {
      return db_->Write(options, updates);
    } catch (...) {
      return OutOfMemory("Write");
    }
  }
  leveldb::Status Get(const leveldb::ReadOptions& options, const leveldb::Slice& key,
                      std::string* value) override {
    try {
      return db_->Get(options, key, value);
    } catch (...) {
      return OutOfMemory("Get");
    }
  }
  leveldb::Iterator* NewIterator(const leveldb::ReadOptions& options) override {
    try {
      return db_->NewIterator(options);
    } catch (...) {
      return leveldb::NewErrorIterator(OutOfMemory("NewIterator"));
    }
  }
  // leveldb::DB has no way to report a failed GetSnapshot (nor has LevelDB's
  // own C API, whose leveldb_create_snapshot allocates with new): out of
  // memory here terminates, as it does there.
  const leveldb::Snapshot* GetSnapshot() override { return db_->GetSnapshot(); }
  void ReleaseSnapshot(const leveldb::Snapshot* snapshot) override {
    db_->ReleaseSnapshot(snapshot);
  }
  bool GetProperty(const leveldb::Slice& property, std::string* value) override {
    try {
      if (db_->GetProperty(property, value)) return true;
      if (cxx_policy_ == nullptr || property != leveldb::Slice(kFilterPolicyStatsProperty)) {
        return false;
      }
      // The same lines as FilteredDB::GetProperty gives for a C++ policy.
      const FilterPolicyStats p = GetFilterPolicyStats(cxx_policy_);
      if (!p.available) return false;
      char buf[128];
      std::snprintf(buf, sizeof(buf),
                    "probes: %" PRIu64 "\nnegatives: %" PRIu64 "\npositives: %" PRIu64 "\n",
                    p.probes, p.negatives, p.probes - p.negatives);
      *value = buf;
      return true;
    } catch (...) {
      return false;
    }
  }
  void GetApproximateSizes(const leveldb::Range* range, int n, uint64_t* sizes) override {
    try {
      db_->GetApproximateSizes(range, n, sizes);
    } catch (...) {
      for (int i = 0; i < n; ++i) sizes[i] = 0;
    }
  }
  void CompactRange(const leveldb::Slice* begin, const leveldb::Slice* end) override {
    try {
      db_->CompactRange(begin, end);
    } catch (...) {
      // leveldb::DB::CompactRange reports nothing; a skipped compaction
      // changes no answer.
    }
  }

 private:
  static constexpr char kFilterPolicyStatsProperty[] = "blockbloom.filter-policy-stats";
  std::unique_ptr<FilteredDB> db_;
  const leveldb::FilterPolicy* cxx_policy_;  // null: not a policy from blockbloom/c.h
};

// The FilteredDB behind `db` if it is a live handle from
// blockbloom_filtered_db_open, else null.
FilteredDB* FilteredOf(const leveldb_t* db) {
  if (db == nullptr) return nullptr;
  FilteredDB* filtered = nullptr;
  LiveFilteredDBs().IfLive(
      db->rep, [&] { filtered = static_cast<const CFilteredDB*>(db->rep)->filtered(); });
  return filtered;
}

// Runs `op` (SaveIndex, RebuildIndex) on the FilteredDB behind `db`, its
// status to *errptr as LevelDB's C API reports errors; `what` names the C
// function in messages.
void OnFilteredDB(leveldb_t* db, char** errptr, const char* what,
                  leveldb::Status (FilteredDB::*op)()) {
  try {
    FilteredDB* filtered = FilteredOf(db);
    SaveError(errptr, filtered != nullptr
                          ? (filtered->*op)()
                          : leveldb::Status::InvalidArgument(what, "not a FilteredDB"));
  } catch (...) {
    SaveError(errptr, OutOfMemory(what));
  }
}

// The layout probe's database: answers one property with a marker and
// records its destruction; every other method is never called.
constexpr char kProbeProperty[] = "blockbloom.c-api-layout-probe";
constexpr char kProbeMarker[] = "blockbloom: leveldb_t { DB* rep; }";

class ProbeDB final : public leveldb::DB {
 public:
  explicit ProbeDB(bool* destroyed) : destroyed_(destroyed) {}
  ~ProbeDB() override { *destroyed_ = true; }
  leveldb::Status Put(const leveldb::WriteOptions&, const leveldb::Slice&,
                      const leveldb::Slice&) override {
    return leveldb::Status::NotSupported("probe");
  }
  leveldb::Status Delete(const leveldb::WriteOptions&, const leveldb::Slice&) override {
    return leveldb::Status::NotSupported("probe");
  }
  leveldb::Status Write(const leveldb::WriteOptions&, leveldb::WriteBatch*) override {
    return leveldb::Status::NotSupported("probe");
  }
  leveldb::Status Get(const leveldb::ReadOptions&, const leveldb::Slice&, std::string*) override {
    return leveldb::Status::NotSupported("probe");
  }
  leveldb::Iterator* NewIterator(const leveldb::ReadOptions&) override {
    return leveldb::NewErrorIterator(leveldb::Status::NotSupported("probe"));
  }
  const leveldb::Snapshot* GetSnapshot() override { return nullptr; }
  void ReleaseSnapshot(const leveldb::Snapshot*) override {}
  bool GetProperty(const leveldb::Slice& property, std::string* value) override {
    if (property != leveldb::Slice(kProbeProperty)) return false;
    *value = kProbeMarker;
    return true;
  }
  void GetApproximateSizes(const leveldb::Range*, int n, uint64_t* sizes) override {
    for (int i = 0; i < n; ++i) sizes[i] = 0;
  }
  void CompactRange(const leveldb::Slice*, const leveldb::Slice*) override {}

 private:
  bool* destroyed_;
};

bool ProbeLayout() {
  // leveldb_options_t: values set through c.cc's setters read back here.
  leveldb_options_t* options = leveldb_options_create();
  leveldb_options_set_create_if_missing(options, 1);
  leveldb_options_set_error_if_exists(options, 1);
  leveldb_options_set_paranoid_checks(options, 1);
  leveldb_options_set_write_buffer_size(options, 3 * 1048576 + 7);
  leveldb_options_set_max_open_files(options, 777);
  leveldb_options_set_block_size(options, 5 * 1024 + 3);
  leveldb_options_set_block_restart_interval(options, 13);
  leveldb_options_set_compression(options, leveldb_no_compression);
  const leveldb::Options& o = options->rep;
  const bool options_ok = o.create_if_missing && o.error_if_exists && o.paranoid_checks &&
                          o.write_buffer_size == 3 * 1048576 + 7 && o.max_open_files == 777 &&
                          o.block_size == 5 * 1024 + 3 && o.block_restart_interval == 13 &&
                          o.compression == leveldb::kNoCompression &&
                          o.env == leveldb::Options().env;
  leveldb_options_destroy(options);
  if (!options_ok) return false;

  // leveldb_t: c.cc's functions reach rep at offset 0, and leveldb_close
  // deletes rep and the handle.
  bool destroyed = false;
  auto* handle = new leveldb_t;
  handle->rep = new ProbeDB(&destroyed);
  char* value = leveldb_property_value(handle, kProbeProperty);
  const bool property_ok = value != nullptr && std::strcmp(value, kProbeMarker) == 0;
  leveldb_free(value);
  leveldb_close(handle);  // the probe's destructor sets `destroyed`
  return property_ok && destroyed;
}

}  // namespace
}  // namespace capi

namespace capi_internal {

bool CheckLevelDBHandleLayout() {
  static const bool ok = [] {
    try {
      return capi::ProbeLayout();
    } catch (...) {
      return false;
    }
  }();
  return ok;
}

bool IsFilteredDBHandle(const leveldb_t* db) { return capi::FilteredOf(db) != nullptr; }

}  // namespace capi_internal
}  // namespace blockbloom

// The C kinds are the C++ ones (IndexKind's values follow blockbloom/c.h).
static_assert(static_cast<int>(blockbloom::IndexKind::kDleft) == blockbloom_index_dleft);
static_assert(static_cast<int>(blockbloom::IndexKind::kCounting) == blockbloom_index_counting);

// C's view of FilteredDBOptions; kind stays an int until Open checks it.
struct blockbloom_filtered_db_options_t {
  blockbloom::FilteredDBOptions rep;
  int kind = blockbloom_index_dleft;
};

extern "C" {

leveldb_filterpolicy_t* blockbloom_filterpolicy_create_blocked(double bits_per_key) {
  return blockbloom::capi::Create(&blockbloom::NewBlockedBloomFilterPolicy, bits_per_key);
}

leveldb_filterpolicy_t* blockbloom_filterpolicy_create_compact(double bits_per_key) {
  return blockbloom::capi::Create(&blockbloom::NewCompactFilterPolicy, bits_per_key);
}

leveldb_filterpolicy_t* blockbloom_filterpolicy_create_migrating_blocked(double bits_per_key) {
  return blockbloom::capi::Create(&blockbloom::NewMigratingFilterPolicy, bits_per_key);
}

leveldb_filterpolicy_t* blockbloom_filterpolicy_create_migrating_compact(double bits_per_key) {
  return blockbloom::capi::Create(&blockbloom::NewMigratingCompactFilterPolicy, bits_per_key);
}

void blockbloom_filterpolicy_destroy(leveldb_filterpolicy_t* policy) {
  if (policy != nullptr) leveldb_filterpolicy_destroy(policy);
}

unsigned char blockbloom_filterpolicy_stats(const leveldb_filterpolicy_t* policy, uint64_t* probes,
                                            uint64_t* negatives) {
  blockbloom::FilterPolicyStats stats;
  if (policy != nullptr) {
    blockbloom::capi::PolicyRegistry& r = blockbloom::capi::GetPolicyRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    const auto it = r.live.find(policy);
    if (it != r.live.end()) stats = blockbloom::GetFilterPolicyStats(it->second->policy.get());
  }
  if (probes != nullptr) *probes = stats.probes;
  if (negatives != nullptr) *negatives = stats.negatives;
  return stats.available ? 1 : 0;
}

blockbloom_filtered_db_options_t* blockbloom_filtered_db_options_create(void) {
  return new (std::nothrow) blockbloom_filtered_db_options_t;
}

void blockbloom_filtered_db_options_destroy(blockbloom_filtered_db_options_t* options) {
  delete options;
}

void blockbloom_filtered_db_options_set_expected_keys(blockbloom_filtered_db_options_t* options,
                                                      uint64_t expected_keys) {
  options->rep.expected_keys = expected_keys;
}

void blockbloom_filtered_db_options_set_target_fpr(blockbloom_filtered_db_options_t* options,
                                                   double target_fpr) {
  options->rep.target_fpr = target_fpr;
}

void blockbloom_filtered_db_options_set_kind(blockbloom_filtered_db_options_t* options, int kind) {
  options->kind = kind;
}

void blockbloom_filtered_db_options_set_persist_index(blockbloom_filtered_db_options_t* options,
                                                      unsigned char persist_index) {
  options->rep.persist_index = persist_index != 0;
}

void blockbloom_filtered_db_options_set_comparator_equality_is_bytewise(
    blockbloom_filtered_db_options_t* options, unsigned char bytewise) {
  options->rep.comparator_equality_is_bytewise = bytewise != 0;
}

void blockbloom_filtered_db_options_set_progress(
    blockbloom_filtered_db_options_t* options, void* state,
    void (*progress)(void* state, uint64_t keys_scanned), uint64_t interval_keys) {
  try {
    if (progress == nullptr) {
      options->rep.progress = nullptr;
    } else {
      options->rep.progress = [state, progress](uint64_t keys) { progress(state, keys); };
    }
  } catch (...) {
    options->rep.progress = nullptr;  // std::function cannot hold it: no progress reports
  }
  options->rep.progress_interval = interval_keys;  // FilteredDB takes 0 as 1
}

leveldb_t* blockbloom_filtered_db_open(const leveldb_options_t* options,
                                       const blockbloom_filtered_db_options_t* fdb_options,
                                       const char* name, char** errptr) {
  using blockbloom::capi::SaveError;
  try {
    if (options == nullptr || name == nullptr) {
      SaveError(errptr, leveldb::Status::InvalidArgument("blockbloom_filtered_db_open",
                                                         "options and name must not be NULL"));
      return nullptr;
    }
    blockbloom::FilteredDBOptions fdb;
    int kind = blockbloom_index_dleft;
    if (fdb_options != nullptr) {
      fdb = fdb_options->rep;
      kind = fdb_options->kind;
    }
    if (kind == blockbloom_index_dleft) {
      fdb.kind = blockbloom::IndexKind::kDleft;
    } else if (kind == blockbloom_index_counting) {
      fdb.kind = blockbloom::IndexKind::kCounting;
    } else {
      SaveError(errptr, leveldb::Status::InvalidArgument(
                            "blockbloom_filtered_db_open",
                            "kind must be blockbloom_index_dleft or blockbloom_index_counting"));
      return nullptr;
    }
    if (!blockbloom::capi_internal::CheckLevelDBHandleLayout()) {
      SaveError(errptr, leveldb::Status::NotSupported(
                            "blockbloom_filtered_db_open",
                            "this libleveldb's C API does not lay out leveldb_t / "
                            "leveldb_options_t as LevelDB 1.23 does"));
      return nullptr;
    }
    std::unique_ptr<blockbloom::FilteredDB> db;
    const leveldb::Status s = blockbloom::FilteredDB::Open(fdb, options->rep, name, &db);
    if (!s.ok()) {
      SaveError(errptr, s);
      return nullptr;
    }
    // From here every failure closes the FilteredDB (saving its index) again.
    auto rep = std::make_unique<blockbloom::capi::CFilteredDB>(
        std::move(db), blockbloom::capi::CxxPolicyOf(options->rep.filter_policy));
    auto handle = std::make_unique<leveldb_t>();
    rep->Register();
    handle->rep = rep.release();
    return handle.release();
  } catch (...) {
    SaveError(errptr, blockbloom::capi::OutOfMemory("blockbloom_filtered_db_open"));
    return nullptr;
  }
}

void blockbloom_filtered_db_save_index(leveldb_t* db, char** errptr) {
  blockbloom::capi::OnFilteredDB(db, errptr, "blockbloom_filtered_db_save_index",
                                 &blockbloom::FilteredDB::SaveIndex);
}

void blockbloom_filtered_db_rebuild_index(leveldb_t* db, char** errptr) {
  blockbloom::capi::OnFilteredDB(db, errptr, "blockbloom_filtered_db_rebuild_index",
                                 &blockbloom::FilteredDB::RebuildIndex);
}

unsigned char blockbloom_is_filtered_db(leveldb_t* db) {
  try {
    return blockbloom::capi::FilteredOf(db) != nullptr ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

void blockbloom_filtered_db_destroy_db(const leveldb_options_t* options, const char* name,
                                       char** errptr) {
  using blockbloom::capi::SaveError;
  try {
    if (options == nullptr || name == nullptr) {
      SaveError(errptr, leveldb::Status::InvalidArgument("blockbloom_filtered_db_destroy_db",
                                                         "options and name must not be NULL"));
      return;
    }
    if (!blockbloom::capi_internal::CheckLevelDBHandleLayout()) {
      SaveError(errptr, leveldb::Status::NotSupported(
                            "blockbloom_filtered_db_destroy_db",
                            "this libleveldb's C API does not lay out leveldb_options_t as "
                            "LevelDB 1.23 does"));
      return;
    }
    SaveError(errptr, blockbloom::DestroyFilteredDB(name, options->rep));
  } catch (...) {
    SaveError(errptr, blockbloom::capi::OutOfMemory("blockbloom_filtered_db_destroy_db"));
  }
}

const char* blockbloom_version(void) { return BLOCKBLOOM_VERSION_STRING; }
int blockbloom_major_version(void) { return BLOCKBLOOM_VERSION_MAJOR; }
int blockbloom_minor_version(void) { return BLOCKBLOOM_VERSION_MINOR; }

}  // extern "C"
