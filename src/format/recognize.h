// One recognizer for every filter encoding a LevelDB filter block can hold.
//
// LevelDB hands a policy the bytes of one filter; which encoding they are is
// read from the last byte (and, for blockbloom's formats, the trailer before
// it). This is the only place that table lives; the LevelDB policies
// (plugin/policy/), the `inspect` tool (plugin/tool/sstable_inspect.cc) and the
// fuzzers all go through it, in the spirit of RocksDB's
// GetBuiltinFilterBitsReader (table/block_based/filter_policy.cc).
//
//   size < 2                     kEmpty      matches nothing. LevelDB's own
//                                            reader (util/bloom.cc, 1.23:
//                                            "if (len < 2) return false")
//                                            answers "no"; no blockbloom
//                                            encoding is shorter than 2 bytes.
//   last byte <= 30              kLevelDbBuiltin  k of LevelDB's Bloom filter;
//                                            read from the key, not a hash
//                                            (format/leveldb_bloom.h).
//   0xBB                         kBlocked    src/blocked/format.h
//   0xCF                         kCompact v1 src/compact/format.h
//   0x40..0x5F                   kCompact v2 src/compact/format.h
//   anything else above 30       kUnknown    "may match" (as LevelDB answers
//                                            any last byte above 30)
//
// A recognized blockbloom filter whose trailer is damaged, truncated or from
// a newer version still reads as "may match" (its reader's rule): the
// recognizer only routes, it never rejects.
//
// Thread-safety: pure functions over caller-owned bytes.
#ifndef BLOCKBLOOM_FORMAT_RECOGNIZE_H_
#define BLOCKBLOOM_FORMAT_RECOGNIZE_H_

#include <cstdint>
#include <string_view>

#include "blocked/format.h"
#include "compact/format.h"

namespace blockbloom {
namespace format {

enum class FilterKind : uint8_t {
  kEmpty,           // < 2 bytes: matches nothing
  kBlocked,         // blockbloom blocked Bloom filter
  kCompact,         // blockbloom compact filter (version 1 or 2)
  kLevelDbBuiltin,  // leveldb::NewBloomFilterPolicy's format
  kUnknown,         // last byte above 30 and not ours: may match
};

// Whether the key with this 64-bit hash (blockbloom::HashKey) may be in the
// filter. Never reads outside `filter`.
using HashReader = bool (*)(std::string_view filter, uint64_t hash);

struct Recognized {
  FilterKind kind = FilterKind::kUnknown;
  // Trailer version for kBlocked and kCompact as the trailer states it (a
  // version this build cannot read still reads as "may match"); LevelDB's k
  // for kLevelDbBuiltin; 0 otherwise.
  int version = 0;
  // The reader for every kind but kLevelDbBuiltin (null there: that one needs
  // the key, format::LevelDbBloomMayMatch).
  HashReader read = nullptr;
};

const char* FilterKindName(FilterKind kind);

Recognized Recognize(std::string_view filter);

}  // namespace format
}  // namespace blockbloom

#endif  // BLOCKBLOOM_FORMAT_RECOGNIZE_H_
