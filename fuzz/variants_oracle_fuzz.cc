// The standard (both hash schemes), partitioned, scalable and blocked filters
// against std::unordered_set oracles: inserts, queries, serialize/deserialize
// round trips (byte-exact), .bbf file round trips (EncodeFilterFile /
// DecodeFilterFile), and Union / Intersection (blockbloom/set_ops.h) of two
// filters whose shapes the input chooses: the union must hold both sets'
// keys, the intersection the common ones, and filters of different shapes
// must be refused. Any false negative aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/filter_file.h"
#include "blockbloom/partitioned_bloom.h"
#include "blockbloom/scalable_bloom.h"
#include "blockbloom/set_ops.h"
#include "blockbloom/standard_bloom.h"
#include "blocked/format.h"
#include "fuzz_input.h"

using blockbloom::BlockedBloomFilter;
using blockbloom::HashScheme;
using blockbloom::PartitionedBloomFilter;
using blockbloom::ScalableBloomFilter;
using blockbloom::ScalableBloomOptions;
using blockbloom::StandardBloomFilter;
using blockbloom::fuzz::Fail;
using blockbloom::fuzz::FuzzInput;

namespace {

using KeySet = std::unordered_set<std::string>;

// Bits per key from one byte: mostly ordinary, sometimes out of range or NaN
// (every Create clamps them).
double BitsPerKey(uint8_t b) {
  switch (b % 8) {
    case 0:
      return std::numeric_limits<double>::quiet_NaN();
    case 1:
      return -1.0;
    case 2:
      return 1e9;
    default:
      return 0.5 + (b >> 3) * 0.75;  // 0.5 .. 23.75
  }
}

// A filter of a shape the input chooses.
void Make(FuzzInput& in, HashScheme scheme, absl::StatusOr<StandardBloomFilter>* out) {
  if ((in.Byte() & 1) != 0) {
    *out =
        StandardBloomFilter::CreateWithGeometry(1 + in.U16() % 20000, 1 + in.Byte() % 64, scheme);
  } else {
    *out = StandardBloomFilter::Create(in.U16() % 3000, BitsPerKey(in.Byte()), scheme);
  }
}
void Make(FuzzInput& in, HashScheme, absl::StatusOr<PartitionedBloomFilter>* out) {
  if ((in.Byte() & 1) != 0) {
    *out = PartitionedBloomFilter::CreateWithGeometry(1 + in.U16() % 4000, 1 + in.Byte() % 64);
  } else {
    *out = PartitionedBloomFilter::Create(in.U16() % 3000, BitsPerKey(in.Byte()));
  }
}
void Make(FuzzInput& in, HashScheme, absl::StatusOr<BlockedBloomFilter>* out) {
  const uint8_t how = in.Byte() % 3;
  if (how == 1) {
    *out = BlockedBloomFilter::CreateWithGeometry(in.U16() % 4000, 1 + in.Byte() % 16);
  } else if (how == 2) {
    // A flat (format version 2) filter, as the LevelDB policies write them
    // up to 512 bytes: empty bits and a v2 trailer, read back by Deserialize.
    std::string encoded(1 + in.U16() % blockbloom::blocked::kFlatMaxBytes, '\0');
    blockbloom::blocked::AppendTrailer(1 + in.Byte() % 16, &encoded,
                                       blockbloom::blocked::Geometry::kFlat);
    *out = BlockedBloomFilter::Deserialize(encoded);
    if (out->ok() && !(*out)->flat()) Fail("a version-2 filter did not read back flat", "");
  } else {
    *out = BlockedBloomFilter::Create(in.U16() % 3000, BitsPerKey(in.Byte()));
  }
}
void Make(FuzzInput& in, HashScheme, absl::StatusOr<ScalableBloomFilter>* out) {
  static constexpr double kFprs[] = {0.01, 0.2, 1e-5, 0.5};
  static constexpr double kGrowths[] = {2.0, 1.0, 1.5, 4.0, 16.0};
  static constexpr double kTightenings[] = {0.8, 0.5, 0.9, 0.1};
  ScalableBloomOptions options;
  options.initial_capacity = 1 + in.Byte() % 64;
  options.fpr = kFprs[in.Byte() % 4];
  options.growth = kGrowths[in.Byte() % 5];
  options.tightening = kTightenings[in.Byte() % 4];
  *out = ScalableBloomFilter::Create(options);
  if (!out->ok()) Fail("scalable Create refused valid options", "");
}

bool SameShape(const StandardBloomFilter& a, const StandardBloomFilter& b) {
  return a.num_bits() == b.num_bits() && a.num_probes() == b.num_probes() &&
         a.scheme() == b.scheme();
}
bool SameShape(const PartitionedBloomFilter& a, const PartitionedBloomFilter& b) {
  return a.slice_bits() == b.slice_bits() && a.num_probes() == b.num_probes();
}
bool SameShape(const BlockedBloomFilter& a, const BlockedBloomFilter& b) {
  return a.num_bytes() == b.num_bytes() && a.num_probes() == b.num_probes() && a.flat() == b.flat();
}

template <class Filter>
void CheckHolds(const Filter& filter, const KeySet& keys, const char* what) {
  for (const std::string& key : keys) {
    if (!filter.MayContain(key)) Fail(what, key);
  }
}

template <class Filter>
Filter RoundTrip(const Filter& filter, const KeySet& keys) {
  const std::string bytes = filter.Serialize();
  auto reloaded = Filter::Deserialize(bytes);
  if (!reloaded.ok()) {
    std::fprintf(stderr, "%s\n", reloaded.status().ToString().c_str());
    Fail("own serialization rejected", "");
  }
  if (reloaded->Serialize() != bytes) Fail("round trip changed the bytes", "");
  CheckHolds(*reloaded, keys, "false negative after reload");
  return *std::move(reloaded);
}

template <class Filter>
void FileRoundTrip(const Filter& filter, const KeySet& keys) {
  // The count of distinct keys; a scalable filter's header takes its own
  // count (adds, duplicates included) instead (filter_file.h).
  const uint64_t num_keys = keys.size();
  const std::string file = blockbloom::EncodeFilterFile(filter, num_keys, 0.01);
  auto loaded = blockbloom::DecodeFilterFile(file);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
    Fail("own filter file rejected", "");
  }
  CheckHolds(*loaded, keys, "false negative after a filter file round trip");
  if (blockbloom::EncodeFilterFile(loaded->filter(), loaded->info().num_keys, 0.01) != file) {
    Fail("filter file round trip changed the bytes", "");
  }
}

