// Compile every attainable target, as simd/ does, so the dispatch tables here
// index like theirs (simd::internal::DispatchTableIndex).
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "policy/blocked_policy.h"

#include <string>

#include "blocked/format.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "policy/blocked_policy.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "blocked/key_probe-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {

// This target's build of a policy's keys into zeroed filter bits: hash and
// set in one loop (key_probe-inl.h, AddKeys).
HWY_NOINLINE void AddSliceKeysKernel(const leveldb::Slice* keys, size_t n, uint64_t total_bits,
                                     int num_probes, uint8_t* bits, bool flat) {
  AddKeys(
      n, [keys](size_t i) -> const leveldb::Slice& { return keys[i]; }, total_bits, num_probes,
      bits, flat);
}

// The blocked policy with this target's KeyMayMatch: hash, parse, probe and
// count in one function (PolicyBase::KeyMayMatch's work without its call
// through blocked::EncodedKeyMayMatch's pointer).
class TargetBlockedPolicy final : public internal::BlockedPolicy {
 public:
  TargetBlockedPolicy(double bits_per_key, const char* name, bool migrating, int64_t build_target)
      : BlockedPolicy(bits_per_key, name, migrating, HWY_TARGET, build_target) {}

  __attribute__((flatten)) bool KeyMayMatch(const leveldb::Slice& key,
                                            const leveldb::Slice& filter) const override {
    return Answer(EncodedKeyMayMatch(key.data(), key.size(), filter.data(), filter.size()), key,
                  filter);
  }

  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    AppendBloom(keys, n > 0 ? static_cast<size_t>(n) : 0, dst);
  }
};

HWY_NOINLINE const internal::BlockedPolicy* NewTargetBlockedPolicy(double bits_per_key,
                                                                   const char* name, bool migrating,
                                                                   int64_t build_target) {
  return new TargetBlockedPolicy(bits_per_key, name, migrating, build_target);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "targets.h"

namespace blockbloom {
namespace internal {

HWY_EXPORT(NewTargetBlockedPolicy);
HWY_EXPORT(AddSliceKeysKernel);

BlockedPolicy::BlockedPolicy(double bits_per_key, const char* name, bool migrating, int64_t target,
                             int64_t build_target)
    : PolicyBase(migrating),
      name_(name),
      sizing_(FilterSizing::For(bits_per_key)),
      target_(target),
      build_target_(build_target),
      add_keys_(HWY_DISPATCH_TABLE(
          AddSliceKeysKernel)[simd::internal::DispatchTableIndex(build_target)]) {}

const char* BlockedPolicy::Name() const { return name_; }

void BlockedPolicy::AppendBloom(const leveldb::Slice* keys, size_t count, std::string* dst) const {
  const BloomLayout layout = sizing_->Bloom(count);
  blocked::AppendFilterBits(layout.bytes, layout.num_probes, layout.geometry, dst,
                            [&](uint8_t* bits, blocked::Geometry geometry) {
                              add_keys_(keys, count, layout.bytes * 8, layout.num_probes, bits,
                                        geometry == blocked::Geometry::kFlat);
                            });
}

const BlockedPolicy* NewBlockedPolicyForTarget(int64_t target, double bits_per_key,
                                               const char* name, bool migrating,
                                               int64_t build_target) {
  if (build_target == 0) build_target = target;
  if (!simd::internal::IsCompiledTarget(target) ||
      !simd::internal::IsCompiledTarget(build_target)) {
    return nullptr;
  }
  return HWY_DISPATCH_TABLE(NewTargetBlockedPolicy)[simd::internal::DispatchTableIndex(target)](
      bits_per_key, name, migrating, build_target);
}

}  // namespace internal
}  // namespace blockbloom
#endif  // HWY_ONCE
