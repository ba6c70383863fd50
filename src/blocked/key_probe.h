// Key-level probes and builds of the blocked filter on their kernel families'
// Highway targets (simd/targets.h, KernelTarget):
// hash, trailer parse and in-register probe in one function per target
// (src/blocked/key_probe-inl.h), reached through one pointer fetched once per
// process and re-fetched by simd::ForceTargetForTesting (a BlockedBloomFilter
// keeps the key probe it took when it was made, from
// ChosenMayContainKeyArgs). These are the hot paths of
// BlockedBloomFilter::MayContain and AddKeys and of the compact policies'
// KeyMayMatch (PolicyBase); the blocked policies inline
// key_probe-inl.h into a KeyMayMatch and a CreateFilter compiled per target
// instead (plugin/policy/blocked_policy.h).
//
// Thread-safety: pure functions over caller-owned memory (AddKeys writes
// `data`: one writer per filter). simd::ForceTargetForTesting must not run
// concurrently with them (simd/targets.h).
#ifndef BLOCKBLOOM_BLOCKED_KEY_PROBE_H_
#define BLOCKBLOOM_BLOCKED_KEY_PROBE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "blocked/kernel.h"  // ProbeArgs

namespace blockbloom {
namespace blocked {

// 1: the key may be in the encoded filter; 0: it is not; -1: `filter` is not
// a blocked filter (route it through format::Recognize). See
// key_probe-inl.h, EncodedKeyMayMatch.
using EncodedKeyMayMatchFn = int (*)(const char* key, size_t key_len, const char* filter,
                                     size_t filter_len);
// Whether the key may be in raw filter bits (total_bits == 0: the empty set).
// REQUIRES: 1 <= num_probes <= 16; data holds ceil(total_bits / 8) bytes.
using MayContainKeyFn = bool (*)(const char* key, size_t key_len, uint64_t total_bits,
                                 int num_probes, const uint8_t* data, bool flat);
// Sets the bits of keys[0, n) in raw filter bits laid out flat or in 512-bit
// blocks: key_probe-inl.h's AddKeys (hash and set in one loop).
// REQUIRES: total_bits > 0 if n > 0, 1 <= num_probes <= 16; data holds
// ceil(total_bits / 8) writable bytes.
using AddKeysFn = void (*)(const std::string_view* keys, size_t n, uint64_t total_bits,
                           int num_probes, uint8_t* data, bool flat);

}  // namespace blocked

namespace internal {
// The chosen target's entry points; each starts as a resolver that replaces
// all three on first call (constant-initialised: usable during static init).
extern std::atomic<blocked::EncodedKeyMayMatchFn> g_encoded_key_may_match;
extern std::atomic<blocked::MayContainKeyFn> g_may_contain_key;
extern std::atomic<blocked::AddKeysFn> g_add_keys;
}  // namespace internal

namespace blocked {

inline int EncodedKeyMayMatch(const char* key, size_t key_len, const char* filter,
                              size_t filter_len) {
  return internal::g_encoded_key_may_match.load(std::memory_order_relaxed)(key, key_len, filter,
                                                                           filter_len);
}

inline bool MayContainKey(const char* key, size_t key_len, uint64_t total_bits, int num_probes,
                          const uint8_t* data, bool flat) {
  return internal::g_may_contain_key.load(std::memory_order_relaxed)(key, key_len, total_bits,
                                                                     num_probes, data, flat);
}

inline void AddKeys(const std::string_view* keys, size_t n, uint64_t total_bits, int num_probes,
                    uint8_t* data, bool flat) {
  internal::g_add_keys.load(std::memory_order_relaxed)(keys, n, total_bits, num_probes, data, flat);
}

// The same probe on the same target reading the filter from `args`
// (blocked::ProbeArgs), for objects that keep their own pointer and their
// ProbeArgs (BlockedBloomFilter); resolved first if it was not yet.
using MayContainKeyArgsFn = bool (*)(const ProbeArgs* args, const char* key, size_t key_len);
MayContainKeyArgsFn ChosenMayContainKeyArgs();

// The entry points compiled for `target` (a bit of simd::SupportedTargets()),
// for tests and benchmarks; nullptr if that target is not compiled.
EncodedKeyMayMatchFn EncodedKeyMayMatchForTarget(int64_t target);
MayContainKeyFn MayContainKeyForTarget(int64_t target);
AddKeysFn AddKeysForTarget(int64_t target);

}  // namespace blocked
}  // namespace blockbloom

#endif  // BLOCKBLOOM_BLOCKED_KEY_PROBE_H_
