#include "blockbloom/set_ops.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bitwise_simd.h"
#include "blocked/format.h"
#include "variants/probes.h"

namespace blockbloom {
namespace {

enum class Op { kOr, kAnd };

void Combine(Op op, const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n) {
  if (op == Op::kOr) {
    simd::OrBytes(a, b, out, n);
  } else {
    simd::AndBytes(a, b, out, n);
  }
}

absl::StatusOr<BlockedBloomFilter> CombineBlocked(Op op, const BlockedBloomFilter& a,
                                                  const BlockedBloomFilter& b) {
  // A flat (format version 2) filter's bits are laid out differently from a
  // 512-bit-blocked one's of the same size: they cannot be combined.
  if (a.num_bytes() != b.num_bytes() || a.num_probes() != b.num_probes() || a.flat() != b.flat()) {
    return absl::InvalidArgumentError(
        absl::StrCat("blocked filters differ in shape: ", a.num_bytes(),
                     " bytes/k=", a.num_probes(), a.flat() ? "/flat" : "", " vs ", b.num_bytes(),
                     " bytes/k=", b.num_probes(), b.flat() ? "/flat" : ""));
  }
  if (a.num_bytes() == 0) {
    // Zero bytes is the empty set (a filter sized for 0 keys that was given
    // keys has become a 1-byte all-ones filter: blocked_bloom.h).
    return BlockedBloomFilter::CreateWithGeometry(0, a.num_probes());
  }
  std::string bytes(static_cast<size_t>(a.num_bytes()), '\0');
  Combine(op, a.data(), b.data(), reinterpret_cast<uint8_t*>(&bytes[0]), bytes.size());
  // The result keeps the operands' geometry (Serialize would write it so).
  blocked::AppendTrailer(a.num_probes(), &bytes,
                         a.flat() ? blocked::Geometry::kFlat : blocked::Geometry::kBlocked512);
  return BlockedBloomFilter::Deserialize(bytes);
}

// Standard and partitioned filters: copy a, combine b into it in place.
template <class Filter>
absl::StatusOr<Filter> CombineInPlace(Op op, const Filter& a, const Filter& b,
                                      absl::StatusOr<Filter> copy) {
  if (!copy.ok()) return copy.status();
  uint8_t* out = copy->mutable_data();
  std::copy(a.data(), a.data() + a.num_bytes(), out);
  Combine(op, out, b.data(), out, static_cast<size_t>(a.num_bytes()));
  copy->set_num_added(op == Op::kOr ? variants::SaturatingAdd(a.num_added(), b.num_added())
                                    : std::min(a.num_added(), b.num_added()));
  return copy;
}

absl::StatusOr<StandardBloomFilter> CombineStandard(Op op, const StandardBloomFilter& a,
                                                    const StandardBloomFilter& b) {
  if (a.num_bits() != b.num_bits() || a.num_probes() != b.num_probes() ||
      a.scheme() != b.scheme()) {
    return absl::InvalidArgumentError(
        absl::StrCat("standard filters differ in shape: m=", a.num_bits(), "/k=", a.num_probes(),
                     "/", HashSchemeName(a.scheme()), " vs m=", b.num_bits(), "/k=", b.num_probes(),
                     "/", HashSchemeName(b.scheme())));
  }
  return CombineInPlace(
      op, a, b, StandardBloomFilter::CreateWithGeometry(a.num_bits(), a.num_probes(), a.scheme()));
}

absl::StatusOr<PartitionedBloomFilter> CombinePartitioned(Op op, const PartitionedBloomFilter& a,
                                                          const PartitionedBloomFilter& b) {
  if (a.slice_bits() != b.slice_bits() || a.num_probes() != b.num_probes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("partitioned filters differ in shape: slice=", a.slice_bits(),
                     "/k=", a.num_probes(), " vs slice=", b.slice_bits(), "/k=", b.num_probes()));
  }
  return CombineInPlace(op, a, b,
                        PartitionedBloomFilter::CreateWithGeometry(a.slice_bits(), a.num_probes()));
}

}  // namespace

absl::StatusOr<BlockedBloomFilter> Union(const BlockedBloomFilter& a, const BlockedBloomFilter& b) {
  return CombineBlocked(Op::kOr, a, b);
}
absl::StatusOr<BlockedBloomFilter> Intersection(const BlockedBloomFilter& a,
                                                const BlockedBloomFilter& b) {
  return CombineBlocked(Op::kAnd, a, b);
}
absl::StatusOr<StandardBloomFilter> Union(const StandardBloomFilter& a,
                                          const StandardBloomFilter& b) {
  return CombineStandard(Op::kOr, a, b);
}
absl::StatusOr<StandardBloomFilter> Intersection(const StandardBloomFilter& a,
                                                 const StandardBloomFilter& b) {
  return CombineStandard(Op::kAnd, a, b);
}
absl::StatusOr<PartitionedBloomFilter> Union(const PartitionedBloomFilter& a,
                                             const PartitionedBloomFilter& b) {
  return CombinePartitioned(Op::kOr, a, b);
}
absl::StatusOr<PartitionedBloomFilter> Intersection(const PartitionedBloomFilter& a,
                                                    const PartitionedBloomFilter& b) {
  return CombinePartitioned(Op::kAnd, a, b);
}

}  // namespace blockbloom
