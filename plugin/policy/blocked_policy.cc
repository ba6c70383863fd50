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

// The blocked policy with this target's KeyMayMatch: hash, parse, probe and
// count in one function (PolicyBase::KeyMayMatch's work without its call
// through blocked::EncodedKeyMayMatch's pointer).
class TargetBlockedPolicy final : public internal::BlockedPolicy {
 public:
  TargetBlockedPolicy(double bits_per_key, const char* name, bool migrating)
      : BlockedPolicy(bits_per_key, name, migrating, HWY_TARGET) {}

  __attribute__((flatten)) bool KeyMayMatch(const leveldb::Slice& key,
                                            const leveldb::Slice& filter) const override {
    return Answer(EncodedKeyMayMatch(key.data(), key.size(), filter.data(), filter.size()), key,
                  filter);
  }

  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    const size_t count = n > 0 ? static_cast<size_t>(n) : 0;
    const internal::BloomLayout layout = sizing().Bloom(count);
    blocked::AppendFilterBits(
        layout.bytes, layout.num_probes, layout.geometry, dst,
        [&](uint8_t* bits, blocked::Geometry geometry) {
          AddKeys(
              count, [keys](size_t i) -> const leveldb::Slice& { return keys[i]; },
              layout.bytes * 8, layout.num_probes, bits, geometry == blocked::Geometry::kFlat);
        });
  }
};

HWY_NOINLINE const internal::BlockedPolicy* NewTargetBlockedPolicy(double bits_per_key,
                                                                   const char* name,
                                                                   bool migrating) {
  return new TargetBlockedPolicy(bits_per_key, name, migrating);
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

BlockedPolicy::BlockedPolicy(double bits_per_key, const char* name, bool migrating, int64_t target)
    : PolicyBase(migrating), name_(name), sizing_(bits_per_key), target_(target) {}

const char* BlockedPolicy::Name() const { return name_; }

const BlockedPolicy* NewBlockedPolicyForTarget(int64_t target, double bits_per_key,
                                               const char* name, bool migrating) {
  if (!simd::internal::IsCompiledTarget(target)) return nullptr;
  return HWY_DISPATCH_TABLE(NewTargetBlockedPolicy)[simd::internal::DispatchTableIndex(target)](
      bits_per_key, name, migrating);
}

}  // namespace internal
}  // namespace blockbloom
#endif  // HWY_ONCE
