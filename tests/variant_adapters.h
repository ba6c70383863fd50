// One interface over every filter variant, so each gets the same scrutiny
// (TEST_P over kAllVariants). Test-only.
#ifndef BLOCKBLOOM_TESTS_VARIANT_ADAPTERS_H_
#define BLOCKBLOOM_TESTS_VARIANT_ADAPTERS_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/math.h"
#include "blockbloom/partitioned_bloom.h"
#include "blockbloom/scalable_bloom.h"
#include "blockbloom/standard_bloom.h"

namespace blockbloom {
namespace testing_variants {

class AnyFilter {
 public:
  virtual ~AnyFilter() = default;
  virtual void Add(std::string_view key) = 0;
  virtual bool MayContain(std::string_view key) const = 0;
  // The variant's model FPR for the keys added so far.
  virtual double PredictedFpr() const = 0;
  virtual std::string Serialize() const = 0;
  // Deserialize(encoded) of the same variant; null on error.
  virtual std::unique_ptr<AnyFilter> Parse(std::string_view encoded) const = 0;
};

template <class F>
class Adapter : public AnyFilter {
 public:
  explicit Adapter(F f) : f_(std::move(f)) {}
  void Add(std::string_view key) override {
    f_.AddKey(key);
    ++added_;
  }
  bool MayContain(std::string_view key) const override { return f_.MayContain(key); }
  double PredictedFpr() const override {
    if constexpr (std::is_same_v<F, BlockedBloomFilter>) {
      return BlockedBloomPredictedFpr(added_, f_.num_bytes(), f_.num_probes());
    } else {
      return f_.PredictedFpr();
    }
  }
  std::string Serialize() const override { return f_.Serialize(); }
  std::unique_ptr<AnyFilter> Parse(std::string_view encoded) const override {
    absl::StatusOr<F> f = F::Deserialize(encoded);
    if (!f.ok()) return nullptr;
    return std::make_unique<Adapter<F>>(*std::move(f));
  }
  const F& filter() const { return f_; }

 private:
  F f_;
  uint64_t added_ = 0;
};

struct Variant {
  std::string name;
  // A filter for `n` keys at FPR `fpr` (the scalable ones start far smaller
  // so that they grow several stages).
  std::function<std::unique_ptr<AnyFilter>(uint64_t n, double fpr)> make;
  bool self_checking_format;  // every truncation of Serialize() is rejected
};

template <class F>
std::unique_ptr<AnyFilter> Wrap(absl::StatusOr<F> f) {
  if (!f.ok()) return nullptr;
  return std::make_unique<Adapter<F>>(*std::move(f));
}

// Scalable filters starting at n / 16 + 1 keys, so n keys fill several stages.
inline std::function<std::unique_ptr<AnyFilter>(uint64_t, double)> ScalableFrom(double tightening,
                                                                                double growth) {
  return [tightening, growth](uint64_t n, double fpr) {
    ScalableBloomOptions o;
    o.initial_capacity = n / 16 + 1;
    o.fpr = fpr;
    o.tightening = tightening;
    o.growth = growth;
    return Wrap(ScalableBloomFilter::Create(o));
  };
}

inline std::vector<Variant> AllVariants() {
  return {
      {"Blocked",
       [](uint64_t n, double fpr) {
         return Wrap(BlockedBloomFilter::Create(n, *BlockedBitsPerKeyForFpr(fpr)));
       },
       false},
      {"StandardDouble",
       [](uint64_t n, double fpr) {
         return Wrap(StandardBloomFilter::CreateForFpr(n, fpr, HashScheme::kDoubleHashing));
       },
       true},
      {"StandardEnhanced",
       [](uint64_t n, double fpr) {
         return Wrap(StandardBloomFilter::CreateForFpr(n, fpr, HashScheme::kEnhancedDoubleHashing));
       },
       true},
      {"Partitioned",
       [](uint64_t n, double fpr) { return Wrap(PartitionedBloomFilter::CreateForFpr(n, fpr)); },
       true},
      {"ScalableR08", ScalableFrom(/*tightening=*/0.8, /*growth=*/2), true},
      {"ScalableR05Growth4", ScalableFrom(/*tightening=*/0.5, /*growth=*/4), true},
  };
}

}  // namespace testing_variants
}  // namespace blockbloom

#endif  // BLOCKBLOOM_TESTS_VARIANT_ADAPTERS_H_
