// Which table files belong to a LevelDB database's current version, for
// `blockbloom inspect`: CURRENT names the MANIFEST, a LevelDB log
// (LevelDB's doc/log_format.md: 32 KiB blocks of checksummed records,
// fragmented across blocks) of VersionEdit records (db/version_edit.cc);
// replaying their new-file and deleted-file entries gives the live tables.
// A directory also holds tables that are not live: the output of a
// compaction being written, or one a close or crash interrupted (LevelDB
// deletes those at its next open). Those are not damage.
//
// Read-only: safe on a database another process has open.
//
// Thread-safety: pure functions.
#ifndef BLOCKBLOOM_TOOL_MANIFEST_H_
#define BLOCKBLOOM_TOOL_MANIFEST_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace blockbloom {
namespace tool {

// The MANIFEST file name CURRENT's contents name ("MANIFEST-000005\n").
absl::StatusOr<std::string> ManifestName(std::string_view current);

// The file numbers of the live tables after every edit of `manifest` (the
// whole file). A record cut short at the end (a writer mid-append) ends the
// log, as LevelDB's reader takes it; any other damage (a bad checksum, a
// record that does not decode, no edit setting the next file number, the
// log number or the last sequence) is an error, as it is to LevelDB's open.
absl::StatusOr<std::set<uint64_t>> LiveTableNumbers(std::string_view manifest);

// The number of a table file's name ("000123.ldb" or the older
// "000123.sst"); nullopt for any other name.
std::optional<uint64_t> TableNumber(std::string_view name);

}  // namespace tool
}  // namespace blockbloom

#endif  // BLOCKBLOOM_TOOL_MANIFEST_H_
