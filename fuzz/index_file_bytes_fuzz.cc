// Arbitrary bytes to FilteredDB's persisted-index loader, past its checksum:
// filtered_db::ParseIndexFile (the BLOCKBLOOM-INDEX framing and directory
// listing) and KeyIndex::Deserialize (the front filter and the counting or
// d-left filter behind it; docs/FORMAT.md, "FilteredDB index file"). Each
// parser gets its own copy of its bytes at the very end of an exact-size heap
// allocation, so ASan reports any read past them.
//
// Promises: no crash, no sanitizer report, no allocation beyond what the
// bytes present justify (libFuzzer's -rss_limit_mb / -malloc_limit_mb), and
// bounded work per byte. A file that parses re-encodes to the same bytes. An
// index that loads answers queries (MayContain is FrontMayContain AND
// CountingMayContain), re-serializes to the same payload, and reloads with the
// same answers on a fixed set of probe hashes. It then takes erases of keys
// it may not hold (any Status), inserts and erases as FilteredDB's writers
// would: every key whose insert was accepted and not erased is found
// (whatever state the file started it in), each such erase is accepted, and
// the modified index round-trips too.
//
// Input: one mode byte, then the bytes. Mode & 3:
//   0  the bytes are a whole index file, as is;
//   1  ... with the trailing XXH3-64 checksum repaired;
//   2  ... with the payload length (after the listing, walked as the parser
//      walks it) and then the checksum repaired;
//   3  the bytes are a bare payload, wrapped in a valid file (empty listing
//      if mode bit 2 is clear, a fixed two-entry listing if set).
// Seeds (fuzz/corpus/index_file_bytes/, written by make_index_seeds.cc):
// files of real FilteredDBs behind mode 0, their payloads behind mode 3.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "blockbloom/hash.h"
#include "common/coding.h"
#include "filtered_db/index_file.h"
#include "filtered_db/key_index.h"
#include "fuzz_input.h"

using blockbloom::KeyIndex;
using blockbloom::filtered_db::DirEntry;
using blockbloom::fuzz::ExactCopy;

namespace {

// Probe hashes: real keys' and the edges of the range reductions (block and
// bucket choice use the high bits, the fingerprints the top ones).
std::vector<uint64_t> MakeProbes() {
  std::vector<uint64_t> h = {0,
                             1,
                             ~uint64_t{0},
                             uint64_t{1} << 63,
                             (uint64_t{1} << 63) - 1,
                             0x00000000FFFFFFFFull,
                             0xFFFFFFFF00000000ull,
                             0x5555555555555555ull,
                             0xAAAAAAAAAAAAAAAAull};
  for (const char* key : {"", "a", "key", "key0", "key1", "https://example.com/", "000017"}) {
    h.push_back(blockbloom::HashKey(key));
  }
  uint64_t x = 42;  // SplitMix64
  for (int i = 0; i < 16; ++i) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    h.push_back(z ^ (z >> 31));
  }
  return h;
}
const std::vector<uint64_t>& Probes() {
  static const std::vector<uint64_t>* probes = new std::vector<uint64_t>(MakeProbes());
  return *probes;
}

[[noreturn]] void Broken(const char* what) { blockbloom::fuzz::Fail(what, ""); }

constexpr size_t kMinFileSize = 40;  // magic, version, flags, count, length, checksum

void RepairChecksum(std::string* file) {
  if (file->size() < kMinFileSize) return;
  const size_t body = file->size() - 8;
  blockbloom::internal::EncodeFixed64(&(*file)[body], blockbloom::HashBytes(file->data(), body));
}

uint64_t U64At(const std::string& s, size_t pos) {
  return blockbloom::internal::DecodeFixed64(s.data() + pos);
}

// Sets the payload length to what follows it (up to the checksum), walking
// the listing as ParseIndexFile does; leaves the file alone where the listing
// runs past the end.
void RepairPayloadLength(std::string* file) {
  if (file->size() < kMinFileSize) return;
  const size_t end = file->size() - 8;  // the checksum's offset
  const uint64_t count = U64At(*file, 16);
  size_t pos = 24;
  for (uint64_t i = 0; i < count; ++i) {
    if (end - pos < 4) return;
    const uint32_t name_len = blockbloom::internal::DecodeFixed32(file->data() + pos);
    pos += 4;
    if (end - pos < uint64_t{name_len} + 40) return;
    pos += name_len + 40;
  }
  if (end - pos < 8) return;
  blockbloom::internal::EncodeFixed64(&(*file)[pos], end - pos - 8);
}

