// A child process writes through FilteredDB and is killed with SIGKILL in
// the middle of its writes; the parent reopens the database and checks that
// no live key is missing: every key LevelDB holds is found through the
// rebuilt index, the index counts exactly those keys, and every write the
// child saw acknowledged is there.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "blockbloom/filtered_db.h"
#include "leveldb/write_batch.h"
#include "test_keys.h"
#include "test_paths.h"

namespace blockbloom {
namespace {

using testing_keys::Key;

// Step i: Put Key(i); every 3rd step also deletes Key(i - 30) in one batch.
void ChildWriteForever(const std::string& path, std::atomic<uint64_t>* acked) {
  leveldb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 32 << 10;
  FilteredDBOptions index_options;
  index_options.expected_keys = 100;
  std::unique_ptr<FilteredDB> db;
  if (!FilteredDB::Open(index_options, options, path, &db).ok()) _exit(2);
  for (uint64_t i = 0;; ++i) {
    leveldb::WriteBatch batch;
    batch.Put(Key(i), std::string(100, 'x'));
    if (i % 3 == 0 && i >= 30) batch.Delete(Key(i - 30));
    if (!db->Write(leveldb::WriteOptions(), &batch).ok()) _exit(3);
    acked->store(i + 1, std::memory_order_release);
  }
}

TEST(FilteredDBCrashTest, KilledWriterLosesNoLiveKey) {
  const std::string path = TestPath("db");
  DestroyFilteredDB(path, leveldb::Options());
  void* shared = mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* acked = new (shared) std::atomic<uint64_t>(0);

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) ChildWriteForever(path, acked);  // never returns

  // Kill it mid-stream, well past several memtable flushes and index growths.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (acked->load(std::memory_order_acquire) < 20000 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited early with " << WEXITSTATUS(status);
  const uint64_t n = acked->load(std::memory_order_acquire);
  ASSERT_GE(n, 20000u);
  munmap(shared, sizeof(std::atomic<uint64_t>));

  leveldb::Options options;
  FilteredDBOptions index_options;
  index_options.expected_keys = 100;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(index_options, options, path, &db).ok());
  // Every key LevelDB recovered is found through the index.
  uint64_t live = 0;
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator(leveldb::ReadOptions()));
  std::string value;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++live) {
    ASSERT_TRUE(db->Get(leveldb::ReadOptions(), it->key(), &value).ok())
        << "index rules out live key " << it->key().ToString();
  }
  ASSERT_TRUE(it->status().ok());
  it.reset();
  EXPECT_EQ(db->index_stats().keys, live);
  // Acknowledged writes survived (the process died, the OS did not).
  // Step n was in flight when the child died: LevelDB may or may not have
  // applied it, so the key it deletes, Key(n - 30), may be either way.
  for (uint64_t i = 0; i < n; ++i) {
    const bool deleted = i + 30 < n && (i + 30) % 3 == 0;
    const leveldb::Status s = db->Get(leveldb::ReadOptions(), Key(i), &value);
    if (i + 30 == n && n % 3 == 0) {
      ASSERT_TRUE(s.ok() || s.IsNotFound()) << s.ToString();
    } else if (deleted) {
      ASSERT_TRUE(s.IsNotFound()) << i;
    } else {
      ASSERT_TRUE(s.ok()) << "acknowledged key " << i << " missing";
    }
  }
}

}  // namespace
}  // namespace blockbloom
