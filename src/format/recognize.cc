#include "format/recognize.h"

#include "blockbloom/filter_format.h"
#include "format/leveldb_bloom.h"

namespace blockbloom {
namespace format {
namespace {

bool ReadNothing(std::string_view, uint64_t) { return false; }
bool ReadEverything(std::string_view, uint64_t) { return true; }
bool ReadBlocked(std::string_view filter, uint64_t hash) {
  return blocked::EncodedMayContainHash(filter, hash);
}
bool ReadCompact(std::string_view filter, uint64_t hash) {
  return compact::EncodedMayContainHash(filter, hash);
}

}  // namespace

const char* FilterKindName(FilterKind kind) {
  switch (kind) {
    case FilterKind::kEmpty:
      return "empty";
    case FilterKind::kBlocked:
      return "blocked";
    case FilterKind::kCompact:
      return "compact";
    case FilterKind::kLevelDbBuiltin:
      return "leveldb-builtin";
    case FilterKind::kUnknown:
      return "unknown";
  }
  return "unknown";
}

Recognized Recognize(std::string_view filter) {
  Recognized r;
  const size_t n = filter.size();
  if (n < 2) {
    r.kind = FilterKind::kEmpty;
    r.read = &ReadNothing;
    return r;
  }
  const uint8_t last = static_cast<uint8_t>(filter[n - 1]);
  const uint8_t before = static_cast<uint8_t>(filter[n - 2]);
  if (IsLevelDbBuiltin(filter)) {
    r.kind = FilterKind::kLevelDbBuiltin;
    r.version = last;
    return r;
  }
  if (last == blocked::kMarker) {
    r.kind = FilterKind::kBlocked;
    r.version = before >> 4;  // version:4 geometry:4
    r.read = &ReadBlocked;
    return r;
  }
  const int compact_version = compact::TrailerVersion(filter);
  if (compact_version >= 0) {
    r.kind = FilterKind::kCompact;
    r.version = compact_version;
    r.read = &ReadCompact;
    return r;
  }
  r.kind = FilterKind::kUnknown;
  r.read = &ReadEverything;
  return r;
}

}  // namespace format
}  // namespace blockbloom

namespace blockbloom {

FilterDescription DescribeFilter(std::string_view filter) {
  FilterDescription d;
  const format::Recognized r = format::Recognize(filter);
  d.version = r.version;
  switch (r.kind) {
    case format::FilterKind::kEmpty:
      d.encoding = FilterEncoding::kEmpty;
      break;
    case format::FilterKind::kBlocked: {
      d.encoding = FilterEncoding::kBlocked;
      blocked::FilterView view;
      if (blocked::ParseFilter(filter, &view)) {
        d.blocked_readable = true;
        d.num_probes = view.num_probes;
        d.bits_bytes = view.num_bytes;
        d.single_block = view.geometry == blocked::Geometry::kFlat;
      }
      break;
    }
    case format::FilterKind::kCompact:
      d.encoding = FilterEncoding::kCompact;
      break;
    case format::FilterKind::kLevelDbBuiltin:
      d.encoding = FilterEncoding::kLevelDbBuiltin;
      break;
    case format::FilterKind::kUnknown:
      d.encoding = FilterEncoding::kUnknown;
      break;
  }
  return d;
}

}  // namespace blockbloom
