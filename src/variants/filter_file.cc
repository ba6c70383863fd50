#include "blockbloom/filter_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "blockbloom/hash.h"
#include "blockbloom/math.h"
#include "common/coding.h"
#include "common/file_io.h"
#include "variants/probes.h"

namespace blockbloom {
namespace {

// Header field offsets (docs/FORMAT.md "Standalone filter files (.bbf)").
constexpr size_t kMagicAt = 0, kVersionAt = 8, kKindAt = 12, kKeysAt = 16, kBitsAt = 24,
                 kProbesAt = 32, kSchemeAt = 36, kFprAt = 40, kPayloadAt = 48, kReservedAt = 56;
constexpr size_t kMinFileSize = kFilterFileHeaderSize + kFilterFileChecksumSize;

using internal::DecodeFixed32;
using internal::DecodeFixed64;
using internal::Fd;
using internal::OsError;
using internal::PutFixed32;
using internal::PutFixed64;

struct Params {
  FilterKind kind;
  uint64_t num_bits;
  uint32_t num_probes;
  uint32_t scheme;
};

Params ParamsOf(const BlockedBloomFilter& f) {
  return {FilterKind::kBlocked, f.num_bits(), static_cast<uint32_t>(f.num_probes()), 0};
}
Params ParamsOf(const StandardBloomFilter& f) {
  return {FilterKind::kStandard, f.num_bits(), static_cast<uint32_t>(f.num_probes()),
          static_cast<uint32_t>(f.scheme())};
}
Params ParamsOf(const PartitionedBloomFilter& f) {
  return {FilterKind::kPartitioned, f.num_bits(), static_cast<uint32_t>(f.num_probes()), 0};
}
Params ParamsOf(const ScalableBloomFilter& f) {
  return {FilterKind::kScalable, variants::SaturatingAdd(0, f.num_bytes()) * 8, 0, 0};
}

// A moved-from filter keeps no bits and serializes as the smallest filter
// of its kind that matches every key: the header describes that filter, as
// parsed back from the payload (a live standard, partitioned or scalable
// filter has bytes; a moved-from blocked one keeps a 1-byte filter).
template <class F>
Params ParamsOfPayload(const F& filter, const std::string& payload) {
  if constexpr (!std::is_same_v<F, BlockedBloomFilter>) {
    if (filter.num_bytes() == 0) {
      absl::StatusOr<F> parsed = F::Deserialize(payload);  // a few bytes
      if (parsed.ok()) return ParamsOf(*parsed);
    }
  }
  return ParamsOf(filter);
}

template <class F>
std::string Encode(const F& filter, uint64_t num_keys, double target_fpr) {
  // A scalable filter carries its own count, and DecodePayload requires the
  // header to agree with it: any other count would make a file that cannot
  // be loaded.
  if constexpr (std::is_same_v<F, ScalableBloomFilter>) num_keys = filter.num_added();
  const std::string payload = filter.Serialize();
  const Params params = ParamsOfPayload(filter, payload);
  if (!(target_fpr >= 0 && target_fpr < 1)) target_fpr = 0;  // not recorded
  uint64_t fpr_bits;
  std::memcpy(&fpr_bits, &target_fpr, sizeof(fpr_bits));
  std::string out;
  out.reserve(kMinFileSize + payload.size());
  out.append(kFilterFileMagic, sizeof(kFilterFileMagic));
  PutFixed32(&out, kFilterFileVersion);
  PutFixed32(&out, static_cast<uint32_t>(params.kind));
  PutFixed64(&out, num_keys);
  PutFixed64(&out, params.num_bits);
  PutFixed32(&out, params.num_probes);
  PutFixed32(&out, params.scheme);
  PutFixed64(&out, fpr_bits);
  PutFixed64(&out, payload.size());
  PutFixed64(&out, 0);  // reserved
  out += payload;
  PutFixed64(&out, HashBytes(out.data(), out.size()));
  return out;
}

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("filter file: ", what));
}

// Decodes the payload as `F` and checks it against the header's parameters.
template <class F>
absl::StatusOr<AnyFilter> DecodePayload(std::string_view payload, const FilterFileInfo& info) {
  absl::StatusOr<F> f = F::Deserialize(payload);
  if (!f.ok()) {
    // Memory for a sound filter (the payload's own checks passed the bytes
    // that size it) is not damage: a caller may discard a DataLoss file.
    if (f.status().code() == absl::StatusCode::kResourceExhausted) {
      return absl::ResourceExhaustedError(absl::StrCat("filter file: ", f.status().message()));
    }
    return Corrupt(f.status().message());
  }
  const Params p = ParamsOf(*f);
  if (p.num_bits != info.num_bits || p.num_probes != info.num_probes || p.scheme != info.scheme) {
    return Corrupt("header parameters do not match the filter they describe");
  }
  if constexpr (std::is_same_v<F, StandardBloomFilter> ||
                std::is_same_v<F, PartitionedBloomFilter>) {
    f->set_num_added(info.num_keys);
  }
  if constexpr (std::is_same_v<F, ScalableBloomFilter>) {
    if (f->num_added() != info.num_keys) {
      return Corrupt("header key count does not match the scalable filter's");
    }
  }
  return AnyFilter(*std::move(f));
}

}  // namespace

