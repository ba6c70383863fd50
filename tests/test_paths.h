// Scratch paths for tests that touch the file system.
#ifndef BLOCKBLOOM_TESTS_TEST_PATHS_H_
#define BLOCKBLOOM_TESTS_TEST_PATHS_H_

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace blockbloom {

// A path unique to this process, test and `tag` under testing::TempDir()
// (`tag` may contain '/', e.g. to name a path that cannot exist):
// ctest runs every test in its own process, in parallel, and two builds'
// suites (g++, ASan) may run at the same time on one machine.
inline std::string TestPath(const std::string& tag) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info != nullptr
                         ? std::string(info->test_suite_name()) + "." + info->name()
                         : std::string("global");
  for (char& c : test) {
    if (c == '/') c = '_';  // parameterised names contain '/'
  }
  const std::string name = "blockbloom-" + std::to_string(::getpid()) + "-" + test + "-" + tag;
  return ::testing::TempDir() + "/" + name;
}

// TestPath(tag), created as a directory.
inline std::string TestDir(const std::string& tag) {
  const std::string dir = TestPath(tag);
  ::mkdir(dir.c_str(), 0700);
  return dir;
}

}  // namespace blockbloom

#endif  // BLOCKBLOOM_TESTS_TEST_PATHS_H_
