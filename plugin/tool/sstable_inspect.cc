#include "sstable_inspect.h"

#include <snappy.h>

#include <algorithm>
#include <array>
#include <map>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/compact_filter.h"
#include "blockbloom/filter_format.h"
#include "blockbloom/math.h"

namespace blockbloom {
namespace tool {
namespace {

constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;
constexpr size_t kBlockTrailerSize = 5;
constexpr uint8_t kNoCompression = 0, kSnappyCompression = 1;
// A block that claims to expand beyond this is damage, not data (LevelDB's
// blocks are ~4 KiB; filter blocks of huge tables a few MiB).
constexpr size_t kMaxBlockBytes = size_t{1} << 30;

// The blocked version-1 model (BlockedBloomFpr) sums up to kMaxModelTerms
// Poisson terms per filter, 50-100 ns each (Zen 3); a hostile table can give
// a non-empty filter to every ~25-90 bytes of file and claim enough keys per
// 512-bit block to need 250-4096 terms for each: ~3 s of CPU per MB of file
// (measured at 1, 4 and 16 MB). A table LevelDB writes has at most one
// non-empty filter per 2 KiB of data (lg(base) = 11) and at least 1 bit per
// key (blockbloom's clamp): at most ~604 terms per 2 KiB, 0.3 per byte (0.11
// at 10 bits per key). So the model may sum kModelTermsPerByte per byte of
// the file, plus kModelTermsFloor: past that the table is not one LevelDB
// wrote, and its model FPR is reported unknown (at most 25-50 ms of model
// work per MB).
constexpr double kModelTermsPerByte = 0.5;
constexpr uint64_t kModelTermsFloor = 4 * kMaxModelTerms;

// Every parse failure is a DataLoss status whose message becomes
// TableReport::error; the first one ends the parse.
absl::Status Failure(std::string what) { return absl::DataLossError(std::move(what)); }

std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int j = 0; j < 8; ++j) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}

uint32_t Crc32c(const char* data, size_t n, uint32_t crc = 0) {
  static const std::array<uint32_t, 256> kTable = MakeCrcTable();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) {
    crc = kTable[(crc ^ static_cast<uint8_t>(data[i])) & 0xff] ^ (crc >> 8);
  }
  return ~crc;
}

