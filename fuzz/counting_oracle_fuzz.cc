// The blocked counting Bloom filter against a std::unordered_multiset oracle:
// inserts (single and repeated, to saturate tiny filters), erases of keys the
// oracle holds (the documented precondition of Erase), erases of keys the
// filter rules out (NotFound, nothing changed), single and batch queries.
// Aborts on a false negative, on an Erase of a held key that is refused, on a
// counter underflow (impossible when the precondition holds), on a count
// bound below the true count, and on a key count that differs from the
// oracle's.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "blockbloom/counting_bloom.h"
#include "fuzz_input.h"
#include "oracle_checks.h"

using blockbloom::CountingBloomFilter;
using blockbloom::CountingBloomStats;
using namespace blockbloom::fuzz;  // NOLINT: FuzzInput, Fail and the oracle steps

namespace {

// Counters per key from one byte: mostly ordinary, sometimes out of range or
// NaN (Create clamps both).
double CountersPerKey(uint8_t b) {
  switch (b % 8) {
    case 0:
      return std::numeric_limits<double>::quiet_NaN();
    case 1:
      return -3.0;
    case 2:
      return 1000.0;
    default:
      return 1.0 + (b >> 3) * 0.5;  // 1 .. 16.5
  }
}

bool SameStats(const CountingBloomStats& a, const CountingBloomStats& b) {
  return a.keys == b.keys && a.saturated_counters == b.saturated_counters &&
         a.underflows == b.underflows;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  const uint8_t shape = in.Byte();
  auto created =
      (shape & 1) != 0
          // Tiny: 1..4 blocks, any k, so counters saturate quickly.
          ? CountingBloomFilter::CreateWithGeometry(1 + (shape >> 1) % 4, 1 + in.Byte() % 16)
          : CountingBloomFilter::Create(in.U16() % 2048, CountersPerKey(in.Byte()));
  if (!created.ok()) Fail("Create failed for a small filter", "");
  CountingBloomFilter& filter = **created;

  Oracle oracle;
  std::vector<std::string> held;  // the oracle's keys with multiplicity, for picking

  const auto check_all = [&](const char* what) {
    CheckHeldKeys(filter, held, what);
    const CountingBloomStats stats = filter.stats();
    if (stats.keys != oracle.size()) Fail("key count differs from the oracle", "");
    if (stats.underflows != 0) Fail("counter underflow with only held keys erased", "");
  };

  RunOperations(
      in, filter, held, oracle,
      [&](int code) {
        switch (code) {
          case 0: {  // insert
            std::string key = in.Key();
            filter.Insert(key);
            oracle.insert(key);
            held.push_back(std::move(key));
            break;
          }
          case 1: {  // the same key many times: saturates counters of small filters
            std::string key = in.Key();
            for (int i = in.Byte() % 40; i > 0; --i) {
              filter.Insert(key);
              oracle.insert(key);
              held.push_back(key);
            }
            break;
          }
          case 2: {  // erase a key the oracle holds (Erase's precondition)
            if (held.empty()) break;
            const std::string key = TakeHeldKey(in, &held, &oracle);
            if (!filter.Erase(key).ok()) Fail("Erase of a held key refused (false negative)", key);
            break;
          }
          case 3: {  // erase a key the filter rules out: NotFound, nothing changed
            const std::string key = in.Key();
            if (oracle.count(key) != 0) break;
            if (filter.MayContain(key)) break;  // a false positive: erasing it is the caller's bug
            const CountingBloomStats before = filter.stats();
            const absl::Status s = filter.Erase(key);
            if (!absl::IsNotFound(s)) Fail("Erase of a ruled-out key was not NotFound", key);
            if (!SameStats(before, filter.stats())) Fail("refused Erase changed the stats", key);
            if (filter.MayContain(key)) Fail("refused Erase changed the key's counters", key);
            break;
          }
          case 4: {  // single query, of an input key or a held one
            size_t count = 0;
            const std::string key = CheckSingleQuery(in, filter, held, oracle, &count);
            // The smallest counter bounds the multiplicity (15 = saturated / at least 15).
            const uint32_t bound = filter.CountUpperBound(key);
            if (bound < std::min<size_t>(count, CountingBloomFilter::kMaxCount)) {
              Fail("CountUpperBound below the true count", key);
            }
            break;
          }
            // 5: batch query of every held key plus some others; 6: check every
            // held key (RunOperations).
        }
      },
      check_all);
  return 0;
}
