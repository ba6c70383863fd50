#include "blockbloom/scalable_bloom.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "blockbloom/hash.h"
#include "blockbloom/math.h"
#include "blocked/format.h"
#include "common/coding.h"
#include "variants/probes.h"

namespace blockbloom {
namespace {

// Serialized layout (docs/FORMAT.md "Scalable Bloom filter"):
//   header: p f64 | s f64 | r f64 | c_0 u64 | stages u32 | reserved u32
//   per stage: capacity u64 | keys u64 | length u64 | blocked filter bytes
//   trailer: version u8 | marker u8
constexpr size_t kHeaderSize = 40;
constexpr size_t kStageHeaderSize = 24;
constexpr uint8_t kScalableMarker = 0xB7;
constexpr uint8_t kScalableVersion = 1;
// 2^62 keys per stage: far beyond memory; also keeps c_0 * s^i finite.
constexpr double kMaxCapacity = 4.611686018427387904e18;

absl::Status ValidateOptions(const ScalableBloomOptions& o) {
  if (o.initial_capacity < 1) return absl::InvalidArgumentError("initial_capacity must be >= 1");
  if (!(o.fpr > 0 && o.fpr < 1)) {
    return absl::InvalidArgumentError(absl::StrCat("fpr must be in (0, 1), got ", o.fpr));
  }
  if (!(o.growth >= 1 && o.growth <= 16)) {
    return absl::InvalidArgumentError(absl::StrCat("growth must be in [1, 16], got ", o.growth));
  }
  if (!(o.tightening > 0 && o.tightening < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("tightening ratio must be in (0, 1), got ", o.tightening));
  }
  return absl::OkStatus();
}

// Stage bytes rounded up to whole 512-bit blocks (64 bytes): a short last
// block reads far above the model at high k (stages of c_0 = 100 keys at
// p = 0.1%, s = 1, r = 0.9 measured 1.3 p with them, the mean of 40 filters).
uint64_t WholeBlocks(uint64_t bytes) {
  return bytes > UINT64_MAX - 63 ? bytes : (bytes + 63) / 64 * 64;
}

// Bits per key a stage needs for target p_i, capped at 64 (see header).
// Filters of the same options add stages for the same targets: the
// bisection's answers are kept by BlockedBitsPerKeyForFpr itself (an
// unreachable target costs two model sums). Only AddStage asks:
// Deserialize does not re-derive stage geometry.
double StageBitsPerKey(double target) {
  const absl::StatusOr<double> bpk = BlockedBitsPerKeyForFpr(target);
  return bpk.ok() ? *bpk : kMaxBitsPerKey;
}

void PutDouble(std::string* dst, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  internal::PutFixed64(dst, bits);
}
double GetDouble(const char* p) {
  const uint64_t bits = internal::DecodeFixed64(p);
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

}  // namespace

uint64_t ScalableBloomFilter::StageCapacity(const ScalableBloomOptions& options, size_t i) {
  const double c = std::floor(static_cast<double>(options.initial_capacity) *
                              std::pow(options.growth, static_cast<double>(i)));
  return static_cast<uint64_t>(std::clamp(c, 1.0, kMaxCapacity));
}

double ScalableBloomFilter::StageFpr(const ScalableBloomOptions& options, size_t i) {
  return options.fpr * (1 - options.tightening) *
         std::pow(options.tightening, static_cast<double>(i));
}

absl::Status ScalableBloomFilter::AddStage() {
  const size_t i = stages_.size();
  const uint64_t capacity = StageCapacity(options_, i);
  const double bits_per_key = StageBitsPerKey(kStageModelMargin * StageFpr(options_, i));
  absl::StatusOr<BlockedBloomFilter> stage = BlockedBloomFilter::CreateWithGeometry(
      WholeBlocks(BlockedBloomBytes(capacity, bits_per_key)), BlockedBloomProbes(bits_per_key));
  // kStageModelMargin: the blocked filter's model (BlockedBitsPerKeyForFpr)
  // reads ~5-8% low at high bits/key (the margin costs ~0.2 bits/key).
  if (!stage.ok()) return stage.status();
  stages_.push_back(*std::move(stage));
  capacities_.push_back(capacity);
  added_.push_back(0);
  return absl::OkStatus();
}

absl::StatusOr<ScalableBloomFilter> ScalableBloomFilter::Create(
    const ScalableBloomOptions& options) {
  if (absl::Status s = ValidateOptions(options); !s.ok()) return s;
  ScalableBloomFilter filter(options);
  if (absl::Status s = filter.AddStage(); !s.ok()) return s;
  return filter;
}

absl::StatusOr<ScalableBloomFilter> ScalableBloomFilter::Create(uint64_t expected_keys,
                                                                double fpr) {
  ScalableBloomOptions options;
  options.initial_capacity = std::max<uint64_t>(expected_keys, 1);
  options.fpr = fpr;
  return Create(options);
}

void ScalableBloomFilter::AddHash(uint64_t hash) {
  if (stages_.empty()) return;  // moved from: it matches every key already
  if (added_.back() >= capacities_.back() && stages_.size() < kMaxStages) {
    // On failure the key goes into the full stage: never lost. So it does
    // at kMaxStages, which Deserialize would reject as damage beyond.
    AddStage().IgnoreError();
  }
  stages_.back().AddHash(hash);
  added_.back() = variants::SaturatingAdd(added_.back(), 1);
}

void ScalableBloomFilter::AddKey(std::string_view key) { AddHash(HashKey(key)); }

bool ScalableBloomFilter::MayContainHash(uint64_t hash) const {
  if (stages_.empty()) return true;  // moved from
  // Newest first: the largest stage holds most keys.
  for (size_t i = stages_.size(); i-- > 0;) {
    if (stages_[i].MayContainHash(hash)) return true;
  }
  return false;
}

bool ScalableBloomFilter::MayContain(std::string_view key) const {
  return MayContainHash(HashKey(key));
}

uint64_t ScalableBloomFilter::num_added() const {
  uint64_t total = 0;
  for (uint64_t a : added_) total = variants::SaturatingAdd(total, a);
  return total;
}

uint64_t ScalableBloomFilter::num_bytes() const {
  uint64_t total = 0;
  for (const BlockedBloomFilter& s : stages_) total = variants::SaturatingAdd(total, s.num_bytes());
  return total;
}

double ScalableBloomFilter::PredictedFpr() const {
  if (stages_.empty()) return 1.0;  // moved from: it matches every key
  double all_clear = 1.0;
  for (size_t i = 0; i < stages_.size(); ++i) {
    all_clear *=
        1.0 - BlockedBloomPredictedFpr(added_[i], stages_[i].num_bytes(), stages_[i].num_probes());
    // Nothing after a product of 0 changes the answer. A file's stages may
    // claim any key counts: overfull ones cost the model's most terms each
    // (4096 stages of them took a second), and each answers about 1.
    if (all_clear == 0.0) break;
  }
  return 1.0 - all_clear;
}

std::string ScalableBloomFilter::Serialize() const {
  std::string out;
  PutDouble(&out, options_.fpr);
  PutDouble(&out, options_.growth);
  PutDouble(&out, options_.tightening);
  internal::PutFixed64(&out, options_.initial_capacity);
  if (stages_.empty()) {
    // Moved from: one stage of its first capacity at 1 bit per key (the
    // fewest bytes Deserialize accepts for it), every bit set, k = 1.
    const uint64_t capacity = StageCapacity(options_, 0);
    std::string bits(static_cast<size_t>(BlockedBloomBytes(capacity, kMinBitsPerKey)), '\xFF');
    blocked::AppendTrailer(1, &bits);
    internal::PutFixed64(&out, 1);
    internal::PutFixed64(&out, capacity);
    internal::PutFixed64(&out, 0);
    internal::PutFixed64(&out, bits.size());
    out += bits;
  } else {
    internal::PutFixed64(&out, static_cast<uint64_t>(stages_.size()));  // u32 + reserved u32
  }
  for (size_t i = 0; i < stages_.size(); ++i) {
    const std::string bits = stages_[i].Serialize();
    internal::PutFixed64(&out, capacities_[i]);
    internal::PutFixed64(&out, added_[i]);
    internal::PutFixed64(&out, bits.size());
    out += bits;
  }
  out.push_back(static_cast<char>(kScalableVersion));
  out.push_back(static_cast<char>(kScalableMarker));
  return out;
}

absl::StatusOr<ScalableBloomFilter> ScalableBloomFilter::Deserialize(std::string_view encoded) {
  if (encoded.size() < kHeaderSize + 2) {
    return absl::DataLossError("scalable filter: shorter than its header");
  }
  if (static_cast<uint8_t>(encoded.back()) != kScalableMarker) {
    return absl::DataLossError("scalable filter: wrong marker byte");
  }
  if (static_cast<uint8_t>(encoded[encoded.size() - 2]) != kScalableVersion) {
    return absl::DataLossError("scalable filter: unknown version");
  }
  const char* p = encoded.data();
  ScalableBloomOptions options;
  options.fpr = GetDouble(p);
  options.growth = GetDouble(p + 8);
  options.tightening = GetDouble(p + 16);
  options.initial_capacity = internal::DecodeFixed64(p + 24);
  const uint64_t stages_word = internal::DecodeFixed64(p + 32);
  if (absl::Status s = ValidateOptions(options); !s.ok()) {
    return absl::DataLossError(absl::StrCat("scalable filter: ", s.message()));
  }
  const uint64_t num_stages = stages_word;  // high 32 bits (reserved) must be 0
  // More stages than AddHash ever makes (kMaxStages) is a damaged file.
  if (num_stages < 1 || num_stages > kMaxStages) {
    return absl::DataLossError("scalable filter: stage count out of range");
  }
  ScalableBloomFilter filter(options);
  size_t pos = kHeaderSize;
  const size_t end = encoded.size() - 2;
  for (uint64_t i = 0; i < num_stages; ++i) {
    if (end - pos < kStageHeaderSize) {
      return absl::DataLossError("scalable filter: truncated stage header");
    }
    const uint64_t capacity = internal::DecodeFixed64(p + pos);
    const uint64_t added = internal::DecodeFixed64(p + pos + 8);
    const uint64_t length = internal::DecodeFixed64(p + pos + 16);
    pos += kStageHeaderSize;
    if (length > end - pos) return absl::DataLossError("scalable filter: truncated stage");
    if (capacity != StageCapacity(options, i)) {
      return absl::DataLossError("scalable filter: stage capacity does not match its options");
    }
    // Every stage but the newest is full: it got a successor only once it
    // held its capacity. It may hold more (so may the newest): when
    // allocating a successor failed, AddHash put the key into the full stage,
    // and a later key's successor may then have been allocated.
    if (i + 1 < num_stages && added < capacity) {
      return absl::DataLossError("scalable filter: stage key count out of range");
    }
    absl::StatusOr<BlockedBloomFilter> stage =
        BlockedBloomFilter::Deserialize(encoded.substr(pos, length));
    if (!stage.ok()) {
      // DataLoss, except an allocation failure (the stage parsed, memory ran
      // out): ResourceExhausted, so that the file is not taken for damaged.
      return absl::Status(
          stage.status().code() == absl::StatusCode::kResourceExhausted
              ? absl::StatusCode::kResourceExhausted
              : absl::StatusCode::kDataLoss,
          absl::StrCat("scalable filter stage ", i, ": ", stage.status().message()));
    }
    // The stage's size must be one a writer can give its capacity (bits per
    // key in [kMinBitsPerKey, kMaxBitsPerKey], in whole blocks now, not
    // always before: both load). Its exact geometry is not
    // re-derived from the options: that runs the FPR model's search once per
    // stage (4-16 ms each; a valid 125 KB file of 4096 stages took 20 s to
    // load), and the geometry decides only the stage's FPR, never whether a
    // key added to it is found. The file's checksum guards the bytes.
    if (stage->num_bytes() < BlockedBloomBytes(capacity, kMinBitsPerKey) ||
        stage->num_bytes() > WholeBlocks(BlockedBloomBytes(capacity, kMaxBitsPerKey))) {
      return absl::DataLossError("scalable filter: stage size out of range for its capacity");
    }
    pos += length;
    filter.stages_.push_back(*std::move(stage));
    filter.capacities_.push_back(capacity);
    filter.added_.push_back(added);
  }
  if (pos != end) return absl::DataLossError("scalable filter: trailing bytes");
  return filter;
}

}  // namespace blockbloom
