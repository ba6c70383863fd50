// Steps shared by the oracle fuzzers of the counting filters (counting and
// d-left): they hold an std::unordered_multiset oracle and `held`, the
// oracle's keys with multiplicity, for picking. Each step reads the input in
// a fixed order: changing that order changes what every corpus input means.
#ifndef BLOCKBLOOM_FUZZ_ORACLE_CHECKS_H_
#define BLOCKBLOOM_FUZZ_ORACLE_CHECKS_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "fuzz_input.h"

namespace blockbloom {
namespace fuzz {

using Oracle = std::unordered_multiset<std::string>;

// Removes one held key, chosen by the input, from `held` and `oracle`, and
// returns it. REQUIRES: !held->empty().
inline std::string TakeHeldKey(FuzzInput& in, std::vector<std::string>* held, Oracle* oracle) {
  const size_t i = in.U16() % held->size();
  std::string key = (*held)[i];
  (*held)[i] = std::move(held->back());
  held->pop_back();
  oracle->erase(oracle->find(key));
  return key;
}

// A held key or a key from the input, as the input chooses.
inline std::string PickKey(FuzzInput& in, const std::vector<std::string>& held) {
  const bool pick_held = (in.Byte() & 1) != 0 && !held.empty();
  return pick_held ? held[in.U16() % held.size()] : in.Key();
}

// Single query of a key PickKey chooses: aborts on a false negative. Returns
// the key; *count is how many times the oracle holds it.
template <typename Filter>
std::string CheckSingleQuery(FuzzInput& in, const Filter& filter,
                             const std::vector<std::string>& held, const Oracle& oracle,
                             size_t* count) {
  std::string key = PickKey(in, held);
  *count = oracle.count(key);
  if (*count != 0 && !filter.MayContain(key)) Fail("false negative (single)", key);
  return key;
}

// Aborts unless the filter answers "may contain" for every held key.
template <typename Filter>
void CheckHeldKeys(const Filter& filter, const std::vector<std::string>& held, const char* what) {
  for (const std::string& key : held) {
    if (!filter.MayContain(key)) Fail(what, key);
  }
}

// Batch query (MayContainKeys) of every held key plus up to 15 from the
// input: aborts where an answer differs from MayContain or misses a key the
// oracle holds.
template <typename Filter>
void CheckBatchQuery(FuzzInput& in, const Filter& filter, const std::vector<std::string>& held,
                     const Oracle& oracle) {
  std::vector<std::string> keys(held.begin(), held.end());
  for (int i = in.Byte() % 16; i > 0; --i) keys.push_back(in.Key());
  std::vector<std::string_view> views(keys.begin(), keys.end());
  auto out = std::make_unique<bool[]>(keys.size() + 1);
  filter.MayContainKeys(views, absl::MakeSpan(out.get(), keys.size()));
  for (size_t i = 0; i < keys.size(); ++i) {
    if (out[i] != filter.MayContain(keys[i])) Fail("batch and single answers differ", keys[i]);
    // find, not count: a multiset's count walks every copy of the key, which
    // made this loop quadratic in a key inserted thousands of times.
    if (!out[i] && oracle.find(keys[i]) != oracle.end()) Fail("false negative (batch)", keys[i]);
  }
}

// The operation loop both oracles run: until the input ends, one byte picks
// one of 7 operations; 5 (CheckBatchQuery) and 6 (check_all) are the same
// for both and run here, 0..4 run as filter_op(code). check_all(what) runs
// once more at the end.
template <typename Filter, typename FilterOp, typename CheckAll>
void RunOperations(FuzzInput& in, const Filter& filter, const std::vector<std::string>& held,
                   const Oracle& oracle, FilterOp filter_op, CheckAll check_all) {
  while (!in.empty()) {
    const int code = in.Byte() % 7;
    if (code == 5) {
      CheckBatchQuery(in, filter, held, oracle);
    } else if (code == 6) {
      check_all("false negative (full check)");
    } else {
      filter_op(code);
    }
  }
  check_all("false negative (final check)");
}

}  // namespace fuzz
}  // namespace blockbloom

#endif  // BLOCKBLOOM_FUZZ_ORACLE_CHECKS_H_
