// Arbitrary bytes to every deserializer: StandardBloomFilter,
// PartitionedBloomFilter, ScalableBloomFilter and BlockedBloomFilter
// ::Deserialize, and DecodeFilterFile (.bbf). Each gets its own copy of the
// bytes at the very end of an exact-size heap allocation, so ASan reports
// any read past them. No decoder may crash or trip a sanitizer; whatever
// decodes must answer queries, re-serialize to the same bytes, and decode
// again with the same answers.
//
// Input: one mode byte, then the bytes. Mode bit 0 repairs the .bbf framing
// (declared payload size and the XXH3 checksum) before decoding, so the
// fuzzer gets past the checksum to the header and payload checks.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/filter_file.h"
#include "blockbloom/hash.h"
#include "blockbloom/partitioned_bloom.h"
#include "blockbloom/scalable_bloom.h"
#include "blockbloom/standard_bloom.h"
#include "common/coding.h"
#include "fuzz_input.h"

using blockbloom::fuzz::ExactCopy;
using blockbloom::fuzz::Fail;

namespace {

constexpr std::string_view kProbes[] = {"", "a", "key", "https://example.com/", "\xff\x00\x01"};

[[noreturn]] void Broken(const char* decoder, const char* what) {
  std::fprintf(stderr, "%s: ", decoder);
  Fail(what, "");
}

// Payload size (header offset 48) and checksum of a .bbf file made consistent
// with the bytes (docs/FORMAT.md "Standalone filter files (.bbf)").
void RepairFraming(std::string* file) {
  const size_t min_size = blockbloom::kFilterFileHeaderSize + blockbloom::kFilterFileChecksumSize;
  if (file->size() < min_size) return;
  blockbloom::internal::EncodeFixed64(&(*file)[48], file->size() - min_size);
  const size_t body = file->size() - blockbloom::kFilterFileChecksumSize;
  blockbloom::internal::EncodeFixed64(&(*file)[body], blockbloom::HashBytes(file->data(), body));
}

template <class Filter>
void CheckDecoder(std::string_view bytes, const char* name) {
  const ExactCopy copy(bytes);
  absl::StatusOr<Filter> decoded = Filter::Deserialize(copy.view());
  if (!decoded.ok()) return;
  bool answers[std::size(kProbes)];
  for (size_t i = 0; i < std::size(kProbes); ++i) answers[i] = decoded->MayContain(kProbes[i]);
  const std::string again = decoded->Serialize();
  if (again != bytes) Broken(name, "re-serialization differs from the decoded bytes");
  const ExactCopy copy2(again);
  absl::StatusOr<Filter> redecoded = Filter::Deserialize(copy2.view());
  if (!redecoded.ok()) Broken(name, "re-serialization does not decode");
  for (size_t i = 0; i < std::size(kProbes); ++i) {
    if (redecoded->MayContain(kProbes[i]) != answers[i]) Broken(name, "answers changed on reload");
  }
}

void CheckFilterFile(std::string_view bytes) {
  const ExactCopy copy(bytes);
  absl::StatusOr<blockbloom::LoadedFilter> loaded = blockbloom::DecodeFilterFile(copy.view());
  if (!loaded.ok()) return;
  bool answers[std::size(kProbes)];
  for (size_t i = 0; i < std::size(kProbes); ++i) answers[i] = loaded->MayContain(kProbes[i]);
  (void)loaded->PredictedFpr();
  const blockbloom::FilterFileInfo& info = loaded->info();
  const std::string again =
      blockbloom::EncodeFilterFile(loaded->filter(), info.num_keys, info.target_fpr);
  if (again != bytes) Broken("DecodeFilterFile", "re-encoding differs from the decoded file");
  const ExactCopy copy2(again);
  absl::StatusOr<blockbloom::LoadedFilter> reloaded = blockbloom::DecodeFilterFile(copy2.view());
  if (!reloaded.ok()) Broken("DecodeFilterFile", "re-encoding does not decode");
  for (size_t i = 0; i < std::size(kProbes); ++i) {
    if (reloaded->MayContain(kProbes[i]) != answers[i])
      Broken("DecodeFilterFile", "answers changed");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((mode & 1) != 0) RepairFraming(&bytes);

  CheckDecoder<blockbloom::StandardBloomFilter>(bytes, "StandardBloomFilter::Deserialize");
  CheckDecoder<blockbloom::PartitionedBloomFilter>(bytes, "PartitionedBloomFilter::Deserialize");
  CheckDecoder<blockbloom::ScalableBloomFilter>(bytes, "ScalableBloomFilter::Deserialize");
  CheckDecoder<blockbloom::BlockedBloomFilter>(bytes, "BlockedBloomFilter::Deserialize");
  CheckFilterFile(bytes);
  return 0;
}
