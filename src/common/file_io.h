// POSIX file plumbing shared by the core's .bbf files (variants/filter_file.cc)
// and FilteredDB's index file (plugin/filtered_db/index_file.cc): errno to
// absl::Status, a descriptor closed on scope exit, opening only regular files
// for reading, and the directory fsync that makes a rename or an unlink
// durable.
//
// Thread-safety: free functions with no shared state; an Fd is owned by one
// thread at a time.
#ifndef BLOCKBLOOM_COMMON_FILE_IO_H_
#define BLOCKBLOOM_COMMON_FILE_IO_H_

#include <sys/stat.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace blockbloom {
namespace internal {

// "<what> <path>: <strerror(err)>", with a code by errno: NotFound (ENOENT),
// PermissionDenied (EACCES, EPERM), ResourceExhausted (ENOSPC), AlreadyExists
// (EEXIST), else Unavailable.
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

// Opens `path` read-only if it is a regular file and fills *st from
// fstat(2); returns the descriptor, which the caller owns (wrap it in an Fd).
// O_NONBLOCK: a FIFO or device put where a file belongs reaches the
// regular-file check instead of blocking open(2) until a writer comes (a
// FIFO waits forever); it changes nothing for reads or mappings of a regular
// file. Errors: OsError's ("cannot open", "cannot stat"; NotFound for a
// missing file), InvalidArgument "<path> is not a regular file".
absl::StatusOr<int> OpenRegularFile(const std::string& path, struct stat* st);

// fsync(2) of the directory `dir`: what makes a rename into it, or an unlink
// from it, survive a power loss.
absl::Status SyncDirectory(const std::string& dir);

// The directory holding `path` ("." for a bare name, "/" for "/name").
std::string DirectoryOf(const std::string& path);

}  // namespace internal
}  // namespace blockbloom

#endif  // BLOCKBLOOM_COMMON_FILE_IO_H_
