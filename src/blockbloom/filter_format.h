// What the bytes of one LevelDB filter are, read the way every blockbloom
// policy reads them: the encoding named by the filter's last byte (and, for
// blockbloom's formats, the trailer before it), with the parameters a model
// of its false-positive rate needs. For programs that inspect the filter
// blocks of table files, as `blockbloom inspect` does. Byte layouts:
// docs/FORMAT.md.
//
//   size < 2          kEmpty           matches nothing (LevelDB's rule too)
//   last byte <= 30   kLevelDbBuiltin  LevelDB's Bloom filter; version = its k
//   0xBB              kBlocked         blockbloom's blocked Bloom filter
//   0xCF, 0x40..0x5F  kCompact         blockbloom's compact filter (v1, v2)
//   anything else     kUnknown         read as "may match"
//
// Thread-safety: a pure function over caller-owned bytes.
#ifndef BLOCKBLOOM_FILTER_FORMAT_H_
#define BLOCKBLOOM_FILTER_FORMAT_H_

#include <cstdint>
#include <string_view>

namespace blockbloom {

enum class FilterEncoding {
  kEmpty,
  kBlocked,
  kCompact,
  kLevelDbBuiltin,
  kUnknown,
};

struct FilterDescription {
  FilterEncoding encoding = FilterEncoding::kUnknown;
  // The trailer's format version for kBlocked and kCompact, as the trailer
  // states it; LevelDB's k for kLevelDbBuiltin; 0 otherwise.
  int version = 0;
  // kBlocked only: whether this build reads the trailer (a damaged one, or
  // one of a newer version, reads as "may match"); if so, k, the bytes of
  // filter bits (trailer excluded) and their layout: 512-bit blocks
  // (version 1; blockbloom/blocked_bloom.h's model, BlockedBloomPredictedFpr)
  // or one block over the whole filter (version 2; a standard Bloom filter's
  // model, StandardBloomFpr in blockbloom/math.h).
  bool blocked_readable = false;
  int num_probes = 0;
  uint64_t bits_bytes = 0;
  bool single_block = false;
};

FilterDescription DescribeFilter(std::string_view filter);

}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTER_FORMAT_H_
