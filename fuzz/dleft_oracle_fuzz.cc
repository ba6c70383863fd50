// The d-left counting Bloom filter against a std::unordered_multiset oracle:
// inserts (repeated, to reach the 2-bit counter's limit; into tiny tables, to
// fill buckets), erases of keys the oracle holds, erases of keys the filter
// rules out, single and batch queries. A refused insert (ResourceExhausted)
// must change nothing, so the oracle does not record it. Aborts on a false
// negative, on a refused insert that changed anything, on a refused Erase of
// a held key, and on counts that disagree with the oracle.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "blockbloom/dleft_counting_bloom.h"
#include "fuzz_input.h"
#include "oracle_checks.h"

using blockbloom::DleftCountingBloomFilter;
using blockbloom::DleftStats;
using namespace blockbloom::fuzz;  // NOLINT: FuzzInput, Fail and the oracle steps

namespace {

double TargetFpr(uint8_t b) {
  switch (b % 6) {
    case 0:
      return std::numeric_limits<double>::quiet_NaN();
    case 1:
      return 0.0;  // clamped to 1e-7
    case 2:
      return 2.0;  // clamped to 1
    case 3:
      return 0.01;
    case 4:
      return 1e-4;
    default:
      return 0.3;
  }
}

bool SameStats(const DleftStats& a, const DleftStats& b) {
  return a.keys == b.keys && a.occupied_cells == b.occupied_cells;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  const uint8_t shape = in.Byte();
  // Bit 7 picks 12-bit cells (10 per bucket, a fourth key on one
  // fingerprint takes a second cell) for the geometric shapes.
  const int cell_bits = (shape & 0x80) != 0 ? DleftCountingBloomFilter::kNarrowCellBits
                                            : DleftCountingBloomFilter::kCellBits;
  auto created = (shape & 1) != 0
                     // 1..32 buckets per subtable: 32..1024 cells, so buckets fill.
                     ? DleftCountingBloomFilter::CreateWithGeometry((shape >> 1) % 6, 1, cell_bits)
                     : DleftCountingBloomFilter::Create(in.U16() % 2048, TargetFpr(in.Byte()));
  if (!created.ok()) Fail("Create failed for a small filter", "");
  DleftCountingBloomFilter& filter = **created;

  Oracle oracle;
  std::vector<std::string> held;  // the oracle's keys with multiplicity, for picking
  uint64_t refusals = 0;

  const auto check_all = [&](const char* what) {
    CheckHeldKeys(filter, held, what);
    const DleftStats stats = filter.stats();
    if (stats.keys != oracle.size()) Fail("key count differs from the oracle", "");
    if (stats.full_bucket_failures + stats.counter_overflows != refusals) {
      Fail("refusal count differs from the refusals seen", "");
    }
  };

  const auto insert = [&](const std::string& key) {
    const DleftStats before = filter.stats();
    const uint32_t count_before = filter.Count(key);
    const bool may_before = filter.MayContain(key);
    const absl::Status s = filter.Insert(key);
    if (s.ok()) {
      // The key's fingerprint's cells (one, or more for 12-bit cells past a
      // count of 3) grew by one in all.
      if (filter.Count(key) != count_before + 1)
        Fail("Insert did not add one to the key's cells", key);
      oracle.insert(key);
      held.push_back(key);
      return;
    }
    if (!absl::IsResourceExhausted(s))
      Fail("Insert failed with a status other than ResourceExhausted", key);
    ++refusals;
    const DleftStats after = filter.stats();
    if (!SameStats(before, after)) Fail("refused insert changed the stats", key);
    if (filter.Count(key) != count_before || filter.MayContain(key) != may_before) {
      Fail("refused insert changed the key's cell", key);
    }
    if (count_before < DleftCountingBloomFilter::kMaxCount &&
        after.full_bucket_failures != before.full_bucket_failures + 1) {
      Fail("refused insert below the counter limit not counted as a full bucket", key);
    }
  };

  RunOperations(
      in, filter, held, oracle,
      [&](int code) {
        switch (code) {
          case 0:
            insert(in.Key());
            break;
          case 1: {  // the same key several times: the 2-bit counter refuses the 4th
            const std::string key = in.Key();
            for (int i = in.Byte() % 6; i > 0; --i) insert(key);
            break;
          }
          case 2: {  // erase a key the oracle holds (Erase's precondition)
            if (held.empty()) break;
            const std::string key = TakeHeldKey(in, &held, &oracle);
            const uint32_t count_before = filter.Count(key);
            if (!filter.Erase(key).ok()) Fail("Erase of a held key refused (false negative)", key);
            if (filter.Count(key) != count_before - 1)
              Fail("Erase did not take one from the key's cell", key);
            break;
          }
          case 3: {  // erase a key the filter rules out: NotFound, nothing changed
            const std::string key = in.Key();
            if (oracle.count(key) != 0 || filter.MayContain(key)) break;
            const DleftStats before = filter.stats();
            if (!absl::IsNotFound(filter.Erase(key)))
              Fail("Erase of a ruled-out key was not NotFound", key);
            if (!SameStats(before, filter.stats())) Fail("refused Erase changed the stats", key);
            break;
          }
          case 4: {  // single query, of an input key or a held one
            size_t count = 0;
            const std::string key = CheckSingleQuery(in, filter, held, oracle, &count);
            // Keys sharing a whole fingerprint share a cell: the count is at least ours.
            if (filter.Count(key) < count) Fail("Count below the true count", key);
            if ((filter.Count(key) != 0) != filter.MayContain(key))
              Fail("Count and MayContain disagree", key);
            break;
          }
            // 5: batch query of every held key plus some others; 6: check every
            // held key (RunOperations).
        }
      },
      check_all);
  return 0;
}