// LevelDB's fixed-width integers: little-endian.
uint64_t DecodeLittleEndian(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
uint32_t DecodeFixed32(const char* p) { return static_cast<uint32_t>(DecodeLittleEndian(p, 4)); }
uint64_t DecodeFixed64(const char* p) { return DecodeLittleEndian(p, 8); }

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

absl::StatusOr<BlockHandle> DecodeHandle(std::string_view* in, const char* what) {
  BlockHandle h;
  if (!GetVarint(in, 64, &h.offset) || !GetVarint(in, 64, &h.size)) {
    return Failure(std::string("malformed block handle in ") + what);
  }
  return h;
}

// The block's contents, checksum verified and decompressed.
absl::StatusOr<std::string> ReadBlock(std::string_view file, const BlockHandle& h,
                                      const char* what) {
  if (h.offset > file.size() || h.size > file.size() - h.offset ||
      kBlockTrailerSize > file.size() - h.offset - h.size) {
    return Failure(std::string(what) + " block lies outside the file");
  }
  const char* data = file.data() + h.offset;
  const size_t n = static_cast<size_t>(h.size);
  const uint8_t type = static_cast<uint8_t>(data[n]);
  const uint32_t stored = DecodeFixed32(data + n + 1);
  if (MaskedCrc32c(data, n + 1) != stored) {
    return Failure(std::string(what) + " block checksum mismatch");
  }
  if (type == kNoCompression) return std::string(data, n);
  if (type != kSnappyCompression) {
    return Failure(std::string(what) + " block has unknown compression type " +
                   std::to_string(type));
  }
  size_t length = 0;
  if (!snappy::GetUncompressedLength(data, n, &length) || length > kMaxBlockBytes) {
    return Failure(std::string(what) + " block: corrupt snappy header");
  }
  // Validate before allocating: the header alone can claim up to
  // kMaxBlockBytes from a few bytes of file, and the validator walks the
  // block's tags without writing, at the cost of the block's own size.
  if (!snappy::IsValidCompressedBuffer(data, n)) {
    return Failure(std::string(what) + " block: corrupt snappy data");
  }
  std::string out(length, '\0');
  if (!snappy::RawUncompress(data, n, &out[0])) {
    return Failure(std::string(what) + " block: corrupt snappy data");
  }
  return out;
}

// Calls fn(key, value) -> absl::Status for every entry of a block (keys
// rebuilt from their shared prefixes); stops at the first failure, the
// block's or fn's. With kKeys false, keys are not rebuilt (only their
// lengths, which the same checks need) and fn gets an empty key: a data
// block's entries are only counted, and a snappy block of 3-byte empty
// entries holds ~7 of them per byte of file.
template <bool kKeys = true, typename Fn>
absl::Status ForEachEntry(std::string_view block, const char* what, Fn&& fn) {
  const auto fail = [&](const char* why) { return Failure(std::string(what) + " block: " + why); };
  if (block.size() < 4) return fail("shorter than its restart count");
  const uint64_t restarts = DecodeFixed32(block.data() + block.size() - 4);
  if (restarts > (block.size() - 4) / 4) return fail("restart array larger than the block");
  std::string_view entries = block.substr(0, block.size() - 4 - 4 * restarts);
  std::string key;
  uint64_t key_size = 0;
  while (!entries.empty()) {
    uint64_t shared, non_shared, value_len;
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(entries[i]); };
    if (entries.size() >= 3 && ((byte(0) | byte(1) | byte(2)) & 0x80) == 0) {
      // Three one-byte varints (every entry of a block of small keys).
      shared = byte(0);
      non_shared = byte(1);
      value_len = byte(2);
      entries.remove_prefix(3);
    } else if (!GetVarint(&entries, 32, &shared) || !GetVarint(&entries, 32, &non_shared) ||
               !GetVarint(&entries, 32, &value_len)) {
      return fail("malformed entry header");
    }
    if (shared > key_size) return fail("entry shares more than the previous key");
    if (non_shared > entries.size() || value_len > entries.size() - non_shared) {
      return fail("entry runs past the block");
    }
    key_size = shared + non_shared;
    if constexpr (kKeys) {
      key.resize(static_cast<size_t>(shared));
      key.append(entries.data(), static_cast<size_t>(non_shared));
    }
    const std::string_view value =
        entries.substr(static_cast<size_t>(non_shared), static_cast<size_t>(value_len));
    entries.remove_prefix(static_cast<size_t>(non_shared + value_len));
    if (absl::Status s = fn(std::string_view(key), value); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Fills *report as far as the table can be read; the first failure is
// returned (fields filled before it stay).
absl::Status Inspect(std::string_view file, TableReport* report) {
  if (file.size() < kFooterSize) return Failure("file shorter than a table footer");
  const char* footer = file.data() + file.size() - kFooterSize;
  if (DecodeFixed64(footer + 40) != kTableMagic) {
    return Failure("bad table magic (not a LevelDB table, or truncated)");
  }
  std::string_view handles(footer, 40);
  const absl::StatusOr<BlockHandle> metaindex = DecodeHandle(&handles, "footer");
  if (!metaindex.ok()) return metaindex.status();
  const absl::StatusOr<BlockHandle> index = DecodeHandle(&handles, "footer");
  if (!index.ok()) return index.status();

  BlockHandle filter_handle;
  bool has_filter = false;
  const absl::StatusOr<std::string> meta = ReadBlock(file, *metaindex, "metaindex");
  if (!meta.ok()) return meta.status();
  absl::Status s =
      ForEachEntry(*meta, "metaindex", [&](std::string_view key, std::string_view value) {
        constexpr std::string_view kPrefix = "filter.";
        if (key.substr(0, kPrefix.size()) == kPrefix) {
          report->policy_name = std::string(key.substr(kPrefix.size()));
          const absl::StatusOr<BlockHandle> h = DecodeHandle(&value, "metaindex");
          if (!h.ok()) return h.status();
          filter_handle = *h;
          has_filter = true;
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;

  // Keys per data block, keyed by the block's offset.
  std::vector<std::pair<uint64_t, uint64_t>> blocks;  // (offset, entries)
  const absl::StatusOr<std::string> index_block = ReadBlock(file, *index, "index");
  if (!index_block.ok()) return index_block.status();
  // LevelDB writes data blocks one after another and indexes them in that
  // order, so each handle starts at or after the end (trailer included) of
  // the one before. Requiring it is what bounds the work below by the file's
  // size: an index whose entries all name the same large block would
  // otherwise have it checksummed, decompressed and parsed once per entry.
  uint64_t next_block_at = 0;
  s = ForEachEntry(*index_block, "index", [&](std::string_view, std::string_view value) {
    const absl::StatusOr<BlockHandle> h = DecodeHandle(&value, "index");
    if (!h.ok()) return h.status();
    if (h->offset < next_block_at) {
      return Failure("index: data blocks overlap or are out of order");
    }
    uint64_t entries = 0;
    const absl::StatusOr<std::string> data = ReadBlock(file, *h, "data");
    if (!data.ok()) return data.status();
    next_block_at = h->offset + h->size + kBlockTrailerSize;  // in the file: ReadBlock checked
    const absl::Status counted =
        ForEachEntry</*kKeys=*/false>(*data, "data", [&](std::string_view, std::string_view) {
          ++entries;
          return absl::OkStatus();
        });
    if (!counted.ok()) return counted;
    blocks.emplace_back(h->offset, entries);
    report->num_keys += entries;
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  if (!has_filter) return absl::OkStatus();

  const absl::StatusOr<std::string> filter_block = ReadBlock(file, filter_handle, "filter");
  if (!filter_block.ok()) return filter_block.status();
  const std::string& fb = *filter_block;
  if (fb.size() < 5) return Failure("filter block shorter than its trailer");
  report->base_lg = static_cast<uint8_t>(fb.back());
  if (report->base_lg > 40) return Failure("filter block base lg out of range");
  const uint64_t array_at = DecodeFixed32(fb.data() + fb.size() - 5);
  if (array_at > fb.size() - 5) return Failure("filter offset array outside the filter block");
  const uint64_t num = (fb.size() - 5 - array_at) / 4;
  report->num_filters = num;
  // Every data block's filter must exist (LevelDB writes one per 2 KiB).
  // The blocks are in file order (checked above), so their slots ascend: the
  // last has the highest, and the loop below takes each slot's blocks from
  // the front. (No array of keys per slot: a snappy filter block can hold
  // ~5 million empty slots per MB of file.)
  if (!blocks.empty() && (blocks.back().first >> report->base_lg) >= num) {
    return Failure("a data block has no filter slot");
  }
  size_t next_block = 0;
  double weighted_fpr = 0;
  uint64_t weighted_keys = 0;
  report->fpr_known = true;
  uint64_t model_terms_left =
      kModelTermsFloor +
      static_cast<uint64_t>(kModelTermsPerByte * static_cast<double>(file.size()));
  // Filter i is [offset i, offset i + 1), the last one ending at array_at:
  // each offset is decoded once (a filter block can hold millions).
  uint64_t limit = num == 0 ? 0 : DecodeFixed32(fb.data() + array_at);
  for (uint64_t i = 0; i < num; ++i) {
    uint64_t keys = 0;  // in the data blocks filter i covers
    for (; next_block < blocks.size() && (blocks[next_block].first >> report->base_lg) == i;
         ++next_block) {
      keys += blocks[next_block].second;
    }
    const uint64_t start = limit;
    limit = i + 1 < num ? DecodeFixed32(fb.data() + array_at + 4 * (i + 1)) : array_at;
    if (start > limit || limit > array_at) return Failure("filter offsets out of order");
    const std::string_view filter(fb.data() + start, static_cast<size_t>(limit - start));
    report->filter_bytes += filter.size();
    if (filter.empty()) continue;
    ++report->nonempty_filters;
    double fpr = 1.0;
    int k = 0;
    // The recognizer the LevelDB policies read through
    // (blockbloom/filter_format.h).
    const FilterDescription kind = DescribeFilter(filter);
    if (kind.encoding == FilterEncoding::kBlocked && kind.blocked_readable) {
      ++report->blocked_filters;
      report->blocked_versions |= VersionBit(kind.version);
      k = kind.num_probes;
      // Version 2 (flat) is one block over the whole filter: the standard
      // Bloom filter's model; version 1, the blocked Poisson mixture, within
      // the table's budget of model work.
      if (kind.single_block) {
        fpr = keys == 0
                  ? 0.0
                  : StandardBloomFpr(
                        8.0 * static_cast<double>(kind.bits_bytes) / static_cast<double>(keys), k);
      } else {
        // The Poisson mixture (blockbloom/math.h), whose work
        // BlockedBloomFprTerms gives beforehand: the filters version 1 is
        // written for are large, where it is BlockedBloomPredictedFpr's
        // answer too (that function's exact model of small filters costs
        // up to twice kMaxModelTerms, unknown in advance).
        const uint64_t terms = keys == 0 || kind.bits_bytes == 0
                                   ? 0
                                   : static_cast<uint64_t>(BlockedBloomFprTerms(
                                         8.0 * static_cast<double>(kind.bits_bytes) / keys, k));
        if (report->model_work_exceeded || terms > model_terms_left) {
          report->model_work_exceeded = true;
          report->fpr_known = false;
        } else {
          model_terms_left -= terms;
          fpr = keys == 0 ? 0.0
                : kind.bits_bytes == 0
                    ? 1.0
                    : BlockedBloomFpr(8.0 * static_cast<double>(kind.bits_bytes) / keys, k);
        }
      }
    } else if (kind.encoding == FilterEncoding::kCompact) {
      // A compact filter knows its own exact FPR (stored fingerprints over
      // the fingerprint range, or 2^-R); one that does not parse may match
      // anything.
      const absl::StatusOr<CompactFilter> compact_filter = CompactFilter::Deserialize(filter);
      ++report->compact_filters;
      report->compact_versions |= VersionBit(kind.version);
      fpr = compact_filter.ok() ? compact_filter->expected_fpr() : 1.0;
      weighted_fpr += fpr * static_cast<double>(keys);
      weighted_keys += keys;
      continue;  // no k: not a Bloom filter
    } else if (kind.encoding == FilterEncoding::kLevelDbBuiltin) {
      ++report->builtin_filters;
      k = kind.version;
      const double bits = 8.0 * static_cast<double>(filter.size() - 1);
      // LevelDB reads k = 0 as "may match"; so do we.
      fpr = (k == 0 || bits == 0) ? 1.0
            : keys == 0           ? 0.0
                                  : StandardBloomFpr(bits / static_cast<double>(keys), k);
    } else if (kind.encoding == FilterEncoding::kEmpty) {
      // Under 2 bytes: LevelDB (and every blockbloom policy) answers "no".
      fpr = 0.0;
      weighted_keys += keys;
      continue;
    } else {
      // Unknown encodings, and blocked filters of a version this build does
      // not read: "may match".
      ++report->unknown_filters;
      report->fpr_known = false;
      continue;
    }
    report->min_probes = report->min_probes == 0 ? k : std::min(report->min_probes, k);
    report->max_probes = std::max(report->max_probes, k);
    weighted_fpr += fpr * static_cast<double>(keys);
    weighted_keys += keys;
  }
  report->predicted_fpr = weighted_keys == 0 ? 0.0 : weighted_fpr / weighted_keys;
  return absl::OkStatus();
}

}  // namespace

uint32_t MaskedCrc32c(const char* data, size_t n) {
  const uint32_t crc = Crc32c(data, n);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

bool GetVarint(std::string_view* in, int max_bits, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < max_bits && !in->empty(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return false;
}

TableReport InspectTable(std::string_view contents) {
  TableReport report;
  // Parse failures come back as a Status. Only the allocator can still
  // throw (a block or filter array as large as the file claims): that is
  // caught here, at the tool's boundary, as before.
  try {
    const absl::Status s = Inspect(contents, &report);
    if (!s.ok()) report.error = std::string(s.message());
  } catch (const std::bad_alloc&) {
    report.error = "out of memory reading the table";
  }
  return report;
}

}  // namespace tool
}  // namespace blockbloom
