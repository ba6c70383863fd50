#include "policy/filter_sizing.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>
#include <mutex>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/math.h"
#include "common/coding.h"
#include "compact/builder.h"
#include "compact/format.h"

namespace blockbloom {
namespace internal {
namespace {

// LevelDB's built-in k for bits_per_key (util/bloom.cc: 0.69 =~ ln 2,
// truncated, clamped into [1, 30]).
int BuiltinProbes(double bits_per_key) {
  return std::clamp(static_cast<int>(bits_per_key * 0.69), 1, 30);
}

}  // namespace

FilterSizing::FilterSizing(double bits_per_key)
    : bits_per_key_(ClampBitsPerKey(bits_per_key)),
      blocked_probes_(BlockedBloomProbes(bits_per_key_)),
      builtin_probes_(BuiltinProbes(bits_per_key_)) {
  // Keys from which the built-in's hash collisions alone (n / 2^32) exceed
  // the blocked geometry's FPR penalty: see the header.
  const double blocked = 1.05 * BlockedBloomFpr(bits_per_key_, blocked_probes_);
  const double standard = StandardBloomFpr(bits_per_key_, BuiltinProbes(bits_per_key_));
  flat_max_keys_ = std::max(0.0, blocked - standard) * 4294967296.0;
  for (uint64_t n = 0; n <= kKeptLayouts; ++n) {
    bloom_[n] = ComputeBloom(n);
    compact_[n] = ComputeCompact(n);
  }
}

std::shared_ptr<const FilterSizing> FilterSizing::For(double bits_per_key) {
  static std::mutex mu;
  // Never freed: policies in static storage may outlive it otherwise.
  static auto* cache = new std::map<double, std::shared_ptr<const FilterSizing>>();
  const double key = ClampBitsPerKey(bits_per_key);
  {
    std::lock_guard<std::mutex> lock(mu);
    const auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }
  auto sizing = std::make_shared<const FilterSizing>(key);  // outside the lock: ~20-40 us
  std::lock_guard<std::mutex> lock(mu);
  if (cache->size() >= kCachedSizings) return sizing;
  return cache->emplace(key, std::move(sizing)).first->second;  // a racing thread's, if first
}

uint64_t FilterSizing::BitBytes(uint64_t num_keys) const {
  if (num_keys == 0) return 0;
  const double bytes = std::ceil(static_cast<double>(num_keys) * bits_per_key_ / 8.0);
  return std::max<uint64_t>(SaturatingBytes(bytes), 8);
}

int FilterSizing::FlatProbes(uint64_t num_keys, uint64_t bits) {
  if (num_keys == 0) return 1;
  const double k = std::log(2.0) * static_cast<double>(bits) / static_cast<double>(num_keys);
  return static_cast<int>(std::clamp(std::round(k), 1.0, double{blocked::kMaxFlatProbes}));
}

int FilterSizing::PolicyFlatProbes(uint64_t num_keys, uint64_t bits, int builtin_probes) {
  const int best = FlatProbes(num_keys, bits);
  // No k does better than 2^(-ln 2 * bits / n), so below 20 / ln 2 = 28.85
  // bits per key the FPR is never negligible: the filters laid out per call
  // (more keys than the kept layouts) skip the model's libm calls.
  if (std::log(2.0) * static_cast<double>(bits) <
      kNegligibleFprBits * static_cast<double>(num_keys)) {
    return best;
  }
  if (FlatFpr(num_keys, bits, best) >= kNegligibleFpr) return best;
  // The model falls with k up to the best k, so the search ends by `best`.
  int fewest = 1;
  while (fewest < best && FlatFpr(num_keys, bits, fewest) >= kNegligibleFpr) ++fewest;
  return std::min(best, std::max(fewest, builtin_probes));
}

double FilterSizing::FlatFpr(uint64_t num_keys, uint64_t bits, int num_probes) {
  if (num_keys == 0) return 0.0;
  return StandardBloomFpr(static_cast<double>(bits) / static_cast<double>(num_keys), num_probes);
}

double FilterSizing::CompactSpare(uint64_t num_keys) {
  if (num_keys <= compact::kV2WindowBits) return 0.0;
  return num_keys <= 16384 ? 0.08 : 0.11;
}

double FilterSizing::FirstTrySpare(uint64_t num_keys) {
  return num_keys <= 2048 ? 0.03 : num_keys <= 16384 ? 0.04 : 0.07;
}

BloomLayout FilterSizing::ComputeBloom(uint64_t num_keys) const {
  BloomLayout layout;
  layout.bytes = BitBytes(num_keys);
  if (layout.bytes == 0) {  // the empty set: version 1, no bits
    layout.num_probes = blocked_probes_;
    return layout;
  }
  if (layout.bytes <= blocked::kFlatMaxBytes || static_cast<double>(num_keys) < flat_max_keys_) {
    layout.geometry = blocked::Geometry::kFlat;
    layout.num_probes = PolicyFlatProbes(num_keys, layout.bytes * 8, builtin_probes_);
  } else {
    layout.geometry = blocked::Geometry::kBlocked512;
    layout.num_probes = blocked_probes_;
  }
  return layout;
}

CompactLayout FilterSizing::ComputeCompact(uint64_t num_keys) const {
  CompactLayout layout;
  layout.bloom = ComputeBloom(num_keys);
  if (num_keys == 0) {  // the empty set: version 1, 7 bytes
    layout.version1 = true;
    return layout;
  }
  const uint64_t body = layout.bloom.bytes;  // the trailers are the same size
  layout.bloom_fpr = layout.bloom.geometry == blocked::Geometry::kFlat
                         ? FlatFpr(num_keys, body * 8, layout.bloom.num_probes)
                         : BlockedBloomFpr(bits_per_key_, layout.bloom.num_probes);
  // Below kNegligibleFpr the Bloom filter is written (see the header).
  if (layout.bloom_fpr < kNegligibleFpr) return layout;
  if (num_keys > compact::kV2MaxKeys) {
    // Version 1 (the Golomb-Rice set) only where its model beats the Bloom
    // filter's: a set of fingerprints pays ~1.5 bits per key over its FPR's
    // log, so up to ~5 bits/key the Bloom filter reads fewer blocks (at
    // 70,000 keys: 2 bits/key 0.60 against 0.39, 4 bits/key 0.169 against
    // 0.148; at 3,000,000 keys 5 bits/key 0.097 against 0.093).
    layout.version1 = compact::PredictedFprV1(num_keys, bits_per_key_) < layout.bloom_fpr;
    return layout;
  }
  const double slots_needed = static_cast<double>(num_keys) * (1.0 + CompactSpare(num_keys));
  const int r = static_cast<int>(std::min<double>(
      compact::kV2MaxFingerprintBits, std::floor(8.0 * static_cast<double>(body) / slots_needed)));
  if (r < 1) return layout;
  if (std::ldexp(1.0, -r) < layout.bloom_fpr) {
    layout.fingerprint_bits = r;
    layout.total_bytes = body + compact::kV2TrailerSize;
    const int next = r + 1;
    if (next <= compact::kV2MaxFingerprintBits && num_keys > compact::kV2WindowBits &&
        static_cast<double>(8 * body / next) >=
            static_cast<double>(num_keys) * (1.0 + FirstTrySpare(num_keys))) {
      layout.first_fingerprint_bits = next;
    }
  }
  return layout;
}

void AppendCompactLayout(const CompactLayout& layout, std::vector<uint64_t>* hashes,
                         double bits_per_key, std::string* dst) {
  if (layout.version1) {
    compact::AppendFilterV1Consuming(hashes, bits_per_key, dst);
    return;
  }
  AppendCompactLayout(layout, absl::MakeConstSpan(*hashes), dst);
}

void AppendCompactLayout(const CompactLayout& layout, absl::Span<const uint64_t> hashes,
                         std::string* dst) {
  assert(!layout.version1);
  compact::BuildInfo info;
  if (layout.first_fingerprint_bits > 0 &&
      compact::AppendFilterV2(hashes, layout.first_fingerprint_bits, layout.total_bytes, dst, &info,
                              FilterSizing::kFirstSeeds)) {
    return;
  }
  // R, else R - 1 while it still beats the Bloom filter, else the Bloom filter.
  for (int r = layout.fingerprint_bits;
       r >= 1 && r + 1 >= layout.fingerprint_bits &&
       (r == layout.fingerprint_bits || std::ldexp(1.0, -r) < layout.bloom_fpr);  // R: known
       --r) {
    if (compact::AppendFilterV2(hashes, r, layout.total_bytes, dst, &info)) return;
  }
  const BloomLayout& bloom = layout.bloom;
  blocked::AppendFilterBits(bloom.bytes, bloom.num_probes, bloom.geometry, dst,
                            [&](uint8_t* bits, blocked::Geometry geometry) {
                              blocked::AddHashes(hashes.data(), hashes.size(), bloom.bytes,
                                                 bloom.num_probes, geometry, bits);
                            });
}

}  // namespace internal
}  // namespace blockbloom
