// Compiled for every attainable target, as simd/ and the policies are, so
// that the dispatch table indexes like theirs.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include "uncounted_policy.h"

#include <cstdlib>
#include <string>

#include "leveldb/slice.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "uncounted_policy.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "blocked/key_probe-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {

class UncountedTargetPolicy final : public leveldb::FilterPolicy {
 public:
  const char* Name() const override { return "blockbloom.bench.uncounted"; }
  void CreateFilter(const leveldb::Slice*, int, std::string*) const override { std::abort(); }
  __attribute__((flatten)) bool KeyMayMatch(const leveldb::Slice& key,
                                            const leveldb::Slice& filter) const override {
    return EncodedKeyMayMatch(key.data(), key.size(), filter.data(), filter.size()) != 0;
  }
};

HWY_NOINLINE const leveldb::FilterPolicy* NewUncountedTargetPolicy() {
  return new UncountedTargetPolicy();
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "targets.h"

namespace blockbloom {
namespace bench {

HWY_EXPORT(NewUncountedTargetPolicy);

const leveldb::FilterPolicy& UncountedPolicy() {
  static const leveldb::FilterPolicy* p =
      HWY_DISPATCH_TABLE(NewUncountedTargetPolicy)[simd::internal::DispatchTableIndex(
          simd::internal::KernelTarget(simd::KernelFamily::kSingleProbe))]();
  return *p;
}

}  // namespace bench
}  // namespace blockbloom
#endif  // HWY_ONCE
