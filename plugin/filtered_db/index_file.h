// FilteredDB's persisted index file and the database-directory listing that
// decides whether it may be trusted (docs/FILTERED_DB.md, "Persisted index";
// byte layout in docs/FORMAT.md, "FilteredDB index file"). POSIX only.
// Thread-safety: free functions with no shared state; callers serialize
// access to one directory.
#ifndef BLOCKBLOOM_FILTERED_DB_INDEX_FILE_H_
#define BLOCKBLOOM_FILTERED_DB_INDEX_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace blockbloom {
namespace filtered_db {

constexpr char kIndexFileName[] = "BLOCKBLOOM-INDEX";
constexpr char kIndexTmpFileName[] = "BLOCKBLOOM-INDEX.tmp";
constexpr uint32_t kIndexFileVersion = 4;

// One file of the database directory as it was when the index was saved.
struct DirEntry {
  std::string name;
  uint64_t size_bytes = 0;
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t mtime_ns = 0;
  // XXH3-64 of the whole content for CURRENT, MANIFEST-* and *.log (the files
  // LevelDB appends to or rewrites), 0 for the others (immutable tables).
  uint64_t content_hash = 0;
  bool operator==(const DirEntry& o) const {
    return name == o.name && size_bytes == o.size_bytes && device == o.device && inode == o.inode &&
           mtime_ns == o.mtime_ns && content_hash == o.content_hash;
  }
};

// Every entry of `dir` except LOCK, LOG, LOG.old and the index files, sorted
// by name. A file deleted between readdir and stat is left out (it is gone);
// any other error is returned.
absl::StatusOr<std::vector<DirEntry>> ListDbDir(const std::string& dir);

struct IndexFileContents {
  std::vector<DirEntry> listing;
  std::string payload;  // KeyIndex::Serialize
};

// A whole file's bytes, read-only: mapped (MAP_POPULATE: the page cache's
// pages, no copy, no zero-filled buffer) or, where mapping fails, read into
// memory. The bytes must not change while the object lives: FilteredDB
// holds the directory lock, so only it writes the index file.
class FileBytes {
 public:
  static absl::StatusOr<std::unique_ptr<FileBytes>> Load(const std::string& path);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  std::string_view bytes() const { return bytes_; }

 private:
  FileBytes() = default;
  void* map_ = nullptr;  // when mapped
  size_t map_len_ = 0;
  std::string copy_;  // when read
  std::string_view bytes_;
};

// The index file as parsed from bytes in memory: `payload` points into them.
struct ParsedIndexFile {
  std::vector<DirEntry> listing;
  std::string_view payload;  // KeyIndex::Serialize
};

// The index file as read: parsed from `file`, which `payload` points into.
struct LoadedIndexFile : ParsedIndexFile {
  std::unique_ptr<FileBytes> file;
};

// The whole file WriteIndexFile writes for `listing` and `payload`
// (docs/FORMAT.md, "FilteredDB index file"), checksum included.
std::string EncodeIndexFile(const std::vector<DirEntry>& listing, std::string_view payload);
// Parses a whole index file held in memory, touching no filesystem: what
// ReadIndexFile does once the bytes are loaded (and the fuzz target
// fuzz/index_file_bytes_fuzz.cc's entry point). Reads only `bytes`, and
// allocates only for listing entries whose bytes are present. DataLoss on any
// damage (size, checksum, magic, version, flags, lengths); the payload itself
// is not looked at (KeyIndex::Deserialize checks it).
absl::StatusOr<ParsedIndexFile> ParseIndexFile(std::string_view bytes);

// Writes dir/BLOCKBLOOM-INDEX atomically: blockbloom::WriteFileAtomically
// through dir/BLOCKBLOOM-INDEX.tmp (write, fsync, rename, fsync of the
// directory). On error the old file (if any) is intact or absent, never
// partial.
absl::Status WriteIndexFile(const std::string& dir, const IndexFileContents& contents);
// NotFound when absent; DataLoss on any damage (size, magic, version,
// checksum, lengths); IOError on read errors.
absl::StatusOr<LoadedIndexFile> ReadIndexFile(const std::string& dir);
// Removes the index file and any leftover tmp file, then fsyncs the
// directory. OK when neither exists (nor `dir`); an error (Internal, with
// errno's text) when one exists and cannot be removed.
absl::Status RemoveIndexFile(const std::string& dir);

// The CURRENT file's bytes ("" if unreadable).
std::string ReadCurrent(const std::string& dir);

}  // namespace filtered_db
}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTERED_DB_INDEX_FILE_H_
