// Decodes a fuzzer's bytes into operations: a small cursor that never reads
// past the end (missing bytes read as 0), so every input is a valid program.
#ifndef BLOCKBLOOM_FUZZ_FUZZ_INPUT_H_
#define BLOCKBLOOM_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace blockbloom {
namespace fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  // Bytes not read yet; they start at data + consumed().
  size_t remaining() const { return pos_ < size_ ? size_ - pos_ : 0; }
  size_t consumed() const { return pos_ < size_ ? pos_ : size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // Little-endian: the first byte read is the low one. Each read is its own
  // statement: the operands of `|` are unsequenced, so `Byte() | (Byte() << 8)`
  // may read in either order and decode a corpus differently per compiler.
  uint16_t U16() {
    const uint16_t lo = Byte();
    const uint16_t hi = Byte();
    return static_cast<uint16_t>(lo | (hi << 8));
  }
  uint32_t U32() {
    const uint32_t lo = U16();
    const uint32_t hi = U16();
    return lo | (hi << 16);
  }
  // A key: a length byte (0..63) and that many bytes. Short keys collide on
  // purpose, so duplicates and re-inserts are exercised.
  std::string Key() {
    const size_t len = Byte() % 64;
    std::string key;
    for (size_t i = 0; i < len && !empty(); ++i) key.push_back(static_cast<char>(Byte()));
    return key;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// A false negative (or any broken promise) is a crash the fuzzer records.
[[noreturn]] inline void Fail(const char* what, const std::string& key) {
  std::fprintf(stderr, "blockbloom fuzz failure: %s (key of %zu bytes)\n", what, key.size());
  std::abort();
}

// The bytes at the end of an allocation of exactly their size, so ASan
// reports any read past them.
class ExactCopy {
 public:
  explicit ExactCopy(std::string_view bytes)
      : buf_(std::make_unique<char[]>(bytes.size())), size_(bytes.size()) {
    if (size_ != 0) std::memcpy(buf_.get(), bytes.data(), size_);
  }
  std::string_view view() const { return {buf_.get(), size_}; }

 private:
  std::unique_ptr<char[]> buf_;
  size_t size_;
};

}  // namespace fuzz
}  // namespace blockbloom

#endif  // BLOCKBLOOM_FUZZ_FUZZ_INPUT_H_
