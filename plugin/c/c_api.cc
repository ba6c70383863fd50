// blockbloom/c.h: the C++ policies behind LevelDB's callback-based C filter
// policy (leveldb_filterpolicy_create). Each callback catches everything: no
// exception crosses into C.
#include "blockbloom/c.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "c_api_internal.h"
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"

#ifndef BLOCKBLOOM_VERSION_STRING
#error "BLOCKBLOOM_VERSION_STRING must be defined by the build (plugin/c/CMakeLists.txt)"
#endif

namespace blockbloom {
namespace capi {
namespace {

// The `state` of a C policy: owns the C++ policy.
struct PolicyState {
  std::unique_ptr<const leveldb::FilterPolicy> policy;
};

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

void Destroy(void* state) { delete static_cast<PolicyState*>(state); }

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

// Takes ownership of `policy`; NULL only if `policy` is NULL or out of memory.
leveldb_filterpolicy_t* Wrap(const leveldb::FilterPolicy* policy) {
  std::unique_ptr<const leveldb::FilterPolicy> owned(policy);
  if (owned == nullptr) return nullptr;
  auto* state = new (std::nothrow) PolicyState;
  if (state == nullptr) return nullptr;
  state->policy = std::move(owned);
  try {
    return leveldb_filterpolicy_create(state, &Destroy, &CreateFilter, &KeyMayMatch, &Name);
  } catch (...) {
    delete state;
    return nullptr;
  }
}

template <typename Factory>
leveldb_filterpolicy_t* Create(Factory factory, double bits_per_key) {
  try {
    return Wrap(factory(bits_per_key));
  } catch (...) {
    return nullptr;
  }
}

}  // namespace
}  // namespace capi
}  // namespace blockbloom

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

const char* blockbloom_version(void) { return BLOCKBLOOM_VERSION_STRING; }
int blockbloom_major_version(void) { return BLOCKBLOOM_VERSION_MAJOR; }
int blockbloom_minor_version(void) { return BLOCKBLOOM_VERSION_MINOR; }

}  // extern "C"
