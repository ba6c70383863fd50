// A scalable Bloom filter (Almeida, Baquero, Preguica and Hutchison,
// "Scalable Bloom Filters", Information Processing Letters 101(6), 2007):
// a filter for an unknown number of keys that keeps a bound on its FPR.
//
// It is a list of stages, each a BlockedBloomFilter. Stage i holds at most
//   c_i = c_0 * s^i keys                 (growth factor s, default 2)
// at false-positive rate
//   p_i = p * (1 - r) * r^i              (tightening ratio r, default 0.8)
// Keys go to the newest stage; when it holds c_i keys, stage i+1 is added.
// A query tests every stage, so the compound FPR is
//   1 - prod_i (1 - p_i) <= sum_i p_i = p * (1 - r) * sum_i r^i < p
// for any number of stages (paper, section 4, eq. 3). s = 2 keeps the stage
// count logarithmic in the key count; r = 0.8 costs fewer bits per key than
// r = 0.5 once there are many stages (paper, section 5, table 1). Each stage
// is built for kStageModelMargin (0.9) p_i by the blocked filter's model
// (which reads ~5-8% low at high bits/key) and in whole 512-bit blocks (a
// short last block reads far above the model at high k), so the bound holds
// as measured, not only in the model. Mean measured FPR / p over 16 filters
// (ScalableBloomTest.CompoundFprStaysUnderTargetOverManyStages): c_0 = 30,
// p = 1%, s = 1, r = 0.9: 0.17 (1.07 before both); c_0 = 100, p = 0.1%:
// 0.42 (1.31 before). Like the paper's, the bound is on the mean over key
// sets: one filter of many small stages varies by tens of percent around
// it. Whole blocks cost up to 63 bytes per stage: small c_0 pays most.
//
// Limit: a blocked filter reaches at best 1.1e-8 (the model at 64 bits per
// key, the clamp of blocked_bloom.h, and k = 16). A stage whose 0.9 p_i is
// below that is built at 64 bits per key, and from there the bound p is no
// longer guaranteed; PredictedFpr() always reports the model's compound FPR.
// With p = 1% that first happens at stage 54 for r = 0.8 (c_0 * 2^54 keys
// with s = 2) and at stage 19 for r = 0.5 (the project's tests pin both).
//
// Thread-safety: const methods (queries, Serialize) may run concurrently with
// each other. Add* (which may add a stage) and assignment need exclusive
// access. Separate filters may grow on separate threads at once (the stage
// parameters they share are cached per process under a lock).
#ifndef BLOCKBLOOM_SCALABLE_BLOOM_H_
#define BLOCKBLOOM_SCALABLE_BLOOM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "blockbloom/blocked_bloom.h"

namespace blockbloom {

struct ScalableBloomOptions {
  uint64_t initial_capacity = 1024;  // c_0 >= 1
  double fpr = 0.01;                 // p in (0, 1): the compound bound
  double growth = 2.0;               // s in [1, 16]
  double tightening = 0.8;           // r in (0, 1)
};

class ScalableBloomFilter {
 public:
  // Most stages a filter has (Deserialize rejects more as damage): once it
  // has this many, keys go into the last stage (never lost; the bound p then
  // no longer holds). Reached only with s near 1: s = 2 needs c_0 * 2^4095 keys.
  static constexpr size_t kMaxStages = 4096;

  // InvalidArgument for options out of range (including NaN).
  static absl::StatusOr<ScalableBloomFilter> Create(const ScalableBloomOptions& options);
  // Options with initial_capacity = max(expected_keys, 1) and fpr = `fpr`:
  // up to expected_keys keys it is one blocked filter.
  static absl::StatusOr<ScalableBloomFilter> Create(uint64_t expected_keys, double fpr);
  // Parses Serialize() output; DataLoss on anything malformed: options out
  // of range, a stage count outside [1, kMaxStages], a stage whose capacity
  // is not the options' c_i, a stage before the newest that is not full, a
  // stage whose size is outside 1..64 bits per key of its capacity, or bytes
  // left over; ResourceExhausted when a stage's memory cannot be allocated.
  // A stage's exact geometry is not re-derived from the options
  // (it decides only the stage's FPR; docs/FORMAT.md "Scalable Bloom filter").
  static absl::StatusOr<ScalableBloomFilter> Deserialize(std::string_view encoded);

  // Adds to the newest stage, first adding a stage if it is full. If a new
  // stage cannot be allocated, or there are kMaxStages already, the key goes
  // into the full stage instead (never lost; the FPR then exceeds the bound).
  void AddKey(std::string_view key);
  void AddHash(uint64_t hash);
  bool MayContain(std::string_view key) const;
  bool MayContainHash(uint64_t hash) const;

  // docs/FORMAT.md "Scalable Bloom filter".
  std::string Serialize() const;
  // A moved-from filter has no stages (num_stages() 0) and may match every
  // key: its probes answer "may match", Add* change nothing, PredictedFpr()
  // is 1, and Serialize() writes one stage of the options' first capacity
  // with every bit set. It may be assigned to, used or destroyed.

  const ScalableBloomOptions& options() const { return options_; }
  size_t num_stages() const { return stages_.size(); }
  const BlockedBloomFilter& stage(size_t i) const { return stages_[i]; }
  uint64_t stage_capacity(size_t i) const { return capacities_[i]; }
  uint64_t stage_added(size_t i) const { return added_[i]; }
  // Keys added (saturating), persisted by Serialize.
  uint64_t num_added() const;
  // Filter bytes over all stages.
  uint64_t num_bytes() const;
  // Model FPR now: 1 - prod (1 - FPR of stage i with its keys).
  double PredictedFpr() const;

  // Capacity c_i and target p_i of stage i under `options` (valid ones).
  static uint64_t StageCapacity(const ScalableBloomOptions& options, size_t i);
  static double StageFpr(const ScalableBloomOptions& options, size_t i);
  // The model FPR stage i is built for: kStageModelMargin * p_i.
  static constexpr double kStageModelMargin = 0.9;

 private:
  explicit ScalableBloomFilter(const ScalableBloomOptions& options) : options_(options) {}
  absl::Status AddStage();

  ScalableBloomOptions options_;
  std::vector<BlockedBloomFilter> stages_;
  std::vector<uint64_t> capacities_;
  std::vector<uint64_t> added_;
};

}  // namespace blockbloom

#endif  // BLOCKBLOOM_SCALABLE_BLOOM_H_
