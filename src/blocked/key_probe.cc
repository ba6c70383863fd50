// Compile every attainable target, as simd/ does: tests prove each one
// answers as the scalar composition.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "blocked/key_probe.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "blocked/key_probe.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "blocked/key_probe-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {

// Out-of-line per-target entry points (the -inl.h functions are HWY_INLINE).
HWY_NOINLINE int EncodedKeyMayMatchKernel(const char* key, size_t key_len, const char* filter,
                                          size_t filter_len) {
  return EncodedKeyMayMatch(key, key_len, filter, filter_len);
}

HWY_NOINLINE bool MayContainKeyKernel(const char* key, size_t key_len, uint64_t total_bits,
                                      int num_probes, const uint8_t* data, bool flat) {
  return MayContainKey(key, key_len, total_bits, num_probes, data, flat);
}

HWY_NOINLINE bool MayContainKeyArgsKernel(const blocked::ProbeArgs* args, const char* key,
                                          size_t key_len) {
  return MayContainKey(key, key_len, args->total_bits, args->num_probes, args->data, args->flat);
}

HWY_NOINLINE void AddKeysKernel(const std::string_view* keys, size_t n, uint64_t total_bits,
                                int num_probes, uint8_t* data, bool flat) {
  AddKeys(
      n, [keys](size_t i) -> const std::string_view& { return keys[i]; }, total_bits, num_probes,
      data, flat);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "targets.h"

namespace blockbloom {
namespace blocked {

HWY_EXPORT(EncodedKeyMayMatchKernel);
HWY_EXPORT(MayContainKeyKernel);
HWY_EXPORT(MayContainKeyArgsKernel);
HWY_EXPORT(AddKeysKernel);

EncodedKeyMayMatchFn EncodedKeyMayMatchForTarget(int64_t target) {
  if (!simd::internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(EncodedKeyMayMatchKernel)[simd::internal::DispatchTableIndex(target)];
}

MayContainKeyFn MayContainKeyForTarget(int64_t target) {
  if (!simd::internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(MayContainKeyKernel)[simd::internal::DispatchTableIndex(target)];
}

AddKeysFn AddKeysForTarget(int64_t target) {
  if (!simd::internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(AddKeysKernel)[simd::internal::DispatchTableIndex(target)];
}

namespace {

// ChosenMayContainKeyArgs's probe (null until first use; constant-initialised).
std::atomic<MayContainKeyArgsFn> g_may_contain_key_args{nullptr};

void Resolve() {
  const int64_t probe = simd::internal::KernelTarget(simd::KernelFamily::kSingleProbe);
  const int64_t build = simd::internal::KernelTarget(simd::KernelFamily::kBuild);
  internal::g_encoded_key_may_match.store(EncodedKeyMayMatchForTarget(probe),
                                          std::memory_order_relaxed);
  internal::g_may_contain_key.store(MayContainKeyForTarget(probe), std::memory_order_relaxed);
  g_may_contain_key_args.store(
      HWY_DISPATCH_TABLE(MayContainKeyArgsKernel)[simd::internal::DispatchTableIndex(probe)],
      std::memory_order_relaxed);
  internal::g_add_keys.store(AddKeysForTarget(build), std::memory_order_relaxed);
}

int ResolveAndMatchEncoded(const char* key, size_t key_len, const char* filter, size_t filter_len) {
  Resolve();
  return EncodedKeyMayMatch(key, key_len, filter, filter_len);
}

bool ResolveAndMayContainKey(const char* key, size_t key_len, uint64_t total_bits, int num_probes,
                             const uint8_t* data, bool flat) {
  Resolve();
  return MayContainKey(key, key_len, total_bits, num_probes, data, flat);
}

void ResolveAndAddKeys(const std::string_view* keys, size_t n, uint64_t total_bits, int num_probes,
                       uint8_t* data, bool flat) {
  Resolve();
  AddKeys(keys, n, total_bits, num_probes, data, flat);
}

// ForceTargetForTesting re-resolves the pointers above.
[[maybe_unused]] const bool kRegistered = simd::internal::RegisterRetargetHook(&Resolve);

}  // namespace

MayContainKeyArgsFn ChosenMayContainKeyArgs() {
  if (g_may_contain_key_args.load(std::memory_order_relaxed) == nullptr) Resolve();
  return g_may_contain_key_args.load(std::memory_order_relaxed);
}

}  // namespace blocked

namespace internal {
std::atomic<blocked::EncodedKeyMayMatchFn> g_encoded_key_may_match{
    &blocked::ResolveAndMatchEncoded};
std::atomic<blocked::MayContainKeyFn> g_may_contain_key{&blocked::ResolveAndMayContainKey};
std::atomic<blocked::AddKeysFn> g_add_keys{&blocked::ResolveAndAddKeys};
}  // namespace internal
}  // namespace blockbloom
#endif  // HWY_ONCE
