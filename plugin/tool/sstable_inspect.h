// Reads the filter block of a LevelDB table file (.ldb / .sst) straight from
// its bytes, following LevelDB's documented table format (doc/table_format.md
// of google/leveldb), without opening the database:
//
//   footer (last 48 bytes): metaindex BlockHandle, index BlockHandle
//     (each varint64 offset, varint64 size), zero padding to 40 bytes,
//     magic 0xdb4775248b80fb57 (fixed64, little-endian)
//   block: contents, then a 5-byte trailer: 1 type byte (0 = raw,
//     1 = snappy) and the masked CRC-32C of contents + type
//   block contents: entries (varint32 shared, varint32 non-shared,
//     varint32 value length, key delta, value), then u32 restart offsets and
//     a u32 restart count
//   metaindex: "filter.<policy name>" -> BlockHandle of the filter block
//   filter block: filters, u32 offset of each, u32 offset of that array,
//     1 byte lg(base) (11: one filter per 2 KiB of data-block offsets)
//
// Keys per filter come from the data blocks (each entry of the data block at
// offset O went into filter O >> lg(base)). Every read is bounds-checked;
// anything malformed is reported in TableReport::error. The index must name
// data blocks in file order, each starting at or after the end of the one
// before (as LevelDB writes them), so each block is read once and the work is
// bounded by the file's size. So is the FPR model's: a table whose filters
// would need more model work than its size allows (none LevelDB writes) is
// reported with an unknown FPR.
//
// Thread-safety: pure functions.
#ifndef BLOCKBLOOM_TOOL_SSTABLE_INSPECT_H_
#define BLOCKBLOOM_TOOL_SSTABLE_INSPECT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace blockbloom {
namespace tool {

// Bit v for trailer version v < 31; bit 31 for any other (a damaged
// trailer's version byte).
inline uint32_t VersionBit(int version) {
  return version >= 0 && version < 31 ? uint32_t{1} << version : uint32_t{1} << 31;
}

struct TableReport {
  std::string error;         // empty when the table was read completely
  std::string policy_name;   // "" when the table has no filter block
  uint64_t num_filters = 0;  // filter slots, including empty ones
  uint64_t nonempty_filters = 0;
  uint64_t filter_bytes = 0;  // sum of filter sizes (trailers included)
  uint64_t num_keys = 0;      // table entries (= keys given to the filters)
  int base_lg = 0;
  // Filters by encoding, recognised by their trailer: blockbloom's blocked
  // format (ParseFilter), LevelDB's built-in (last byte k <= 30), other.
  uint64_t blocked_filters = 0, compact_filters = 0, builtin_filters = 0, unknown_filters = 0;
  // The trailer versions seen (VersionBit) of the blocked and of the compact
  // filters: a table may hold several (a compact policy writes version 2 for
  // up to 65,536 keys and version 1 above).
  uint32_t blocked_versions = 0;
  uint32_t compact_versions = 0;
  int min_probes = 0, max_probes = 0;
  // Model FPR averaged over filters, weighted by their keys (a query for an
  // absent key probes the one filter of the data block it falls in).
  double predicted_fpr = 0;
  bool fpr_known = false;  // false if any non-empty filter is unknown
  // The blocked version-1 model would need more work than the file's size
  // allows (sstable_inspect.cc: kModelTermsPerByte; no table LevelDB writes
  // comes near): the rest of its filters were not modelled, fpr_known is
  // false.
  bool model_work_exceeded = false;
};

// `contents` is the whole table file.
TableReport InspectTable(std::string_view contents);

// LevelDB's masked CRC-32C (Castagnoli), as stored in block trailers and
// log records.
uint32_t MaskedCrc32c(const char* data, size_t n);

// Reads a varint (LevelDB's: 7 bits per byte, little-endian groups) of at
// most `max_bits` from *in, advancing it. False if malformed or cut short.
bool GetVarint(std::string_view* in, int max_bits, uint64_t* value);

}  // namespace tool
}  // namespace blockbloom

#endif  // BLOCKBLOOM_TOOL_SSTABLE_INSPECT_H_