std::string WrapPayload(std::string_view payload, bool with_listing) {
  std::vector<DirEntry> listing;
  if (with_listing) {
    listing.push_back({"000005.ldb", 1234, 2049, 77, 1700000000123456789, 0});
    listing.push_back({"CURRENT", 16, 2049, 78, -1, 0x0123456789ABCDEFull});
  }
  return blockbloom::filtered_db::EncodeIndexFile(listing, payload);
}

std::unique_ptr<KeyIndex> Load(std::string_view payload) {
  const ExactCopy copy(payload);
  auto index = KeyIndex::Deserialize(copy.view());
  if (!index.ok()) return nullptr;
  return std::move(index).value();
}

std::vector<bool> Answers(const KeyIndex& index) {
  std::vector<bool> out;
  for (uint64_t h : Probes()) {
    index.Prefetch(h);
    const bool front = index.FrontMayContain(h);
    const bool counting = index.CountingMayContain(h);
    const bool both = index.MayContain(h);
    if (both != (front && counting)) Broken("MayContain is not Front AND Counting");
    out.push_back(both);
  }
  (void)index.estimated_fpr();
  (void)index.memory_bytes();
  return out;
}

// Serialize -> Deserialize: byte-exact against `payload` when given, and the
// same kind, counts and answers.
void CheckRoundTrip(const KeyIndex& index, const std::string_view* payload) {
  std::string again;
  index.Serialize(&again);
  if (payload != nullptr && again != *payload) Broken("re-serialization differs from the payload");
  std::unique_ptr<KeyIndex> reloaded = Load(again);
  if (reloaded == nullptr) Broken("re-serialization does not load");
  if (reloaded->kind() != index.kind() || reloaded->keys() != index.keys() ||
      reloaded->capacity() != index.capacity() ||
      reloaded->inserted_since_build() != index.inserted_since_build() ||
      reloaded->memory_bytes() != index.memory_bytes()) {
    Broken("reloaded index reports different counts");
  }
  if (Answers(*reloaded) != Answers(index)) Broken("answers changed on reload");
}

void CheckIndex(std::string_view payload) {
  std::unique_ptr<KeyIndex> index = Load(payload);
  if (index == nullptr) return;
  (void)Answers(*index);
  CheckRoundTrip(*index, &payload);

  // FilteredDB's writers on a loaded index. A file whose index lacks a live
  // key makes FilteredDB erase a key never inserted (outside Erase's
  // precondition): any Status, no crash (counter underflow, absent cell).
  const std::vector<uint64_t>& probes = Probes();
  for (size_t i = 0; i < probes.size(); i += 3) (void)index->Erase(probes[i]);
  // Then insert every probe and erase every other accepted one (each was
  // inserted and not erased: Erase's precondition).
  std::vector<size_t> held;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (index->Insert(probes[i]).ok()) held.push_back(i);
    if (!index->FrontMayContain(probes[i])) Broken("front filter lost an inserted key");
  }
  for (size_t i : held) {
    if (!index->MayContain(probes[i])) Broken("false negative after insert");
  }
  std::vector<size_t> still;
  for (size_t n = 0; n < held.size(); ++n) {
    if (n % 2 == 0) {
      if (!index->Erase(probes[held[n]]).ok()) Broken("erase of a held key refused");
    } else {
      still.push_back(held[n]);
    }
  }
  for (size_t i : still) {
    if (!index->MayContain(probes[i])) Broken("false negative after erasing other keys");
  }
  CheckRoundTrip(*index, nullptr);
}

void CheckFile(std::string_view bytes) {
  std::string payload;  // Load makes its own exact-size copy
  {
    const ExactCopy copy(bytes);
    const auto parsed = blockbloom::filtered_db::ParseIndexFile(copy.view());
    if (!parsed.ok()) return;
    const std::string again =
        blockbloom::filtered_db::EncodeIndexFile(parsed->listing, parsed->payload);
    if (again != bytes) Broken("re-encoding differs from the parsed file");
    payload = std::string(parsed->payload);
  }
  const ExactCopy copy2(WrapPayload(payload, false));
  auto reparsed = blockbloom::filtered_db::ParseIndexFile(copy2.view());
  if (!reparsed.ok() || reparsed->payload != payload || !reparsed->listing.empty()) {
    Broken("a payload re-wrapped does not parse back");
  }
  CheckIndex(payload);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (mode & 3) {
    case 0:
      break;
    case 1:
      RepairChecksum(&bytes);
      break;
    case 2:
      RepairPayloadLength(&bytes);
      RepairChecksum(&bytes);
      break;
    case 3:
      bytes = WrapPayload(bytes, (mode & 4) != 0);
      break;
  }
  CheckFile(bytes);
  return 0;
}
