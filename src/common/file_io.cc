#include "common/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace blockbloom {
namespace internal {

absl::Status OsError(int err, const char* what, const std::string& path) {
  const std::string msg = absl::StrCat(what, " ", path, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case ENOSPC:
      return absl::ResourceExhaustedError(msg);
    case EEXIST:
      return absl::AlreadyExistsError(msg);
    default:
      return absl::UnavailableError(msg);
  }
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

int Fd::Close() {
  const int r = ::close(fd_);
  fd_ = -1;
  return r;
}

absl::StatusOr<int> OpenRegularFile(const std::string& path, struct stat* st) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return OsError(errno, "cannot open", path);
  if (::fstat(fd.get(), st) != 0) return OsError(errno, "cannot stat", path);
  if (!S_ISREG(st->st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  }
  return fd.Release();
}

absl::Status SyncDirectory(const std::string& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return OsError(errno, "cannot open directory", dir);
  if (::fsync(fd.get()) != 0) return OsError(errno, "cannot fsync directory", dir);
  return absl::OkStatus();
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace internal
}  // namespace blockbloom
