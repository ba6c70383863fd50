// POSIX file plumbing shared by the core's .bbf files (variants/filter_file.cc)
// and FilteredDB's index file (plugin/filtered_db/index_file.cc): errno to
// absl::Status, a descriptor closed on scope exit, and the directory fsync
// that makes a rename or an unlink durable.
//
// Thread-safety: free functions with no shared state; an Fd is owned by one
// thread at a time.
#ifndef BLOCKBLOOM_COMMON_FILE_IO_H_
#define BLOCKBLOOM_COMMON_FILE_IO_H_

#include <string>

#include "absl/status/status.h"

namespace blockbloom {
namespace internal {

// "<what> <path>: <strerror(err)>", with a code by errno: NotFound (ENOENT),
// PermissionDenied (EACCES, EPERM), ResourceExhausted (ENOSPC), else
// Unavailable.
absl::Status OsError(int err, const char* what, const std::string& path);

// Closes a descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  // Closes now and returns close(2)'s result (it can report a failed write).
  int Close();
  // Gives up ownership: returns the descriptor, which this no longer closes.
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

// fsync(2) of the directory `dir`: what makes a rename into it, or an unlink
// from it, survive a power loss.
absl::Status SyncDirectory(const std::string& dir);

// The directory holding `path` ("." for a bare name, "/" for "/name").
std::string DirectoryOf(const std::string& path);

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMMON_FILE_IO_H_
