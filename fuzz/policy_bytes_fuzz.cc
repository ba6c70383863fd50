// Arbitrary bytes as a filter: the LevelDB policies' KeyMayMatch (blocked and
// migrating) and the deserializer must never crash, never trip a sanitizer and
// never read outside the bytes they were given. The filter is copied to the
// very end of an exact-size heap allocation, so ASan reports any over-read.
// A filter that does not parse must answer "may match".
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "blocked/format.h"
#include "fuzz_input.h"
#include "leveldb/slice.h"

namespace {
const leveldb::FilterPolicy* const kBlocked = blockbloom::NewBlockedBloomFilterPolicy(10);
const leveldb::FilterPolicy* const kMigrating = blockbloom::NewMigratingFilterPolicy(10);
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // First byte: how many bytes of key follow; the rest is the filter.
  const size_t key_len = std::min<size_t>(data[0] % 32, size - 1);
  const std::string key(reinterpret_cast<const char*>(data + 1), key_len);
  const size_t filter_len = size - 1 - key_len;
  auto exact = std::make_unique<char[]>(filter_len == 0 ? 1 : filter_len);
  std::memcpy(exact.get(), data + 1 + key_len, filter_len);
  const leveldb::Slice filter(exact.get(), filter_len);

  const bool blocked = kBlocked->KeyMayMatch(key, filter);
  kMigrating->KeyMayMatch(key, filter);  // built-in format: LevelDB's own reader
  blockbloom::blocked::FilterView view;
  const bool parses = blockbloom::blocked::ParseFilter({filter.data(), filter.size()}, &view);
  if (!parses && !blocked) blockbloom::fuzz::Fail("unparseable filter answered 'absent'", key);

  auto loaded = blockbloom::BlockedBloomFilter::Deserialize({filter.data(), filter.size()});
  if (loaded.ok() != parses) blockbloom::fuzz::Fail("Deserialize disagrees with ParseFilter", key);
  if (loaded.ok()) {
    if (loaded->MayContain(key) != blocked) blockbloom::fuzz::Fail("owned copy disagrees", key);
    if (loaded->Serialize() != std::string(filter.data(), filter.size())) {
      blockbloom::fuzz::Fail("round trip changed the bytes", key);
    }
  }
  return 0;
}
