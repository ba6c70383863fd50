#include "filtered_db/index_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "blockbloom/filter_file.h"
#include "blockbloom/hash.h"
#include "common/coding.h"
#include "common/file_io.h"

namespace blockbloom {
namespace filtered_db {
namespace {

constexpr char kMagic[8] = {'B', 'B', 'F', 'D', 'B', 'I', 'D', 'X'};

bool Excluded(const std::string& name) {
  return name == "." || name == ".." || name == "LOCK" || name == "LOG" || name == "LOG.old" ||
         name == kIndexFileName || name == kIndexTmpFileName;
}

bool Hashed(const std::string& name) {
  const auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return name == "CURRENT" || name.rfind("MANIFEST-", 0) == 0 || ends_with(".log");
}

// The whole of `path` if it is a regular file (internal::OpenRegularFile: a
// FIFO or device where a database file or the index belongs is refused at
// once instead of hanging FilteredDB::Open and Close; for the index, that
// means no index, rebuilt from the database).
// The rest of the open regular file `fd` (`st` its fstat, `path` for
// errors): read straight into a string sized from fstat, growing only if the
// file grew meanwhile.
absl::StatusOr<std::string> ReadAll(const internal::Fd& fd, const struct stat& st,
                                    const std::string& path) {
  std::string data;
  data.resize(st.st_size > 0 ? static_cast<size_t>(st.st_size) + 1 : size_t{1} << 16);
  size_t used = 0;
  for (;;) {
    if (used == data.size()) data.resize(2 * data.size());
    const ssize_t n = ::read(fd.get(), &data[used], data.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return internal::OsError(errno, "read", path);
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  data.resize(used);
  return data;
}

absl::StatusOr<std::string> ReadWhole(const std::string& path) {
  struct stat st;
  absl::StatusOr<int> opened = internal::OpenRegularFile(path, &st);
  if (!opened.ok()) return opened.status();
  return ReadAll(internal::Fd(*opened), st, path);
}

using internal::PutFixed32;
using internal::PutFixed64;

// Bounds-checked little-endian reader (common/coding.h's): every read fails
// once past the end.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U32(uint32_t* v) { return internal::GetFixed32(&in_, v); }
  bool U64(uint64_t* v) { return internal::GetFixed64(&in_, v); }
  bool Bytes(uint64_t n, std::string_view* v) {
    if (in_.size() < n) return false;
    *v = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  size_t left() const { return in_.size(); }

 private:
  std::string_view in_;
};

}  // namespace

absl::StatusOr<std::vector<DirEntry>> ListDbDir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return internal::OsError(errno, "opendir", dir);
  std::vector<std::string> names;
  for (struct dirent* e = ::readdir(d); e != nullptr; e = ::readdir(d)) {
    if (!Excluded(e->d_name)) names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  std::vector<DirEntry> listing;
  listing.reserve(names.size());
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;  // deleted since readdir: not there
      return internal::OsError(errno, "stat", path);
    }
    DirEntry entry;
    entry.name = name;
    entry.size_bytes = static_cast<uint64_t>(st.st_size);
    entry.device = static_cast<uint64_t>(st.st_dev);
    entry.inode = static_cast<uint64_t>(st.st_ino);
    entry.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    if (Hashed(name)) {
      auto data = ReadWhole(path);
      if (absl::IsNotFound(data.status())) continue;
      if (!data.ok()) return data.status();
      // A hashed file's size is its content's, not a racing stat's.
      entry.size_bytes = data->size();
      entry.content_hash = HashBytes(data->data(), data->size());
    }
    listing.push_back(std::move(entry));
  }
  return listing;
}

std::string EncodeIndexFile(const std::vector<DirEntry>& listing, std::string_view payload) {
  std::string out(kMagic, sizeof(kMagic));
  PutFixed32(&out, kIndexFileVersion);
  PutFixed32(&out, 0);  // flags, reserved
  PutFixed64(&out, listing.size());
  for (const DirEntry& e : listing) {
    PutFixed32(&out, static_cast<uint32_t>(e.name.size()));
    out += e.name;
    PutFixed64(&out, e.size_bytes);
    PutFixed64(&out, e.device);
    PutFixed64(&out, e.inode);
    PutFixed64(&out, static_cast<uint64_t>(e.mtime_ns));
    PutFixed64(&out, e.content_hash);
  }
  PutFixed64(&out, payload.size());
  out += payload;
  PutFixed64(&out, HashBytes(out.data(), out.size()));
  return out;
}

absl::Status WriteIndexFile(const std::string& dir, const IndexFileContents& contents) {
  return WriteFileAtomically(dir + "/" + kIndexFileName, dir + "/" + kIndexTmpFileName,
                             EncodeIndexFile(contents.listing, contents.payload));
}

absl::StatusOr<std::unique_ptr<FileBytes>> FileBytes::Load(const std::string& path) {
  std::unique_ptr<FileBytes> f(new FileBytes());
  struct stat st;
  absl::StatusOr<int> opened = internal::OpenRegularFile(path, &st);
  if (!opened.ok()) return opened.status();
  const internal::Fd fd(*opened);
  if (st.st_size > 0) {
    const size_t len = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
    if (p != MAP_FAILED) {
      f->map_ = p;
      f->map_len_ = len;
      f->bytes_ = std::string_view(static_cast<const char*>(p), len);
      return f;
    }
  }
  auto data = ReadAll(fd, st, path);  // empty or unmappable: read it, from the same open
  if (!data.ok()) return data.status();
  f->copy_ = std::move(data).value();
  f->bytes_ = f->copy_;
  return f;
}

FileBytes::~FileBytes() {
  if (map_ != nullptr) ::munmap(map_, map_len_);
}

absl::StatusOr<ParsedIndexFile> ParseIndexFile(std::string_view d) {
  const auto damaged = [](const char* why) {
    return absl::DataLossError(std::string("FilteredDB index file: ") + why);
  };
  if (d.size() < sizeof(kMagic) + 4 + 4 + 8 + 8 + 8) return damaged("too short");
  Reader tail(d.substr(d.size() - 8));
  uint64_t stored = 0;
  tail.U64(&stored);
  if (HashBytes(d.data(), d.size() - 8) != stored) return damaged("checksum mismatch");
  if (std::memcmp(d.data(), kMagic, sizeof(kMagic)) != 0) return damaged("bad magic");
  Reader in(d.substr(sizeof(kMagic), d.size() - sizeof(kMagic) - 8));
  uint32_t version = 0, flags = 0;
  uint64_t count = 0;
  if (!in.U32(&version) || !in.U32(&flags) || !in.U64(&count)) return damaged("truncated");
  if (version != kIndexFileVersion || flags != 0) return damaged("unknown version");
  ParsedIndexFile contents;
  // No reserve(count): count is the file's word; each entry is pushed only
  // once its bytes have been read.
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t name_len = 0;
    std::string_view name;
    DirEntry e;
    uint64_t mtime = 0;
    if (!in.U32(&name_len) || !in.Bytes(name_len, &name) || !in.U64(&e.size_bytes) ||
        !in.U64(&e.device) || !in.U64(&e.inode) || !in.U64(&mtime) || !in.U64(&e.content_hash)) {
      return damaged("truncated listing");
    }
    e.name = std::string(name);
    e.mtime_ns = static_cast<int64_t>(mtime);
    contents.listing.push_back(std::move(e));
  }
  uint64_t payload_len = 0;
  if (!in.U64(&payload_len) || !in.Bytes(payload_len, &contents.payload) || in.left() != 0) {
    return damaged("bad payload length");
  }
  return contents;
}

absl::StatusOr<LoadedIndexFile> ReadIndexFile(const std::string& dir) {
  auto file = FileBytes::Load(dir + "/" + kIndexFileName);
  if (!file.ok()) return file.status();
  auto parsed = ParseIndexFile((*file)->bytes());
  if (!parsed.ok()) return parsed.status();
  return LoadedIndexFile{std::move(parsed).value(), std::move(file).value()};
}

absl::Status RemoveIndexFile(const std::string& dir) {
  bool removed = false;
  for (const char* name : {kIndexFileName, kIndexTmpFileName}) {
    const std::string path = dir + "/" + name;
    if (::unlink(path.c_str()) == 0) {
      removed = true;
    } else if (errno != ENOENT && errno != ENOTDIR) {  // ENOTDIR: `dir` is no directory
      return internal::OsError(errno, "unlink", path);
    }
  }
  return removed ? internal::SyncDirectory(dir) : absl::OkStatus();
}

std::string ReadCurrent(const std::string& dir) {
  auto data = ReadWhole(dir + "/CURRENT");
  return data.ok() ? *data : std::string();
}

}  // namespace filtered_db
}  // namespace blockbloom
