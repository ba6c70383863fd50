// Standalone filter files (.bbf): any filter of this library saved to disk
// with a self-describing header and a checksum over the whole, for sets that
// do not live in LevelDB (a crawler's billion seen URLs).
//
//   blockbloom::StandardBloomFilter seen = ...;
//   absl::Status s = blockbloom::SaveFilterFile("seen.bbf", seen, seen.num_added());
//   absl::StatusOr<blockbloom::LoadedFilter> f = blockbloom::LoadFilterFile("seen.bbf");
//   if (f.ok() && f->MayContain(url)) ...
//
// Layout (docs/FORMAT.md, "Standalone filter files (.bbf)"): a 64-byte
// header (magic "BBFILTER", format version, structure id, key count, bits,
// probes, scheme, target FPR, payload size), the structure's own Serialize()
// bytes, and XXH3-64 (seed 0) of everything before it. A load checks, in this
// order and each with its own message: length, magic, version, declared size
// against the real size, checksum, reserved fields, target FPR (in [0, 1)),
// structure id, the payload (the structure's Deserialize), and that header
// and payload agree. Any
// failure is a DataLoss (or NotFound / PermissionDenied ... from the OS)
// status, except that a sound file whose filter memory cannot be allocated is
// ResourceExhausted (never DataLoss: it is not damaged); a file that loads is
// bit-for-bit the filter that was saved.
//
// Loading: files of at least LoadOptions::mmap_threshold bytes are mapped
// read-only (mmap + MADV_SEQUENTIAL) and copied into the filter's own memory,
// which avoids a second full-size buffer; if mapping fails the file is read
// with read(2). The mapping is released before LoadFilterFile returns. Do not
// truncate a file while another process loads it (a mapped read past the new
// end raises SIGBUS; the read path reports a size mismatch).
//
// Thread-safety: the functions are safe from any thread on distinct paths.
// LoadedFilter's const methods may run concurrently with each other;
// mutable_filter() (e.g. to add keys to a loaded filter) and anything done
// through it need exclusive access, as for the structure itself.
#ifndef BLOCKBLOOM_FILTER_FILE_H_
#define BLOCKBLOOM_FILTER_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/partitioned_bloom.h"
#include "blockbloom/scalable_bloom.h"
#include "blockbloom/standard_bloom.h"

namespace blockbloom {

inline constexpr char kFilterFileMagic[8] = {'B', 'B', 'F', 'I', 'L', 'T', 'E', 'R'};
inline constexpr uint32_t kFilterFileVersion = 1;
inline constexpr size_t kFilterFileHeaderSize = 64;
inline constexpr size_t kFilterFileChecksumSize = 8;

// Structure ids in the header. Values are part of the format: never reuse.
enum class FilterKind : uint32_t {
  kBlocked = 1,
  kStandard = 2,
  kPartitioned = 3,
  kScalable = 4,
};
const char* FilterKindName(FilterKind kind);  // "blocked", "standard", ...

using AnyFilter = std::variant<BlockedBloomFilter, StandardBloomFilter, PartitionedBloomFilter,
                               ScalableBloomFilter>;

// What the header says (validated against the payload on load).
struct FilterFileInfo {
  FilterKind kind = FilterKind::kBlocked;
  uint32_t format_version = kFilterFileVersion;
  uint64_t num_keys = 0;    // keys the writer added (may count duplicates)
  uint64_t num_bits = 0;    // filter bits (scalable: all stages)
  uint32_t num_probes = 0;  // k (scalable: 0, each stage has its own)
  uint32_t scheme = 0;      // HashScheme for kStandard, else 0
  double target_fpr = 0;    // what the writer asked for; 0 = not recorded
  uint64_t payload_bytes = 0;
  uint64_t file_bytes = 0;
  bool mmapped = false;  // set by LoadFilterFile
};

class LoadedFilter {
 public:
  LoadedFilter(AnyFilter filter, FilterFileInfo info) : filter_(std::move(filter)), info_(info) {}

  bool MayContain(std::string_view key) const;
  bool MayContainHash(uint64_t hash) const;
  // The structure's model FPR for info().num_keys keys.
  double PredictedFpr() const;

  const AnyFilter& filter() const { return filter_; }
  // The loaded structure, to add keys to it (then SaveFilterFile it again).
  // Not thread-safe against any other call on this object.
  AnyFilter& mutable_filter() { return filter_; }
  const FilterFileInfo& info() const { return info_; }

 private:
  AnyFilter filter_;
  FilterFileInfo info_;
};

// The whole file's bytes. `num_keys` is recorded in the header (the blocked
// filter does not count what it holds once deserialized); `target_fpr` in
// [0, 1) is informational (0 = not recorded). A scalable filter records its
// own count in its payload, and the header takes that count (num_added()):
// `num_keys` is ignored for it, so the header can never contradict it.
std::string EncodeFilterFile(const BlockedBloomFilter& filter, uint64_t num_keys,
                             double target_fpr = 0);
std::string EncodeFilterFile(const StandardBloomFilter& filter, uint64_t num_keys,
                             double target_fpr = 0);
std::string EncodeFilterFile(const PartitionedBloomFilter& filter, uint64_t num_keys,
                             double target_fpr = 0);
std::string EncodeFilterFile(const ScalableBloomFilter& filter, uint64_t num_keys,
                             double target_fpr = 0);
std::string EncodeFilterFile(const AnyFilter& filter, uint64_t num_keys, double target_fpr = 0);
absl::StatusOr<LoadedFilter> DecodeFilterFile(std::string_view bytes);

// Writes `bytes` to `path` atomically and durably: a temporary file in the
// same directory, fsync, rename, fsync of the directory. An existing file is
// replaced only by a complete new one; on error before the rename it is
// untouched and the temporary is removed. An error from the directory's fsync
// comes after the rename: the new file is in place, its durability unknown.
// The temporary's name is unique to the call (path.tmp.<pid>.<n>, created
// with O_EXCL), so concurrent writes of one path each publish a whole file;
// a symbolic link at the temporary name is refused (O_NOFOLLOW).
// Thread-safe.
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes);
// The same through the temporary file `tmp` (in path's directory; replaced
// if it exists) instead of a per-process name: for files whose temporary
// name other code knows (FilteredDB's index file: its directory listing
// leaves the name out, its removal cleans it up). A symbolic link at `tmp` is
// refused. REQUIRES: no concurrent write through the same `tmp`.
absl::Status WriteFileAtomically(const std::string& path, const std::string& tmp,
                                 std::string_view bytes);

// EncodeFilterFile + WriteFileAtomically, for any of the filter types above.
template <class Filter>
absl::Status SaveFilterFile(const std::string& path, const Filter& filter, uint64_t num_keys,
                            double target_fpr = 0) {
  return WriteFileAtomically(path, EncodeFilterFile(filter, num_keys, target_fpr));
}

struct LoadOptions {
  bool allow_mmap = true;
  uint64_t mmap_threshold = uint64_t{1} << 20;  // 1 MiB: below, read(2) is as fast
};
absl::StatusOr<LoadedFilter> LoadFilterFile(const std::string& path,
                                            const LoadOptions& options = LoadOptions());

}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTER_FILE_H_
