// The set-of-live-keys index behind FilteredDB: one interface over the
// counting and the d-left counting Bloom filter, keyed by 64-bit hashes
// (blockbloom::HashKey), behind an insert-only blocked Bloom "front" filter
// that answers most absent keys from one cache line (key_index.cc).
// Thread-safety: queries are lock-free and safe with one concurrent writer;
// writers (Insert, Erase, Serialize) must not run concurrently.
#ifndef BLOCKBLOOM_FILTERED_DB_KEY_INDEX_H_
#define BLOCKBLOOM_FILTERED_DB_KEY_INDEX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "blockbloom/filtered_db.h"

namespace blockbloom {

class KeyIndex {
 public:
  // An empty index that holds `capacity` keys at about `target_fpr`.
  static absl::StatusOr<std::unique_ptr<KeyIndex>> Create(IndexKind kind, uint64_t capacity,
                                                          double target_fpr);
  // The index Serialize wrote (the "index payload" of docs/FORMAT.md);
  // InvalidArgument on any inconsistency. The caller has checked the checksum.
  static absl::StatusOr<std::unique_ptr<KeyIndex>> Deserialize(std::string_view payload);
  virtual ~KeyIndex() = default;

  // ResourceExhausted when the counting filter cannot hold the key (the front
  // filter has it anyway). REQUIRES: no concurrent Insert or Erase (FilteredDB
  // holds its writer mutex, or fills an index no other thread sees yet);
  // MayContain may run concurrently.
  virtual absl::Status Insert(uint64_t hash) = 0;
  // REQUIRES: hash was inserted and not erased since (see the filters' Erase).
  virtual absl::Status Erase(uint64_t hash) = 0;
  virtual bool MayContain(uint64_t hash) const = 0;

  virtual IndexKind kind() const = 0;
  virtual uint64_t keys() const = 0;
  // Keys it holds at its target FPR / design load; growth starts beyond it.
  virtual uint64_t capacity() const = 0;
  virtual uint64_t memory_bytes() const = 0;
  virtual double estimated_fpr() const = 0;
  // Keys inserted since it was built, deleted ones included (the front
  // filter's load; growth rebuilds it when churn has filled it).
  virtual uint64_t inserted_since_build() const { return keys(); }
  // Appends the payload Deserialize reads. REQUIRES: no concurrent Insert/Erase.
  virtual void Serialize(std::string* out) const = 0;
};

}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTERED_DB_KEY_INDEX_H_
