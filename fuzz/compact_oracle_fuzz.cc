// libFuzzer: the compact filter's builder and reader against an exact oracle.
//
// The input is a program. Byte 0 picks bits/key (1 + b/8, so 1..32.9, and
// 0xFF means NaN); then each op byte's low 2 bits choose:
//   0  insert a key: next byte = length (0..63), then that many bytes
//   1  insert a copy of an earlier key (duplicates must work)
//   2  build: CompactFilter and both LevelDB policies from the keys so far;
//      every oracle key must match (a false negative calls abort()), the
//      class's size must be within ceil(n * bpk / 8) + 8 and Deserialize
//      must accept and answer alike; the two policies must write the same
//      bytes, at most LevelDB's built-in bit bytes + 3 (+ 8 for version 1),
//      which the class of their format (compact or, at 1-3 bits/key, a
//      blocked-format Bloom filter) loads and answers alike
//   3  query: next byte = length, key bytes; if the oracle holds the key,
//      the last built filter must say "may match"
// The oracle is a std::unordered_set<std::string> of the keys.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/compact_filter.h"
#include "blockbloom/compact_filter_policy.h"
#include "format/recognize.h"
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"

namespace {

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::string Bytes(size_t n) {
    const size_t take = std::min(n, size_ - std::min(pos_, size_));
    std::string out(reinterpret_cast<const char*>(data_ + pos_), take);
    pos_ += take;
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

void Check(bool ok) {
  if (!ok) std::abort();
}

constexpr size_t kMaxKeys = 4096;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  const uint8_t bpk_byte = in.Byte();
  const double bpk = bpk_byte == 0xFF ? std::nan("") : 1.0 + bpk_byte / 8.0;
  const std::unique_ptr<const leveldb::FilterPolicy> compact(
      blockbloom::NewCompactFilterPolicy(bpk));
  const std::unique_ptr<const leveldb::FilterPolicy> migrating(
      blockbloom::NewMigratingCompactFilterPolicy(bpk));

  std::unordered_set<std::string> oracle;
  std::vector<std::string> keys;  // insertion order, duplicates kept
  std::unordered_set<std::string> built_oracle;
  std::string built;  // last policy filter
  bool have_built = false;

  while (!in.empty()) {
    const uint8_t op = in.Byte();
    switch (op & 3) {
      case 0: {
        if (keys.size() >= kMaxKeys) break;
        std::string key = in.Bytes(in.Byte() & 63);
        oracle.insert(key);
        keys.push_back(std::move(key));
        break;
      }
      case 1: {
        if (keys.empty() || keys.size() >= kMaxKeys) break;
        keys.push_back(keys[(op >> 2) % keys.size()]);
        break;
      }
      case 2: {
        const std::vector<std::string_view> views(keys.begin(), keys.end());
        auto filter = blockbloom::CompactFilter::BuildFromKeys(views, bpk);
        Check(filter.ok());
        for (const std::string& key : oracle) Check(filter->MayContain(key));
        Check(filter->size_bytes() <= blockbloom::CompactFilterMaxBytes(keys.size(), bpk));
        const std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
        std::string from_policy, from_migrating;
        compact->CreateFilter(slices.data(), static_cast<int>(slices.size()), &from_policy);
        migrating->CreateFilter(slices.data(), static_cast<int>(slices.size()), &from_migrating);
        Check(from_policy == from_migrating);
        const double clamped = blockbloom::ClampBitsPerKey(bpk);
        const uint64_t bit_bytes =
            std::max<uint64_t>(std::ceil(keys.size() * clamped / 8.0), keys.empty() ? 0 : 8);
        Check(from_policy.size() <= bit_bytes + 3 + 8);
        for (const std::string& key : oracle) {
          Check(compact->KeyMayMatch(key, from_policy));
          Check(migrating->KeyMayMatch(key, from_policy));
        }
        auto as_compact = blockbloom::CompactFilter::Deserialize(from_policy);
        auto as_bloom = blockbloom::BlockedBloomFilter::Deserialize(from_policy);
        Check(as_compact.ok() != as_bloom.ok());  // exactly one format
        for (uint64_t i = 0; i < 64; ++i) {
          const uint64_t h = i * 0x9E3779B97F4A7C15ull + size;
          const bool reloaded =
              as_compact.ok() ? as_compact->MayContainHash(h) : as_bloom->MayContainHash(h);
          Check(reloaded == blockbloom::format::Recognize(from_policy).read(from_policy, h));
        }
        // The class's own bytes reload alike.
        auto reloaded = blockbloom::CompactFilter::Deserialize(filter->Serialize());
        Check(reloaded.ok());
        Check(reloaded->num_entries() == filter->num_entries());
        for (uint64_t i = 0; i < 64; ++i) {
          const uint64_t h = i * 0x9E3779B97F4A7C15ull + size;
          Check(reloaded->MayContainHash(h) == filter->MayContainHash(h));
        }
        if (oracle.empty()) {
          for (int i = 0; i < 16; ++i) Check(!filter->MayContain(std::string(1, char(i))));
        }
        built = std::move(from_policy);
        built_oracle = oracle;
        have_built = true;
        break;
      }
      case 3: {
        const std::string key = in.Bytes(in.Byte() & 63);
        if (have_built) {
          const bool match = compact->KeyMayMatch(key, built);
          if (built_oracle.count(key) != 0) Check(match);
        }
        break;
      }
    }
  }
  return 0;
}