const char* FilterKindName(FilterKind kind) {
  switch (kind) {
    case FilterKind::kBlocked:
      return "blocked";
    case FilterKind::kStandard:
      return "standard";
    case FilterKind::kPartitioned:
      return "partitioned";
    case FilterKind::kScalable:
      return "scalable";
  }
  return "unknown";
}

bool LoadedFilter::MayContainHash(uint64_t hash) const {
  return std::visit([hash](const auto& f) { return f.MayContainHash(hash); }, filter_);
}

bool LoadedFilter::MayContain(std::string_view key) const { return MayContainHash(HashKey(key)); }

double LoadedFilter::PredictedFpr() const {
  const double n = static_cast<double>(info_.num_keys);
  return std::visit(
      [&](const auto& f) -> double {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, BlockedBloomFilter>) {
          return BlockedBloomPredictedFpr(info_.num_keys, f.num_bytes(), f.num_probes());
        } else if constexpr (std::is_same_v<F, ScalableBloomFilter>) {
          return f.PredictedFpr();
        } else if constexpr (std::is_same_v<F, StandardBloomFilter>) {
          return *StandardFprFor(f.num_probes(), static_cast<double>(f.num_bits()), n, f.scheme());
        } else {
          return *PartitionedFprFor(f.num_probes(), static_cast<double>(f.num_bits()), n);
        }
      },
      filter_);
}

std::string EncodeFilterFile(const BlockedBloomFilter& f, uint64_t n, double p) {
  return Encode(f, n, p);
}
std::string EncodeFilterFile(const StandardBloomFilter& f, uint64_t n, double p) {
  return Encode(f, n, p);
}
std::string EncodeFilterFile(const PartitionedBloomFilter& f, uint64_t n, double p) {
  return Encode(f, n, p);
}
std::string EncodeFilterFile(const ScalableBloomFilter& f, uint64_t n, double p) {
  return Encode(f, n, p);
}
std::string EncodeFilterFile(const AnyFilter& filter, uint64_t n, double p) {
  return std::visit([&](const auto& f) { return Encode(f, n, p); }, filter);
}

absl::StatusOr<LoadedFilter> DecodeFilterFile(std::string_view bytes) {
  const char* b = bytes.data();
  if (bytes.size() < kMinFileSize) {
    return Corrupt(absl::StrCat("truncated: ", bytes.size(),
                                " bytes, but a filter file has at least ", kMinFileSize));
  }
  if (std::memcmp(b + kMagicAt, kFilterFileMagic, sizeof(kFilterFileMagic)) != 0) {
    return Corrupt("bad magic: not a blockbloom filter file (expected \"BBFILTER\")");
  }
  FilterFileInfo info;
  info.format_version = DecodeFixed32(b + kVersionAt);
  if (info.format_version != kFilterFileVersion) {
    return Corrupt(absl::StrCat("unsupported format version ", info.format_version,
                                " (this build reads version ", kFilterFileVersion, ")"));
  }
  info.payload_bytes = DecodeFixed64(b + kPayloadAt);
  info.file_bytes = bytes.size();
  if (info.payload_bytes != bytes.size() - kMinFileSize) {
    return Corrupt(absl::StrCat("size mismatch: the header declares a ", info.payload_bytes,
                                "-byte filter but the file holds ", bytes.size() - kMinFileSize,
                                " (truncated or trailing bytes)"));
  }
  const size_t body = bytes.size() - kFilterFileChecksumSize;
  if (HashBytes(b, body) != DecodeFixed64(b + body)) {
    return Corrupt("checksum mismatch: the file is damaged");
  }
  if (DecodeFixed64(b + kReservedAt) != 0) return Corrupt("reserved header bytes set");
  const uint32_t kind = DecodeFixed32(b + kKindAt);
  info.kind = static_cast<FilterKind>(kind);
  info.num_keys = DecodeFixed64(b + kKeysAt);
  info.num_bits = DecodeFixed64(b + kBitsAt);
  info.num_probes = DecodeFixed32(b + kProbesAt);
  info.scheme = DecodeFixed32(b + kSchemeAt);
  const uint64_t fpr_bits = DecodeFixed64(b + kFprAt);
  std::memcpy(&info.target_fpr, &fpr_bits, sizeof(fpr_bits));
  if (!(info.target_fpr >= 0 && info.target_fpr < 1)) return Corrupt("target FPR out of range");
  const std::string_view payload = bytes.substr(kFilterFileHeaderSize, info.payload_bytes);
  absl::StatusOr<AnyFilter> filter = [&]() -> absl::StatusOr<AnyFilter> {
    switch (info.kind) {
      case FilterKind::kBlocked:
        return DecodePayload<BlockedBloomFilter>(payload, info);
      case FilterKind::kStandard:
        return DecodePayload<StandardBloomFilter>(payload, info);
      case FilterKind::kPartitioned:
        return DecodePayload<PartitionedBloomFilter>(payload, info);
      case FilterKind::kScalable:
        return DecodePayload<ScalableBloomFilter>(payload, info);
    }
    return Corrupt(absl::StrCat("unknown structure id ", kind));
  }();
  if (!filter.ok()) return filter.status();
  return LoadedFilter(*std::move(filter), info);
}

