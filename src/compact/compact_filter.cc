#include "blockbloom/compact_filter.h"

#include <cassert>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "blockbloom/hash.h"
#include "compact/builder.h"
#include "compact/format.h"

namespace blockbloom {

uint64_t CompactFilterMaxBytes(uint64_t num_keys, double bits_per_key) {
  return compact::MaxEncodedSize(num_keys, bits_per_key);
}

double CompactFilterPredictedFpr(uint64_t num_keys, double bits_per_key) {
  return compact::PredictedFpr(num_keys, bits_per_key);
}

int CompactFilterFormatVersion(uint64_t num_keys, double bits_per_key) {
  return compact::ChooseV2(num_keys, bits_per_key).fingerprint_bits > 0 ? 2 : 1;
}

namespace {
// Keys beyond this would need > 2^60 bytes of hashes alone.
constexpr uint64_t kMaxKeys = uint64_t{1} << 56;
}  // namespace

absl::StatusOr<CompactFilter> CompactFilter::BuildFromHashes(absl::Span<const uint64_t> hashes,
                                                             double bits_per_key) {
  if (hashes.size() > kMaxKeys) {
    return absl::ResourceExhaustedError("CompactFilter: too many keys");
  }
  CompactFilter filter;
  const compact::BuildInfo info = compact::AppendFilter(hashes, bits_per_key, &filter.encoded_);
  filter.num_entries_ = info.num_entries;
  filter.CacheTrailer();
  return filter;
}

absl::StatusOr<CompactFilter> CompactFilter::BuildFromKeys(absl::Span<const std::string_view> keys,
                                                           double bits_per_key) {
  if (keys.size() > kMaxKeys) {
    return absl::ResourceExhaustedError("CompactFilter: too many keys");
  }
  std::vector<uint64_t> hashes(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) hashes[i] = HashKey(keys[i]);
  return BuildFromHashes(hashes, bits_per_key);
}

absl::StatusOr<CompactFilter> CompactFilter::Deserialize(std::string_view encoded) {
  if (compact::TrailerVersion(encoded) == 2) {
    compact::V2View v2;
    if (!compact::ParseV2(encoded, &v2)) {
      return absl::InvalidArgumentError("CompactFilter: malformed version-2 trailer");
    }
    if (!compact::ValidateV2(v2)) return absl::DataLossError("CompactFilter: nonzero padding");
    CompactFilter filter;
    filter.encoded_.assign(encoded.data(), encoded.size());
    filter.num_entries_ = v2.slots;
    filter.CacheTrailer();
    return filter;
  }
  compact::FilterView view;
  if (!compact::ParseFilter(encoded, &view)) {
    return absl::InvalidArgumentError(
        "CompactFilter: not a version-1 or version-2 compact filter (marker, version or "
        "trailer)");
  }
  const int64_t entries = compact::ValidateStream(view);
  if (entries < 0) return absl::DataLossError("CompactFilter: corrupt Rice stream or index");
  CompactFilter filter;
  filter.encoded_.assign(encoded.data(), encoded.size());
  filter.num_entries_ = static_cast<uint64_t>(entries);
  filter.CacheTrailer();
  return filter;
}

namespace {

// Version 1 with one bucket of width 1 holding fingerprint 0: every key's
// fingerprint is 0, so everything matches (E / U = 1). Eight bytes: one
// stream byte (the Rice code of gap 0 at r = 0 is a single one bit), no
// index, three one-byte varints and the fixed trailer; within std::string's
// inline capacity, so assigning it allocates nothing.
const std::string& MatchEverythingEncoding() {
  static const std::string* const encoding = [] {
    auto* s = new std::string(1, '\x01');
    compact::AppendIndexAndTrailer(compact::Params{1, 1, 1, 0}, nullptr, s);
    return s;
  }();
  return *encoding;
}

}  // namespace

CompactFilter::CompactFilter(CompactFilter&& other) noexcept { *this = std::move(other); }

CompactFilter& CompactFilter::operator=(CompactFilter&& other) noexcept {
  if (this == &other) return *this;
  // The rest is the trailer's, parsed again (a few bytes).
  encoded_ = std::move(other.encoded_);
  num_entries_ = other.num_entries_;
  CacheTrailer();
  other.MatchEverything();
  return *this;
}

void CompactFilter::MatchEverything() noexcept {
  encoded_.assign(MatchEverythingEncoding());
  num_entries_ = 1;
  CacheTrailer();
}

bool CompactFilter::MayContain(std::string_view key) const { return MayContainHash(HashKey(key)); }

void CompactFilter::CacheTrailer() {
  // Every field from the trailer, none left from an earlier encoding.
  version_ = 1;
  fingerprint_bits_ = 0;
  num_buckets_ = bucket_width_ = stream_bits_ = 0;
  rice_bits_ = offset_bits_ = 0;
  index_byte_ = 0;
  if (compact::TrailerVersion(encoded_) == 2) {
    compact::V2View v2;
    const bool ok = compact::ParseV2(encoded_, &v2);
    assert(ok);
    (void)ok;
    version_ = 2;
    fingerprint_bits_ = v2.fingerprint_bits;
    return;
  }
  compact::FilterView view;
  const bool ok = compact::ParseFilter(encoded_, &view);
  assert(ok);
  (void)ok;
  num_buckets_ = view.params.num_buckets;
  bucket_width_ = view.params.bucket_width;
  rice_bits_ = view.params.rice_bits;
  stream_bits_ = view.params.stream_bits;
  index_byte_ = view.index_byte;
  offset_bits_ = view.offset_bits;
}

bool CompactFilter::MayContainHash(uint64_t hash) const {
  if (version_ == 2) {
    compact::V2View v2;
    compact::ParseV2(encoded_, &v2);  // cheap: three trailer bytes
    return compact::V2MayContainHash(v2, hash);
  }
  compact::FilterView view;
  view.params = {num_buckets_, bucket_width_, stream_bits_, rice_bits_};
  view.data = reinterpret_cast<const uint8_t*>(encoded_.data());
  view.size = encoded_.size();
  view.index_byte = index_byte_;
  view.offset_bits = offset_bits_;
  return compact::MayContainHash(view, hash);
}

uint64_t CompactFilter::fingerprint_range() const {
  if (version_ == 2) {
    // m * 2^R, saturated: a version-2 filter of 16 GiB or more at R = 32
    // would wrap.
    return num_entries_ > (UINT64_MAX >> fingerprint_bits_) ? UINT64_MAX
                                                            : num_entries_ << fingerprint_bits_;
  }
  return num_buckets_ * bucket_width_;
}

double CompactFilter::expected_fpr() const {
  if (version_ == 2) return std::ldexp(1.0, -fingerprint_bits_);
  const uint64_t range = fingerprint_range();
  return range == 0 ? 0.0 : static_cast<double>(num_entries_) / static_cast<double>(range);
}

}  // namespace blockbloom
