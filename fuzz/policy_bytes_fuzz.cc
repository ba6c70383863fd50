// Arbitrary bytes as a filter: every LevelDB policy's KeyMayMatch (blocked,
// compact and both migrating ones) and the deserializer must never crash,
// never trip a sanitizer and never read outside the bytes they were given.
// The filter is copied to the very end of an exact-size heap allocation, so
// ASan reports any over-read. Every policy must answer what the one
// recognizer (src/format/recognize.h) says: under 2 bytes "no"; a blockbloom
// encoding by its reader; LevelDB's built-in by LevelDB (migrating policies)
// or "may match" (the others); anything else "may match".
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/hash.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "blocked/format.h"
#include "format/recognize.h"
#include "leveldb/filter_policy.h"
#include "fuzz_input.h"
#include "leveldb/slice.h"

namespace {
const leveldb::FilterPolicy* const kBlocked = blockbloom::NewBlockedBloomFilterPolicy(10);
const leveldb::FilterPolicy* const kMigrating = blockbloom::NewMigratingFilterPolicy(10);
const leveldb::FilterPolicy* const kCompact = blockbloom::NewCompactFilterPolicy(10);
const leveldb::FilterPolicy* const kMigratingCompact =
    blockbloom::NewMigratingCompactFilterPolicy(10);
const leveldb::FilterPolicy* const kBuiltin = leveldb::NewBloomFilterPolicy(10);
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
  const std::string_view bytes(filter.data(), filter.size());
  const blockbloom::format::Recognized kind = blockbloom::format::Recognize(bytes);
  bool want, want_migrating;
  if (kind.kind == blockbloom::format::FilterKind::kLevelDbBuiltin) {
    want = true;
    want_migrating = kBuiltin->KeyMayMatch(key, filter);
  } else {
    want = want_migrating = kind.read(bytes, blockbloom::HashKey(key));
  }
  if (blocked != want || kCompact->KeyMayMatch(key, filter) != want) {
    blockbloom::fuzz::Fail("a policy disagrees with the recognizer", key);
  }
  if (kMigrating->KeyMayMatch(key, filter) != want_migrating ||
      kMigratingCompact->KeyMayMatch(key, filter) != want_migrating) {
    blockbloom::fuzz::Fail("a migrating policy disagrees with the recognizer", key);
  }
  blockbloom::blocked::FilterView view;
  const bool parses = blockbloom::blocked::ParseFilter(bytes, &view);
  if (!parses && kind.kind == blockbloom::format::FilterKind::kBlocked && !blocked) {
    blockbloom::fuzz::Fail("unparseable blocked filter answered 'absent'", key);
  }

  auto loaded = blockbloom::BlockedBloomFilter::Deserialize({filter.data(), filter.size()});
  if (loaded.ok() != parses) blockbloom::fuzz::Fail("Deserialize disagrees with ParseFilter", key);
  if (loaded.ok()) {
    if (filter.size() >= 2 && loaded->MayContain(key) != blocked) {
      blockbloom::fuzz::Fail("owned copy disagrees", key);
    }
    if (loaded->Serialize() != std::string(filter.data(), filter.size())) {
      blockbloom::fuzz::Fail("round trip changed the bytes", key);
    }
  }
  return 0;
}