namespace {

// WriteFileAtomically through `tmp`, created with O_WRONLY | O_CREAT |
// O_CLOEXEC | O_NOFOLLOW (a symbolic link planted at the temporary name is
// refused, never written through) | `create_flags`.
absl::Status WriteThrough(const std::string& path, const std::string& tmp, std::string_view bytes,
                          int create_flags) {
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | create_flags, 0644));
  if (fd.get() < 0) return OsError(errno, "cannot create", tmp);
  const auto fail = [&](int err, const char* what) {
    ::unlink(tmp.c_str());
    return OsError(err, what, tmp);
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return fail(errno, "cannot write");
    }
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd.get()) != 0) return fail(errno, "cannot fsync");
  if (fd.Close() != 0) return fail(errno, "cannot close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return OsError(err, "cannot rename onto", path);
  }
  // The rename is durable only once the directory's entry is: without this
  // fsync a power loss after an OK could bring back the old file (or none).
  return internal::SyncDirectory(internal::DirectoryOf(path));
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  // A name no other write uses: the process id and a per-process count, and
  // O_EXCL. With the process id alone, two threads saving the same path
  // shared one temporary: the second's O_TRUNC cut the first's bytes, and
  // the first's rename could publish the second's unfinished file.
  static std::atomic<uint64_t> next{0};
  for (int attempt = 0;; ++attempt) {
    const std::string tmp =
        absl::StrCat(path, ".tmp.", ::getpid(), ".", next.fetch_add(1, std::memory_order_relaxed));
    absl::Status s = WriteThrough(path, tmp, bytes, O_EXCL);
    // EEXIST: a leftover of a crashed process that had this pid; try the
    // next name (a few times: then the error stands).
    if (!absl::IsAlreadyExists(s) || attempt == 8) return s;
  }
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& tmp,
                                 std::string_view bytes) {
  return WriteThrough(path, tmp, bytes, O_TRUNC);
}

absl::StatusOr<LoadedFilter> LoadFilterFile(const std::string& path, const LoadOptions& options) {
  struct stat st;
  absl::StatusOr<int> opened = internal::OpenRegularFile(path, &st);
  if (!opened.ok()) return opened.status();
  const Fd fd(*opened);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > SIZE_MAX / 2) return absl::ResourceExhaustedError(path + " is too large");
  if (options.allow_mmap && size >= options.mmap_threshold && size > 0) {
    void* map = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (map != MAP_FAILED) {
      ::madvise(map, static_cast<size_t>(size), MADV_SEQUENTIAL);
      absl::StatusOr<LoadedFilter> loaded =
          DecodeFilterFile(std::string_view(static_cast<const char*>(map), size));
      ::munmap(map, static_cast<size_t>(size));
      if (loaded.ok()) {
        FilterFileInfo info = loaded->info();
        info.mmapped = true;
        return LoadedFilter(std::move(loaded->mutable_filter()), info);
      }
      return absl::Status(loaded.status().code(),
                          absl::StrCat(path, ": ", loaded.status().message()));
    }
    // Mapping refused (e.g. a file system without mmap): read instead.
  }
  std::string bytes;
  try {
    bytes.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot buffer ", size, " bytes of ", path));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t r = ::read(fd.get(), &bytes[done], bytes.size() - done);
    if (r < 0) {
      if (errno == EINTR) continue;
      return OsError(errno, "cannot read", path);
    }
    if (r == 0) break;  // shrank since fstat: decoded as truncated below
    done += static_cast<size_t>(r);
  }
  bytes.resize(done);
  absl::StatusOr<LoadedFilter> loaded = DecodeFilterFile(bytes);
  if (!loaded.ok()) {
    return absl::Status(loaded.status().code(),
                        absl::StrCat(path, ": ", loaded.status().message()));
  }
  return loaded;
}

}  // namespace blockbloom
