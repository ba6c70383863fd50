// libFuzzer: arbitrary bytes as a compact filter. They go to both compact
// policies' KeyMayMatch (the migrating one also routes them to the blocked
// and built-in readers by their last byte), to the lenient probe, and to
// CompactFilter::Deserialize. The bytes are copied to the very end of a heap
// allocation of exactly their size, so ASan reports any read past the end.
// Nothing may crash, hang or read out of bounds; a filter that passes
// Deserialize's full validation must answer like the lenient reader.
//
// Random bytes rarely carry a valid trailer (its check byte), so each input
// is also read a second way: the first bytes choose B, r and W, the rest is
// taken as an arbitrary Rice stream and arbitrary index offsets, and a valid
// trailer is written for them. That drives the bucket decoder over arbitrary
// stream contents.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "blockbloom/compact_filter.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/hash.h"
#include "compact/format.h"
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"

namespace {

void Probe(const uint8_t* data, size_t size, uint64_t salt) {
  static const leveldb::FilterPolicy* const compact = blockbloom::NewCompactFilterPolicy(10);
  static const leveldb::FilterPolicy* const migrating =
      blockbloom::NewMigratingCompactFilterPolicy(10);

  // Exactly `size` bytes on the heap, the filter flush against the end.
  std::unique_ptr<char[]> heap = std::make_unique<char[]>(size == 0 ? 1 : size);
  char* filter = heap.get() + (size == 0 ? 1 : 0);
  if (size > 0) std::memcpy(filter, data, size);
  const std::string_view bytes(filter, size);
  const leveldb::Slice slice(filter, size);

  for (int i = 0; i < 16; ++i) {
    const std::string key = "key" + std::to_string(salt + i);
    (void)compact->KeyMayMatch(key, slice);
    (void)migrating->KeyMayMatch(key, slice);
    (void)blockbloom::compact::EncodedMayContainHash(bytes, blockbloom::HashKey(key));
  }

  auto parsed = blockbloom::CompactFilter::Deserialize(bytes);
  if (parsed.ok()) {
    for (uint64_t i = 0; i < 256; ++i) {
      const uint64_t h = (salt + i) * 0x9E3779B97F4A7C15ull;
      if (parsed->MayContainHash(h) != blockbloom::compact::EncodedMayContainHash(bytes, h)) {
        std::abort();
      }
    }
  }
}

// A valid trailer over arbitrary stream and index contents.
std::string WithValidTrailer(const uint8_t* data, size_t size) {
  namespace compact = blockbloom::compact;
  if (size < 4) return {};
  compact::Params p;
  p.num_buckets = 1 + data[0] % 8;
  p.rice_bits = data[1] % (compact::kMaxRiceBits + 1);
  p.bucket_width = 1 + ((uint64_t{data[2]} << 8 | data[3]) << (data[2] % 48));
  if (p.bucket_width > compact::kMaxRange / p.num_buckets) {
    p.bucket_width = compact::kMaxRange / p.num_buckets;
  }
  const uint8_t* payload = data + 4;
  const size_t payload_size = size - 4;
  p.stream_bits = 8 * payload_size - (payload_size > 0 ? data[2] % 8 : 0);
  std::string out(reinterpret_cast<const char*>(payload), (p.stream_bits + 7) / 8);
  if (!out.empty() && p.stream_bits % 8 != 0) {
    out.back() = static_cast<char>(out.back() & ((1 << (p.stream_bits % 8)) - 1));
  }
  // Offsets: sorted or not, in range or not, as the input says.
  std::vector<uint64_t> offsets(p.num_buckets - 1);
  for (size_t j = 0; j < offsets.size(); ++j) {
    const uint64_t x = payload_size > 0 ? payload[(j * 7) % payload_size] : 0;
    offsets[j] = (data[3] & 1) ? (p.stream_bits * (j + 1)) / p.num_buckets + (x % 5)
                               : (x * p.stream_bits) / 255;
    offsets[j] &= (uint64_t{1} << compact::BitWidth(p.stream_bits)) - 1;
  }
  compact::AppendIndexAndTrailer(p, offsets.data(), &out);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint64_t salt = 0;
  for (size_t i = 0; i < size && i < 8; ++i) salt = (salt << 8) | data[i];
  Probe(data, size, salt);
  const std::string repaired = WithValidTrailer(data, size);
  if (!repaired.empty()) {
    blockbloom::compact::FilterView view;
    if (!blockbloom::compact::ParseFilter(repaired, &view)) std::abort();  // writer/reader agree
    Probe(reinterpret_cast<const uint8_t*>(repaired.data()), repaired.size(), salt);
  }
  return 0;
}
