// Whether this test binary is built with a sanitizer (CI runs every unit test
// twice: uninstrumented, then under ASan+UBSan, whose job is memory errors).
// Pure statistics checks take the instrumented run's time without finding
// anything the uninstrumented run does not: they shrink or skip there.
#ifndef BLOCKBLOOM_TESTS_SANITIZERS_H_
#define BLOCKBLOOM_TESTS_SANITIZERS_H_

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BLOCKBLOOM_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(undefined_behavior_sanitizer)
#define BLOCKBLOOM_UNDER_SANITIZER 1
#endif
#endif
#ifndef BLOCKBLOOM_UNDER_SANITIZER
#define BLOCKBLOOM_UNDER_SANITIZER 0
#endif

namespace blockbloom {
namespace testing_build {
inline constexpr bool kUnderSanitizer = BLOCKBLOOM_UNDER_SANITIZER != 0;
}  // namespace testing_build
}  // namespace blockbloom

#endif  // BLOCKBLOOM_TESTS_SANITIZERS_H_
