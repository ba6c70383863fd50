// Scratch paths for tests that touch the file system.
//
// Every path lives in one directory per test process, created on first use
// under testing::TempDir() (TEST_TMPDIR, else /tmp) as
// blockbloom-<pid>-XXXXXX, and removed with everything in it when the process
// exits normally. ctest runs every TEST in its own process, in parallel, and
// two builds' suites (g++, ASan) may run at the same time on one machine:
// each gets its own directory. A process that dies (a crash, an abort) leaves
// its directory behind for inspection; a forked child never removes its
// parent's.
//
// Thread-safety: safe from any thread (the directory is created once, under
// C++11 static initialisation).
#ifndef BLOCKBLOOM_TESTS_TEST_PATHS_H_
#define BLOCKBLOOM_TESTS_TEST_PATHS_H_

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace blockbloom {
namespace test_paths_internal {

class ProcessTempDir {
 public:
  ProcessTempDir() : owner_(::getpid()) {
    std::string root = ::testing::TempDir();
    if (root.empty() || root.back() != '/') root.push_back('/');
    std::string tmpl = root + "blockbloom-" + std::to_string(owner_) + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::perror(("blockbloom tests: mkdtemp " + tmpl).c_str());
      std::abort();
    }
    path_ = tmpl;
  }
  ~ProcessTempDir() {
    if (::getpid() != owner_) return;  // a forked child: the parent owns it
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ProcessTempDir(const ProcessTempDir&) = delete;
  ProcessTempDir& operator=(const ProcessTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  pid_t owner_;
  std::string path_;
};

}  // namespace test_paths_internal

// This process's scratch directory (see the top of this file).
inline const std::string& TestTempDir() {
  static test_paths_internal::ProcessTempDir dir;
  return dir.path();
}

// A path unique to this test and `tag` inside TestTempDir() (`tag` may
// contain '/', e.g. to name a path that cannot exist). Nothing is created.
inline std::string TestPath(const std::string& tag) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info != nullptr ? std::string(info->test_suite_name()) + "." + info->name()
                                     : std::string("global");
  for (char& c : test) {
    if (c == '/') c = '_';  // parameterised names contain '/'
  }
  return TestTempDir() + "/" + test + "-" + tag;
}

// TestPath(tag), created as a directory.
inline std::string TestDir(const std::string& tag) {
  const std::string dir = TestPath(tag);
  ::mkdir(dir.c_str(), 0700);
  return dir;
}

}  // namespace blockbloom

#endif  // BLOCKBLOOM_TESTS_TEST_PATHS_H_
