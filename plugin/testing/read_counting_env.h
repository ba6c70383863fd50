// A leveldb::Env that counts data-block reads: measure what a filter saves.
// For this project's tests, benchmarks and demo; not installed.
//
//   blockbloom::ReadCountingEnv env;          // wraps Env::Default()
//   options.env = &env;                       // outlive the DB, like any Env
//   ... Gets ...
//   env.reads();                              // RandomAccessFile::Read calls
//
// Thread-safety: safe for LevelDB's concurrent use; the counter is atomic.
#ifndef BLOCKBLOOM_TESTING_READ_COUNTING_ENV_H_
#define BLOCKBLOOM_TESTING_READ_COUNTING_ENV_H_

#include <atomic>
#include <memory>
#include <string>

#include "leveldb/env.h"

namespace blockbloom {

// Wraps a real Env (the default, on-disk one unless told otherwise) and
// counts RandomAccessFile::Read calls: once a table is open, LevelDB reads
// only data blocks through them, so the count is the data-block reads.
class ReadCountingEnv : public leveldb::EnvWrapper {
 public:
  explicit ReadCountingEnv(leveldb::Env* base = leveldb::Env::Default())
      : leveldb::EnvWrapper(base) {}

  leveldb::Status NewRandomAccessFile(const std::string& name,
                                      leveldb::RandomAccessFile** result) override {
    leveldb::RandomAccessFile* file = nullptr;
    leveldb::Status s = target()->NewRandomAccessFile(name, &file);
    *result = s.ok() ? new CountingFile(file, &reads_) : nullptr;
    return s;
  }

  uint64_t reads() const { return reads_.load(std::memory_order_relaxed); }
  void ResetReads() { reads_.store(0, std::memory_order_relaxed); }

 private:
  class CountingFile : public leveldb::RandomAccessFile {
   public:
    CountingFile(leveldb::RandomAccessFile* file, std::atomic<uint64_t>* reads)
        : file_(file), reads_(reads) {}
    leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                         char* scratch) const override {
      reads_->fetch_add(1, std::memory_order_relaxed);
      return file_->Read(offset, n, result, scratch);
    }

   private:
    std::unique_ptr<leveldb::RandomAccessFile> file_;
    std::atomic<uint64_t>* reads_;
  };

  std::atomic<uint64_t> reads_{0};
};

}  // namespace blockbloom

#endif  // BLOCKBLOOM_TESTING_READ_COUNTING_ENV_H_