template <class Filter>
void SetOps(const Filter& a, const KeySet& in_a, const Filter& b, const KeySet& in_b) {
  auto u = blockbloom::Union(a, b);
  auto i = blockbloom::Intersection(a, b);
  if (!SameShape(a, b)) {
    if (u.ok() || i.ok()) Fail("set operation on filters of different shapes", "");
    return;
  }
  if (!u.ok() || !i.ok()) Fail("set operation refused filters of one shape", "");
  CheckHolds(*u, in_a, "union lost a key of the first set");
  CheckHolds(*u, in_b, "union lost a key of the second set");
  for (const std::string& key : in_a) {
    if (in_b.count(key) != 0 && !i->MayContain(key)) Fail("intersection lost a common key", key);
  }
}

template <class Filter>
void Run(FuzzInput& in, HashScheme scheme) {
  absl::StatusOr<Filter> made_a, made_b;
  Make(in, scheme, &made_a);
  if (!made_a.ok()) Fail("Create failed for a small filter", "");
  Filter a = *std::move(made_a);
  KeySet in_a, in_b;
  absl::StatusOr<Filter> b_or = absl::UnknownError("no second filter yet");

  while (!in.empty()) {
    switch (in.Byte() % 7) {
      case 0:
      case 1: {
        std::string key = in.Key();
        a.AddKey(key);
        in_a.insert(std::move(key));
        break;
      }
      case 2: {  // single query
        const std::string key = in.Key();
        if (in_a.count(key) != 0 && !a.MayContain(key)) Fail("false negative (single)", key);
        break;
      }
      case 3:
        a = RoundTrip(a, in_a);
        break;
      case 4:
        FileRoundTrip(a, in_a);
        break;
      case 5: {  // a second filter (same shape as a, or one the input picks)
        if constexpr (!std::is_same_v<Filter, ScalableBloomFilter>) {
          if (!b_or.ok() || (in.Byte() & 3) == 0) {
            in_b.clear();
            if ((in.Byte() & 1) != 0) {
              b_or = Filter::Deserialize(a.Serialize());  // a copy of a's shape
              if (b_or.ok()) in_b = in_a;
            } else {
              Make(in, scheme, &b_or);
            }
            if (!b_or.ok()) Fail("Create failed for a small filter", "");
          }
          for (int n = in.Byte() % 16; n > 0; --n) {
            std::string key = in.Key();
            b_or->AddKey(key);
            in_b.insert(std::move(key));
          }
        }
        break;
      }
      case 6:
        if constexpr (!std::is_same_v<Filter, ScalableBloomFilter>) {
          if (b_or.ok()) SetOps(a, in_a, *b_or, in_b);
        }
        break;
    }
  }
  CheckHolds(a, in_a, "false negative (final check)");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  switch (in.Byte() % 5) {
    case 0:
      Run<StandardBloomFilter>(in, HashScheme::kDoubleHashing);
      break;
    case 1:
      Run<StandardBloomFilter>(in, HashScheme::kEnhancedDoubleHashing);
      break;
    case 2:
      Run<PartitionedBloomFilter>(in, HashScheme::kEnhancedDoubleHashing);
      break;
    case 3:
      Run<ScalableBloomFilter>(in, HashScheme::kEnhancedDoubleHashing);
      break;
    case 4:
      Run<BlockedBloomFilter>(in, HashScheme::kEnhancedDoubleHashing);
      break;
  }
  return 0;
}
