#include "manifest.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "sstable_inspect.h"  // MaskedCrc32c, GetVarint

namespace blockbloom {
namespace tool {
namespace {

// LevelDB's log format (doc/log_format.md).
constexpr size_t kLogBlockSize = 32768;
constexpr size_t kLogHeaderSize = 7;  // checksum:4, length:2, type:1
enum : uint8_t { kZeroType = 0, kFullType = 1, kFirstType = 2, kMiddleType = 3, kLastType = 4 };

// VersionEdit tags (db/version_edit.cc); 8 was never written.
enum : uint64_t {
  kComparator = 1,
  kLogNumber = 2,
  kNextFileNumber = 3,
  kLastSequence = 4,
  kCompactPointer = 5,
  kDeletedFile = 6,
  kNewFile = 7,
  kPrevLogNumber = 9,
};
constexpr uint64_t kNumLevels = 7;  // LevelDB's config::kNumLevels

absl::Status Damaged(const std::string& why) { return absl::DataLossError(why); }

// Every complete record of `log`, in order, to on_record(std::string_view).
template <typename OnRecord>
absl::Status ForEachRecord(std::string_view log, OnRecord&& on_record) {
  std::string fragments;
  bool in_fragments = false;
  size_t pos = 0;
  while (pos < log.size()) {
    const size_t block_left = kLogBlockSize - pos % kLogBlockSize;
    const size_t available = std::min(block_left, log.size() - pos);
    if (available < kLogHeaderSize) {
      if (available < block_left) break;  // the file ends inside a header
      pos += block_left;                  // a block's zero trailer
      continue;
    }
    const auto* h = reinterpret_cast<const uint8_t*>(log.data() + pos);
    const size_t length = h[4] | size_t{h[5]} << 8;
    const uint8_t type = h[6];
    if (kLogHeaderSize + length > available) {
      if (available < block_left) break;  // cut short at the end
      return Damaged(absl::StrFormat("a record at byte %zu overruns its block", pos));
    }
    if (type == kZeroType && length == 0) {  // a preallocated region: skip the block
      pos += block_left;
      continue;
    }
    const uint32_t stored =
        h[0] | uint32_t{h[1]} << 8 | uint32_t{h[2]} << 16 | uint32_t{h[3]} << 24;
    if (stored != MaskedCrc32c(log.data() + pos + 6, 1 + length)) {
      return Damaged(absl::StrFormat("checksum mismatch at byte %zu", pos));
    }
    const std::string_view data = log.substr(pos + kLogHeaderSize, length);
    pos += kLogHeaderSize + length;
    switch (type) {
      case kFullType:
        if (in_fragments) return Damaged("a record inside a fragmented one");
        if (absl::Status s = on_record(data); !s.ok()) return s;
        break;
      case kFirstType:
        if (in_fragments) return Damaged("a fragmented record without its end");
        fragments.assign(data.data(), data.size());
        in_fragments = true;
        break;
      case kMiddleType:
      case kLastType:
        if (!in_fragments) return Damaged("a fragment without its start");
        fragments.append(data.data(), data.size());
        if (type == kLastType) {
          in_fragments = false;
          if (absl::Status s = on_record(std::string_view(fragments)); !s.ok()) return s;
        }
        break;
      default:
        return Damaged(absl::StrFormat("unknown record type %d", type));
    }
  }
  // A fragmented record left open here was cut short: dropped, as LevelDB does.
  return absl::OkStatus();
}

bool GetLengthPrefixed(std::string_view* in) {
  uint64_t length = 0;
  if (!GetVarint(in, 32, &length) || length > in->size()) return false;
  in->remove_prefix(static_cast<size_t>(length));
  return true;
}

// The fields LevelDB's VersionSet::Recover requires some edit to have set.
struct Required {
  bool log_number = false, next_file = false, last_sequence = false;
};

// One VersionEdit applied to `files` ((level, number) pairs), as LevelDB's
// VersionSet::Builder applies it: its deletions, then its new files.
absl::Status ApplyEdit(std::string_view in, std::set<std::pair<uint64_t, uint64_t>>* files,
                       Required* required) {
  std::vector<std::pair<uint64_t, uint64_t>> deleted, added;
  while (!in.empty()) {
    uint64_t tag = 0, level = 0, number = 0, value = 0;
    if (!GetVarint(&in, 32, &tag)) return Damaged("an edit's tag does not decode");
    bool ok = true;
    switch (tag) {
      case kComparator:
        ok = GetLengthPrefixed(&in);
        break;
      case kLogNumber:
      case kNextFileNumber:
      case kLastSequence:
      case kPrevLogNumber:
        ok = GetVarint(&in, 64, &value);
        required->log_number |= ok && tag == kLogNumber;
        required->next_file |= ok && tag == kNextFileNumber;
        required->last_sequence |= ok && tag == kLastSequence;
        break;
      case kCompactPointer:
        ok = GetVarint(&in, 32, &level) && level < kNumLevels && GetLengthPrefixed(&in);
        break;
      case kDeletedFile:
        ok = GetVarint(&in, 32, &level) && level < kNumLevels && GetVarint(&in, 64, &number);
        if (ok) deleted.emplace_back(level, number);
        break;
      case kNewFile:
        ok = GetVarint(&in, 32, &level) && level < kNumLevels && GetVarint(&in, 64, &number) &&
             GetVarint(&in, 64, &value) && GetLengthPrefixed(&in) && GetLengthPrefixed(&in);
        if (ok) added.emplace_back(level, number);
        break;
      default:
        return Damaged(absl::StrFormat("unknown edit tag %d", tag));
    }
    if (!ok) return Damaged(absl::StrFormat("an edit's field (tag %d) does not decode", tag));
  }
  for (const auto& f : deleted) files->erase(f);
  for (const auto& f : added) files->insert(f);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ManifestName(std::string_view current) {
  if (current.empty() || current.back() != '\n') {
    return absl::DataLossError("CURRENT does not end with a newline");
  }
  current.remove_suffix(1);
  if (current.rfind("MANIFEST-", 0) != 0 || current.size() == 9 ||
      current.find_first_not_of("0123456789", 9) != std::string_view::npos) {
    return absl::DataLossError("CURRENT does not name a MANIFEST file");
  }
  return std::string(current);
}

absl::StatusOr<std::set<uint64_t>> LiveTableNumbers(std::string_view manifest) {
  std::set<std::pair<uint64_t, uint64_t>> files;
  Required required;
  const absl::Status s = ForEachRecord(
      manifest, [&](std::string_view edit) { return ApplyEdit(edit, &files, &required); });
  if (!s.ok()) return s;
  // As LevelDB's open: without these the database does not open.
  if (!required.next_file) return Damaged("no meta-nextfile entry in descriptor");
  if (!required.log_number) return Damaged("no meta-lognumber entry in descriptor");
  if (!required.last_sequence) return Damaged("no last-sequence-number entry in descriptor");
  std::set<uint64_t> numbers;
  for (const auto& f : files) numbers.insert(f.second);
  return numbers;
}

std::optional<uint64_t> TableNumber(std::string_view name) {
  if (name.size() < 5) return std::nullopt;
  const std::string_view ext = name.substr(name.size() - 4);
  if (ext != ".ldb" && ext != ".sst") return std::nullopt;
  const std::string_view digits = name.substr(0, name.size() - 4);
  uint64_t number = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (number > (UINT64_MAX - d) / 10) return std::nullopt;  // LevelDB's overflow rule
    number = number * 10 + d;
  }
  return number;
}

}  // namespace tool
}  // namespace blockbloom
