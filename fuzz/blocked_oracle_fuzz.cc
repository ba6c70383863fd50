// The blocked Bloom filter against a std::unordered_set oracle: inserts,
// single and batch queries, serialize/reload. Any false negative aborts. On
// long inputs the FPR is compared with the model and a far-off one aborts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "blockbloom/blocked_bloom.h"
#include "fuzz_input.h"

using blockbloom::BlockedBloomFilter;
using blockbloom::fuzz::Fail;
using blockbloom::fuzz::FuzzInput;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  const uint64_t capacity = in.U16() % 4096;
  const double bits_per_key = static_cast<double>(in.Byte() % 40) - 4.0;  // includes <= 0
  auto created = BlockedBloomFilter::Create(capacity, bits_per_key);
  if (!created.ok()) Fail("Create failed for a small filter", "");
  BlockedBloomFilter filter = std::move(*created);
  std::unordered_set<std::string> oracle;
  uint64_t absent_queries = 0, false_positives = 0;

  while (!in.empty()) {
    switch (in.Byte() % 5) {
      case 0: {  // insert
        std::string key = in.Key();
        filter.AddKey(key);
        oracle.insert(std::move(key));
        break;
      }
      case 1: {  // insert a batch through the SIMD path
        std::vector<std::string> keys(in.Byte() % 32);
        for (auto& k : keys) k = in.Key();
        std::vector<std::string_view> views(keys.begin(), keys.end());
        filter.AddKeys(views);
        oracle.insert(keys.begin(), keys.end());
        break;
      }
      case 2: {  // single query
        const std::string key = in.Key();
        const bool may = filter.MayContain(key);
        if (oracle.count(key) != 0 && !may) Fail("false negative (single)", key);
        if (oracle.count(key) == 0) {
          ++absent_queries;
          false_positives += may;
        }
        break;
      }
      case 3: {  // batch query of every inserted key plus some others
        std::vector<std::string> keys(oracle.begin(), oracle.end());
        for (int i = in.Byte() % 16; i > 0; --i) keys.push_back(in.Key());
        std::vector<std::string_view> views(keys.begin(), keys.end());
        std::vector<char> out(keys.size() + 1);
        filter.MayContainKeys(views,
                              absl::MakeSpan(reinterpret_cast<bool*>(out.data()), keys.size()),
                              1 + in.Byte() % 128);
        for (size_t i = 0; i < keys.size(); ++i) {
          if (oracle.count(keys[i]) != 0 && !out[i]) Fail("false negative (batch)", keys[i]);
        }
        break;
      }
      case 4: {  // serialize and reload
        auto reloaded = BlockedBloomFilter::Deserialize(filter.Serialize());
        if (!reloaded.ok()) Fail("own serialization rejected", "");
        filter = std::move(*reloaded);
        for (const std::string& key : oracle) {
          if (!filter.MayContain(key)) Fail("false negative after reload", key);
        }
        break;
      }
    }
  }
  // Sanity on the false-positive rate when a run was long enough to say.
  if (absent_queries >= 2000 && capacity >= 1000 && oracle.size() <= capacity &&
      bits_per_key >= 8 && false_positives > absent_queries / 10) {
    Fail("FPR far above the model", "");
  }
  return 0;
}
