// A child process writes through FilteredDB and is killed with SIGKILL in
// the middle of its writes (and of its index saves); the parent reopens the
// database and checks that no live key is missing: every key LevelDB holds is
// found through the index, the index counts exactly those keys, and every
// write the child saw acknowledged is there. Then the persisted index's
// validity rule: plain-LevelDB writes between opens, stale, damaged, copied
// and restored index files are never trusted (docs/FILTERED_DB.md).
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <vector>
#include <memory>
#include <string>
#include <thread>

#include "blockbloom/filtered_db.h"
#include "filtered_db/testing_hooks.h"
#include "leveldb/env.h"
#include "leveldb/helpers/memenv.h"
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
  EXPECT_EQ(db->index_stats().opened_from, IndexSource::kScan);  // it crashed
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
  db.reset();
  DestroyFilteredDB(path, leveldb::Options());
}

}  // namespace
}  // namespace blockbloom

// ---- The persisted index: never trusted unless provably current ------------

namespace blockbloom {
namespace {

namespace fs = std::filesystem;

// Keys of round r: Key(r * 1000000 + i).
std::string RoundKey(uint64_t round, uint64_t i) { return Key(round * 1000000 + i); }

struct Shared {
  std::atomic<uint64_t> acked{0};
  std::atomic<int> phase{0};  // 1: inside SaveIndex, 2: inside close (save), 0: else
  // Phases left (counted before phase goes back to 0): a kill that finds
  // phase == mode and this count unchanged since the phase was seen landed
  // inside that phase.
  std::atomic<uint64_t> phases_left{0};
};

// Step i of a round: Put RoundKey(i); every 3rd step also deletes
// RoundKey(i - 30), in one batch. Every 500 steps SaveIndex(); every 1500
// steps a clean close (which saves) and reopen.
[[noreturn]] void ChildRound(const std::string& path, uint64_t round, Shared* shared) {
  leveldb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 32 << 10;
  FilteredDBOptions fdb_options;
  fdb_options.expected_keys = 2048;
  std::unique_ptr<FilteredDB> db;
  if (!FilteredDB::Open(fdb_options, options, path, &db).ok()) _exit(2);
  for (uint64_t i = 0;; ++i) {
    leveldb::WriteBatch batch;
    batch.Put(RoundKey(round, i), std::string(100, 'x'));
    if (i % 3 == 0 && i >= 30) batch.Delete(RoundKey(round, i - 30));
    if (!db->Write(leveldb::WriteOptions(), &batch).ok()) _exit(3);
    shared->acked.store(i + 1, std::memory_order_release);
    if (i % 500 == 499) {
      shared->phase.store(1);
      const leveldb::Status s = db->SaveIndex();
      // Refused only while a growth rebuild has the index in pass-through.
      if (!s.ok() && !s.IsInvalidArgument()) {
        std::fprintf(stderr, "SaveIndex: %s\n", s.ToString().c_str());
        _exit(4);
      }
      shared->phases_left.fetch_add(1);
      shared->phase.store(0);
    }
    if (i % 1500 == 1499) {
      shared->phase.store(2);
      db.reset();
      shared->phases_left.fetch_add(1);
      shared->phase.store(0);
      if (!FilteredDB::Open(fdb_options, options, path, &db).ok()) _exit(5);
    }
  }
}

// What must be true after rounds [0, rounds) with acked[r] acknowledged steps.
void CheckAgainstOracle(FilteredDB& db, const std::vector<uint64_t>& acked) {
  uint64_t live = 0;
  std::string value;
  std::unique_ptr<leveldb::Iterator> it(db.NewIterator(leveldb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++live) {
    ASSERT_TRUE(db.Get(leveldb::ReadOptions(), it->key(), &value).ok())
        << "index rules out live key " << it->key().ToString();
  }
  ASSERT_TRUE(it->status().ok());
  it.reset();
  EXPECT_EQ(db.index_stats().keys, live);
  for (uint64_t r = 0; r < acked.size(); ++r) {
    const uint64_t n = acked[r];
    // Step n was in flight when the child died: applied or not.
    for (uint64_t i = 0; i <= n + 1; ++i) {
      const bool deleted = i + 30 < n && (i + 30) % 3 == 0;
      const leveldb::Status s = db.Get(leveldb::ReadOptions(), RoundKey(r, i), &value);
      if (i >= n || (i + 30 == n && n % 3 == 0)) {
        ASSERT_TRUE(s.ok() || s.IsNotFound()) << s.ToString();
      } else if (deleted) {
        ASSERT_TRUE(s.IsNotFound()) << "round " << r << " key " << i;
      } else {
        ASSERT_TRUE(s.ok()) << "round " << r << " acknowledged key " << i << " missing";
      }
    }
  }
}

// Rounds of: a child writes (saving the index now and then, closing and
// reopening) and is SIGKILLed at a random moment, in the middle of a
// SaveIndex, or in the middle of a close's save; the parent reopens (from the
// index file when it is provably valid, else by scan), checks every answer
// against the oracle, and closes cleanly, saving the index the next child
// starts from.
// The writer child is a fresh process (exec of this test binary): a forked
// copy of a process that already used LevelDB would inherit Env::Default()
// believing its background thread exists, and never compact.
constexpr char kChildPathEnv[] = "BLOCKBLOOM_FDB_CHILD_PATH";
constexpr char kChildShmEnv[] = "BLOCKBLOOM_FDB_CHILD_SHM";
constexpr char kChildRoundEnv[] = "BLOCKBLOOM_FDB_CHILD_ROUND";

Shared* MapShared(const std::string& file, bool create) {
  const int fd = ::open(file.c_str(), O_RDWR | (create ? O_CREAT | O_TRUNC : 0), 0600);
  if (fd < 0) return nullptr;
  if (create && ::ftruncate(fd, sizeof(Shared)) != 0) {
    ::close(fd);
    return nullptr;
  }
  void* mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (mem == MAP_FAILED) return nullptr;
  return create ? new (mem) Shared() : static_cast<Shared*>(mem);
}

TEST(FilteredDBPersistChild, WriterRound) {
  const char* path = std::getenv(kChildPathEnv);
  if (path == nullptr) GTEST_SKIP() << "runs only as the SIGKILL test's child process";
  Shared* shared = MapShared(std::getenv(kChildShmEnv), false);
  if (shared == nullptr) _exit(6);
  ChildRound(path, std::strtoull(std::getenv(kChildRoundEnv), nullptr, 10), shared);
}

// Rounds of: a child writes (saving the index now and then, closing and
// reopening) and is SIGKILLed at a random moment, in the middle of a
// SaveIndex, or in the middle of a close's save; the parent reopens (from the
// index file when it is provably valid, else by scan), checks every answer
// against the oracle, and closes cleanly, saving the index the next child
// starts from.
TEST(FilteredDBPersistTest, SigkillAtRandomPointsAndDuringSavesNeverLosesAKey) {
  const std::string path = TestPath("db");
  const std::string shm = TestPath("shm");
  DestroyFilteredDB(path, leveldb::Options());
  Shared* shared = MapShared(shm, true);
  ASSERT_NE(shared, nullptr);
  testing_keys::SplitMix64 rng(42);
  std::vector<uint64_t> acked;
  int from_file = 0;
  int landed_inside[3] = {0, 0, 0};  // per mode: kills that hit the phase asked for
  constexpr int kRounds = 9;
  for (int round = 0; round < kRounds; ++round) {
    shared->acked.store(0);
    shared->phase.store(0);
    const std::string round_text = std::to_string(round);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      setenv(kChildPathEnv, path.c_str(), 1);
      setenv(kChildShmEnv, shm.c_str(), 1);
      setenv(kChildRoundEnv, round_text.c_str(), 1);
      execl("/proc/self/exe", "/proc/self/exe", "--gtest_filter=FilteredDBPersistChild.*",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    const int mode = round % 3;  // 0: random time, 1: mid-SaveIndex, 2: mid-close
    const uint64_t min_acked = 300 + rng.Next() % 3000;
    while (shared->acked.load() < min_acked && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    uint64_t left_when_seen = 0;
    if (mode != 0) {
      // Spin (a sleep would miss most saves): react as soon as the phase starts.
      while (shared->phase.load() != mode && std::chrono::steady_clock::now() < deadline) {
      }
      left_when_seen = shared->phases_left.load();
      ASSERT_EQ(shared->phase.load(), mode) << "round " << round << ": the phase never came";
      std::this_thread::sleep_for(std::chrono::microseconds(rng.Next() % 300));
    }
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited early with " << WEXITSTATUS(status);
    // The child is dead: its last phase is final. Where did the kill land?
    if (mode != 0 && shared->phase.load() == mode && shared->phases_left.load() == left_when_seen) {
      ++landed_inside[mode];
    }
    acked.push_back(shared->acked.load());
    ASSERT_GE(acked.back(), min_acked);

    leveldb::Options options;
    FilteredDBOptions fdb_options;
    fdb_options.expected_keys = 2048;
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(fdb_options, options, path, &db).ok());
    from_file += db->index_stats().opened_from == IndexSource::kFile;
    ASSERT_NO_FATAL_FAILURE(CheckAgainstOracle(*db, acked));
    db.reset();  // clean close: saves; the next child opens from the file
  }
  munmap(shared, sizeof(Shared));
  ::unlink(shm.c_str());
  // A kill right after a save with no write since may legitimately reuse it;
  // most rounds die with writes after the last save and must scan.
  EXPECT_LT(from_file, kRounds);
  // The rounds meant to kill inside a save did, at least once per kind: else
  // the test would pass without testing a torn index file.
  std::printf("kills inside SaveIndex: %d of %d, inside a close's save: %d of %d\n",
              landed_inside[1], kRounds / 3, landed_inside[2], kRounds / 3);
  EXPECT_GE(landed_inside[1], 1) << "no kill landed inside SaveIndex";
  EXPECT_GE(landed_inside[2], 1) << "no kill landed inside a close's save";
  DestroyFilteredDB(path, leveldb::Options());
}

leveldb::Options CreateOptions() {
  leveldb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;
  return options;
}

// Writes keys [begin, end) through `db`.
void PutRange(leveldb::DB* db, uint64_t begin, uint64_t end) {
  for (uint64_t i = begin; i < end; ++i) {
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), "v" + std::to_string(i)).ok());
  }
}

// A fresh database at `path` holding keys [0, n), written through FilteredDB
// and closed (the close saves its index file).
void CreateClosedDb(const std::string& path, uint64_t n) {
  DestroyFilteredDB(path, leveldb::Options());
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), CreateOptions(), path, &db).ok());
  ASSERT_NO_FATAL_FAILURE(PutRange(db.get(), 0, n));
}

// Opens `path` through FilteredDB and checks keys [0, live_end) minus the
// `deleted` ones are found, and [live_end, live_end + 2000) are not; returns
// how the index was obtained.
IndexSource OpenAndCheck(const std::string& path, uint64_t live_end,
                         const std::set<uint64_t>& deleted) {
  std::unique_ptr<FilteredDB> db;
  EXPECT_TRUE(FilteredDB::Open(FilteredDBOptions(), CreateOptions(), path, &db).ok());
  if (db == nullptr) return IndexSource::kScan;
  std::string value;
  for (uint64_t i = 0; i < live_end + 2000; ++i) {
    const leveldb::Status s = db->Get(leveldb::ReadOptions(), Key(i), &value);
    if (i < live_end && deleted.count(i) == 0) {
      EXPECT_TRUE(s.ok()) << "live key " << i << " missed";
    } else {
      EXPECT_TRUE(s.IsNotFound()) << i;
    }
  }
  EXPECT_EQ(db->index_stats().keys, live_end - deleted.size());
  return db->index_stats().opened_from;
}

TEST(FilteredDBPersistTest, CleanCloseReopensFromTheFileAndItIsUsedOnce) {
  const std::string path = TestPath("db");
  ASSERT_NO_FATAL_FAILURE(CreateClosedDb(path, 3000));
  ASSERT_TRUE(fs::exists(path + "/BLOCKBLOOM-INDEX"));
  EXPECT_EQ(OpenAndCheck(path, 3000, {}), IndexSource::kFile);
  // Saved again at that close, loaded again.
  EXPECT_EQ(OpenAndCheck(path, 3000, {}), IndexSource::kFile);
  // While open, the file is gone: a crash now could not reuse it.
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), CreateOptions(), path, &db).ok());
    EXPECT_FALSE(fs::exists(path + "/BLOCKBLOOM-INDEX"));
    std::string stats;
    ASSERT_TRUE(db->GetProperty("blockbloom.stats", &stats));
    EXPECT_NE(stats.find("opened-from: file\n"), std::string::npos) << stats;
  }
  DestroyFilteredDB(path, leveldb::Options());
  EXPECT_FALSE(fs::exists(path));
}

// DestroyFilteredDB with another Env (here LevelDB's in-memory one) destroys
// that Env's database and touches nothing on the real file system: a real
// database at the same path keeps its index file. (It removed it.)
TEST(FilteredDBPersistTest, DestroyWithAnotherEnvLeavesTheRealFileSystemAlone) {
  const std::string path = TestPath("db");
  ASSERT_NO_FATAL_FAILURE(CreateClosedDb(path, 100));
  ASSERT_TRUE(fs::exists(path + "/BLOCKBLOOM-INDEX"));
  std::unique_ptr<leveldb::Env> mem(leveldb::NewMemEnv(leveldb::Env::Default()));
  leveldb::Options mem_options = CreateOptions();
  mem_options.env = mem.get();
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), mem_options, path, &db).ok());
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), "k", "v").ok());
  }
  EXPECT_TRUE(DestroyFilteredDB(path, mem_options).ok());
  EXPECT_TRUE(fs::exists(path + "/BLOCKBLOOM-INDEX"));
  EXPECT_EQ(OpenAndCheck(path, 100, {}), IndexSource::kFile);
  // The in-memory database is gone.
  std::unique_ptr<FilteredDB> db;
  leveldb::Options must_exist = mem_options;
  must_exist.create_if_missing = false;
  EXPECT_FALSE(FilteredDB::Open(FilteredDBOptions(), must_exist, path, &db).ok());
  DestroyFilteredDB(path, leveldb::Options());
}

TEST(FilteredDBPersistTest, WritesByPlainLevelDBBetweenOpensForceAScan) {
  const std::string path = TestPath("db");
  ASSERT_NO_FATAL_FAILURE(CreateClosedDb(path, 2000));
  const std::string saved_index = path + "-saved-index";
  fs::copy_file(path + "/BLOCKBLOOM-INDEX", saved_index);
  std::set<uint64_t> deleted;
  {
    leveldb::DB* plain = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(CreateOptions(), path, &plain).ok());
    ASSERT_NO_FATAL_FAILURE(PutRange(plain, 2000, 2500));  // new keys the index never saw
    for (uint64_t i = 0; i < 2000; i += 7) {
      ASSERT_TRUE(plain->Delete(leveldb::WriteOptions(), Key(i)).ok());
      deleted.insert(i);
    }
    delete plain;
  }
  EXPECT_EQ(OpenAndCheck(path, 2500, deleted), IndexSource::kScan);

  // A stale index put back after later writes: never trusted.
  fs::copy_file(saved_index, path + "/BLOCKBLOOM-INDEX", fs::copy_options::overwrite_existing);
  {
    leveldb::DB* plain = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(CreateOptions(), path, &plain).ok());
    delete plain;  // even an open without writes rewrites CURRENT and MANIFEST
  }
  fs::copy_file(saved_index, path + "/BLOCKBLOOM-INDEX", fs::copy_options::overwrite_existing);
  EXPECT_EQ(OpenAndCheck(path, 2500, deleted), IndexSource::kScan);
  fs::remove(saved_index);
  DestroyFilteredDB(path, leveldb::Options());
}

TEST(FilteredDBPersistTest, DamagedIndexFilesAreRebuiltFromAScan) {
  const std::string path = TestPath("db");
  ASSERT_NO_FATAL_FAILURE(CreateClosedDb(path, 1000));
  const std::string index_path = path + "/BLOCKBLOOM-INDEX";
  std::string good;
  {
    std::ifstream in(index_path, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(good.size(), 100u);
  // Positions: magic, version, listing, payload start/middle, checksum; then
  // truncations and an empty file.
  std::vector<std::string> damaged;
  for (size_t pos :
       {size_t{0}, size_t{9}, size_t{30}, good.size() / 2, good.size() - 20, good.size() - 1}) {
    std::string bad = good;
    bad[pos] ^= 0x40;
    damaged.push_back(bad);
  }
  damaged.push_back(good.substr(0, good.size() - 1));
  damaged.push_back(good.substr(0, good.size() / 3));
  damaged.push_back("");
  damaged.push_back(good + "x");
  for (size_t d = 0; d < damaged.size(); ++d) {
    SCOPED_TRACE("damage " + std::to_string(d));
    {
      // Reopen and close so the listing matches again, then plant the damage.
      std::unique_ptr<FilteredDB> db;
      ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), CreateOptions(), path, &db).ok());
    }
    std::ofstream(index_path, std::ios::binary | std::ios::trunc) << damaged[d];
    EXPECT_EQ(OpenAndCheck(path, 1000, {}), IndexSource::kScan);
  }
  // The undamaged file of this exact state still loads: the checks above
  // failed for the damage, not for the state.
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), CreateOptions(), path, &db).ok());
  }
  EXPECT_EQ(OpenAndCheck(path, 1000, {}), IndexSource::kFile);
  DestroyFilteredDB(path, leveldb::Options());
}

TEST(FilteredDBPersistTest, CopiedOrRestoredDirectoriesForceAScan) {
  const std::string path = TestPath("db");
  const std::string copy = TestPath("copy");
  DestroyFilteredDB(path, leveldb::Options());
  fs::remove_all(copy);
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), CreateOptions(), path, &db).ok());
    ASSERT_NO_FATAL_FAILURE(PutRange(db.get(), 0, 1500));
  }
  // A backup, index file included.
  fs::copy(path, copy, fs::copy_options::recursive);
  EXPECT_EQ(OpenAndCheck(copy, 1500, {}), IndexSource::kScan);  // new inodes
  fs::remove_all(copy);
  fs::copy(path, copy, fs::copy_options::recursive);
  // More writes to the original, then the backup restored over it.
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), CreateOptions(), path, &db).ok());
    for (uint64_t i = 0; i < 1500; i += 2) {
      ASSERT_TRUE(db->Delete(leveldb::WriteOptions(), Key(i)).ok());
    }
  }
  fs::remove_all(path);
  fs::copy(copy, path, fs::copy_options::recursive);
  EXPECT_EQ(OpenAndCheck(path, 1500, {}), IndexSource::kScan);
  fs::remove_all(copy);
  DestroyFilteredDB(path, leveldb::Options());
}

// An opener that gets in after LevelDB's close and before the close-time save
// (the close-window testing hook), with reuse_logs = true, leaves CURRENT as
// it was and appends its write to the log. The close-time save must not
// record that directory with an index that lacks the write: the next Open
// must find the key. FilteredDB holds LevelDB's lock there, so such an opener
// is one the lock did not stop: another process after a failed open
// elsewhere in FilteredDB's process dropped the lock (LevelDB closes a
// descriptor of LOCK when it refuses an in-process open). Simulated in this
// process by naming the directory differently ("<db>/"): LevelDB's in-process
// table goes by the name, and a process's own POSIX locks never conflict.
void WriteThroughReusedLog(const std::string& path) {
  leveldb::Options options;
  options.reuse_logs = true;
  leveldb::DB* plain = nullptr;
  ASSERT_TRUE(leveldb::DB::Open(options, path + "/", &plain).ok());
  ASSERT_TRUE(plain->Put(leveldb::WriteOptions(), Key(100000), "intruder").ok());
  delete plain;
}

TEST(FilteredDBPersistTest, AWriteInTheCloseWindowIsNeverLostByTheSavedIndex) {
  const std::string path = TestPath("db");
  DestroyFilteredDB(path, leveldb::Options());
  leveldb::Options options = CreateOptions();
  options.reuse_logs = true;
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), options, path, &db).ok());
    ASSERT_NO_FATAL_FAILURE(PutRange(db.get(), 0, 100));
    filtered_db::SetCloseWindowHookForTesting(
        [](const std::string& name) { WriteThroughReusedLog(name); });
  }
  filtered_db::SetCloseWindowHookForTesting(nullptr);
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), options, path, &db).ok());
  std::string value;
  const leveldb::Status s = db->Get(leveldb::ReadOptions(), Key(100000), &value);
  EXPECT_TRUE(s.ok()) << "a live key missed: " << s.ToString() << ", index from "
                      << (db->index_stats().opened_from == IndexSource::kFile ? "file" : "scan");
  EXPECT_EQ(db->index_stats().keys, 101u);
  // Without an intruder the close-time save is still used.
  db.reset();
  ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), options, path, &db).ok());
  EXPECT_EQ(db->index_stats().opened_from, IndexSource::kFile);
  EXPECT_TRUE(db->Get(leveldb::ReadOptions(), Key(100000), &value).ok());
  db.reset();
  DestroyFilteredDB(path, leveldb::Options());
}

// What another process sees of <path>/LOCK: a process's own POSIX locks never
// conflict with it, so only another process can tell whether this one still
// holds the database. Asked from a forked child that only calls open and
// fcntl(F_GETLK) and _exits with the answer (no gtest, no LevelDB in it).
constexpr int kUnlocked = 0;
constexpr int kLocked = 1;
int LockSeenFromAnotherProcess(const std::string& path) {
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    const int fd = ::open((path + "/LOCK").c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) _exit(2);
    struct flock f = {};
    f.l_type = F_WRLCK;
    f.l_whence = SEEK_SET;
    if (::fcntl(fd, F_GETLK, &f) != 0) _exit(3);
    _exit(f.l_type == F_UNLCK ? kUnlocked : kLocked);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Another thread of this process opening the database with plain LevelDB in
// one of FilteredDB's windows (testing hooks).
leveldb::DB* g_window_db = nullptr;
leveldb::Status g_window_open;
void OpenPlainLevelDBInTheWindow(const std::string& name) {
  g_window_open = leveldb::DB::Open(CreateOptions(), name, &g_window_db);
}

// Whichever LevelDB of this process holds the database at the end must hold
// its lock: FilteredDB never closes a descriptor of <db>/LOCK (which drops
// every POSIX lock the process has on it) while another LevelDB of the
// process may hold it. And once that LevelDB closes, nobody holds it.
void ExpectLockedUntilPlainCloses(const std::string& path, std::unique_ptr<leveldb::DB> plain) {
  if (plain == nullptr) {
    leveldb::DB* raw = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(CreateOptions(), path, &raw).ok());
    plain.reset(raw);
  }
  EXPECT_EQ(LockSeenFromAnotherProcess(path), kLocked)
      << "a LevelDB of this process is open without its lock: another process could open the "
         "database too";
  plain.reset();
  EXPECT_EQ(LockSeenFromAnotherProcess(path), kUnlocked);
}

// The close window: after LevelDB's close, before the index is saved.
// FilteredDB still holds the database there, so an open by another thread of
// the process is refused, and the LevelDB opened afterwards keeps its lock.
// (It was accepted, and FilteredDB's re-lock and the close of its own
// descriptor then dropped that LevelDB's lock.)
TEST(FilteredDBPersistTest, AnInProcessOpenInTheCloseWindowNeverLosesItsLock) {
  const std::string path = TestPath("db");
  DestroyFilteredDB(path, leveldb::Options());
  g_window_db = nullptr;
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), CreateOptions(), path, &db).ok());
    ASSERT_NO_FATAL_FAILURE(PutRange(db.get(), 0, 100));
    filtered_db::SetCloseWindowHookForTesting(OpenPlainLevelDBInTheWindow);
  }
  filtered_db::SetCloseWindowHookForTesting(nullptr);
  std::unique_ptr<leveldb::DB> plain(g_window_db);
  EXPECT_FALSE(g_window_open.ok()) << "opened while FilteredDB still held the database";
  // The refused open changed nothing: the close-time save is used.
  if (plain == nullptr) EXPECT_EQ(OpenAndCheck(path, 100, {}), IndexSource::kFile);
  ExpectLockedUntilPlainCloses(path, std::move(plain));
  DestroyFilteredDB(path, leveldb::Options());
}

// The open window: FilteredDB holds the lock, has validated (and removed)
// the index file, and LevelDB's Open comes next. An open by another thread
// of the process there is refused too. (It was accepted; FilteredDB's own
// LevelDB::Open then failed and closing FilteredDB's descriptor dropped the
// other LevelDB's lock.)
TEST(FilteredDBPersistTest, AnInProcessOpenInTheOpenWindowNeverLosesItsLock) {
  const std::string path = TestPath("db");
  ASSERT_NO_FATAL_FAILURE(CreateClosedDb(path, 100));
  g_window_db = nullptr;
  filtered_db::SetOpenWindowHookForTesting(OpenPlainLevelDBInTheWindow);
  std::unique_ptr<FilteredDB> db;
  const leveldb::Status s = FilteredDB::Open(FilteredDBOptions(), CreateOptions(), path, &db);
  filtered_db::SetOpenWindowHookForTesting(nullptr);
  std::unique_ptr<leveldb::DB> plain(g_window_db);
  EXPECT_FALSE(g_window_open.ok()) << "opened while FilteredDB held the database";
  if (plain != nullptr) {
    EXPECT_EQ(LockSeenFromAnotherProcess(path), kLocked) << "the plain LevelDB lost its lock";
  }
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(db->index_stats().opened_from, IndexSource::kFile);
  std::string value;
  EXPECT_TRUE(db->Get(leveldb::ReadOptions(), Key(99), &value).ok());
  db.reset();
  ExpectLockedUntilPlainCloses(path, std::move(plain));
  DestroyFilteredDB(path, leveldb::Options());
}

// Opening through FilteredDB a database that a LevelDB of this process (plain
// or inside another FilteredDB) holds fails, and the holder keeps its lock,
// with the index persisted or not. (FilteredDB's probe, and LevelDB's Open,
// dropped it: LevelDB's Env closes the descriptor it opened when its
// in-process table says the file is held.)
// Opens the database at `path` in this process, as a FilteredDB or with plain
// LevelDB, into *holder, and checks that another process sees it locked.
void OpenHolder(const std::string& path, bool filtered, std::unique_ptr<leveldb::DB>* holder) {
  if (filtered) {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), CreateOptions(), path, &db).ok());
    *holder = std::move(db);
  } else {
    leveldb::DB* raw = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(CreateOptions(), path, &raw).ok());
    holder->reset(raw);
  }
  ASSERT_EQ(LockSeenFromAnotherProcess(path), kLocked);
}

// The holder still works, and its close releases the lock.
void ExpectHolderWorksAndUnlocksAtClose(const std::string& path,
                                        std::unique_ptr<leveldb::DB>* holder) {
  ASSERT_TRUE((*holder)->Put(leveldb::WriteOptions(), "k", "v").ok());
  std::string value;
  EXPECT_TRUE((*holder)->Get(leveldb::ReadOptions(), "k", &value).ok());
  holder->reset();
  EXPECT_EQ(LockSeenFromAnotherProcess(path), kUnlocked);
}

// A FilteredDB holder is found under any name of its directory ("db/",
// "db/."): FilteredDB knows the directories it holds by device and inode.
// (A plain LevelDB holder is found only under its own name: LevelDB's table
// of locked files goes by the name.)
TEST(FilteredDBPersistTest, AnOpenOfADatabaseHeldInThisProcessFailsAndLeavesItLocked) {
  const std::string path = TestPath("db");
  for (const bool holder_filtered : {false, true}) {
    for (const bool persist : {true, false}) {
      for (const std::string& name : {path, path + "/", path + "/."}) {
        if (!holder_filtered && name != path) continue;
        SCOPED_TRACE(std::string(holder_filtered ? "FilteredDB" : "plain LevelDB") +
                     " holds it; persist_index " + (persist ? "true" : "false") + "; " + name);
        DestroyFilteredDB(path, leveldb::Options());
        std::unique_ptr<leveldb::DB> holder;
        ASSERT_NO_FATAL_FAILURE(OpenHolder(path, holder_filtered, &holder));
        FilteredDBOptions second_options;
        second_options.persist_index = persist;
        std::unique_ptr<FilteredDB> second;
        const leveldb::Status s = FilteredDB::Open(second_options, CreateOptions(), name, &second);
        EXPECT_TRUE(s.IsIOError()) << s.ToString();
        EXPECT_EQ(second, nullptr);
        EXPECT_EQ(LockSeenFromAnotherProcess(path), kLocked) << "the holder lost its lock";
        ASSERT_NO_FATAL_FAILURE(ExpectHolderWorksAndUnlocksAtClose(path, &holder));
      }
    }
  }
  DestroyFilteredDB(path, leveldb::Options());
}

// DestroyFilteredDB of a database this process holds open fails, as
// leveldb::DestroyDB does, and leaves the holder locked: DestroyDB's refused
// LockFile closes a descriptor of LOCK, which drops the holder's lock.
TEST(FilteredDBPersistTest, DestroyOfADatabaseHeldInThisProcessFailsAndLeavesItLocked) {
  const std::string path = TestPath("db");
  for (const bool holder_filtered : {false, true}) {
    // A FilteredDB holder under any name of the directory.
    for (const std::string& name : {path, path + "/", path + "/."}) {
      if (!holder_filtered && name != path) continue;
      SCOPED_TRACE(
          std::string(holder_filtered ? "FilteredDB holds it; " : "plain LevelDB holds it; ") +
          name);
      DestroyFilteredDB(path, leveldb::Options());
      std::unique_ptr<leveldb::DB> holder;
      ASSERT_NO_FATAL_FAILURE(OpenHolder(path, holder_filtered, &holder));
      const leveldb::Status s = DestroyFilteredDB(name, leveldb::Options());
      EXPECT_TRUE(s.IsIOError()) << s.ToString();
      EXPECT_EQ(LockSeenFromAnotherProcess(path), kLocked) << "the holder lost its lock";
      ASSERT_NO_FATAL_FAILURE(ExpectHolderWorksAndUnlocksAtClose(path, &holder));
    }
  }
  DestroyFilteredDB(path, leveldb::Options());
}

// DestroyFilteredDB reports a failure to remove the index file instead of
// answering OK and leaving the database directory behind.
TEST(FilteredDBPersistTest, DestroyReportsAnIndexFileItCannotRemove) {
  const std::string path = TestPath("db");
  ASSERT_NO_FATAL_FAILURE(CreateClosedDb(path, 100));
  // In place of the index file, something unlink(2) refuses: a directory.
  const std::string index_path = path + "/BLOCKBLOOM-INDEX";
  fs::remove(index_path);
  fs::create_directories(index_path + "/x");
  const leveldb::Status s = DestroyFilteredDB(path, leveldb::Options());
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_TRUE(fs::exists(path));
  fs::remove_all(index_path);
  EXPECT_TRUE(DestroyFilteredDB(path, leveldb::Options()).ok());
  EXPECT_FALSE(fs::exists(path));
  // Nothing to remove is not an error: a missing directory, or a path that
  // is not a directory at all.
  EXPECT_TRUE(DestroyFilteredDB(path, leveldb::Options()).ok());
  EXPECT_TRUE(DestroyFilteredDB(path + "/no/such/dir", leveldb::Options()).ok());
  std::ofstream(path) << "a file";
  EXPECT_TRUE(DestroyFilteredDB(path, leveldb::Options()).ok());
  fs::remove(path);
}

// Forks an "opener" process that opens `path` as a FilteredDB, Puts
// "before-fork" and forks a worker holding a copy of it. The opener then
// runs `opener` (its exit code if not 0: 12 and up), wakes the worker and
// exits with the worker's code, without closing unless `opener` did. The
// worker runs `worker` with its copy and a call that waits until the opener
// woke it. Returns the opener's wait status.
int RunOpenerAndForkedWorker(
    const std::string& path, const std::function<int(std::unique_ptr<FilteredDB>*)>& opener,
    const std::function<int(std::unique_ptr<FilteredDB>*, const std::function<bool()>&)>& worker) {
  int go[2];
  if (::pipe(go) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    std::unique_ptr<FilteredDB> db;
    if (!FilteredDB::Open(FilteredDBOptions(), CreateOptions(), path, &db).ok()) _exit(12);
    if (!db->Put(leveldb::WriteOptions(), "before-fork", "v").ok()) _exit(13);
    const pid_t child = fork();
    if (child < 0) _exit(14);
    if (child == 0) {
      const auto wait_for_opener = [&] {
        char c;
        return ::read(go[0], &c, 1) == 1;
      };
      _exit(worker(&db, wait_for_opener));
    }
    if (const int code = opener(&db); code != 0) _exit(code);
    if (::write(go[1], "g", 1) != 1) _exit(18);
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) _exit(19);
    _exit(WEXITSTATUS(status));  // without closing, unless `opener` did
  }
  int status = -1;
  if (pid > 0 && waitpid(pid, &status, 0) != pid) status = -1;
  ::close(go[0]);
  ::close(go[1]);
  return status;
}

// A process forked from the opener holds a copy of the FilteredDB as it was
// at the fork. If it deletes that copy after the opener wrote more, and the
// opener then dies without closing, the next Open must not find an index
// file of the fork's keys beside the opener's later writes (it once did: the
// child saved its copy with a listing of the directory as it then was, and
// the next Open trusted it and ruled out the opener's keys).
TEST(FilteredDBPersistTest, AForkedChildsCloseSavesNothing) {
  const std::string path = TestPath("db");
  DestroyFilteredDB(path, leveldb::Options());
  const int status = RunOpenerAndForkedWorker(
      path,
      [](std::unique_ptr<FilteredDB>* db) {
        for (uint64_t i = 0; i < 100; ++i) {
          if (!(*db)->Put(leveldb::WriteOptions(), Key(i), "after").ok()) return 17;
        }
        return 0;  // then dies without closing
      },
      [](std::unique_ptr<FilteredDB>* db, const std::function<bool()>& wait_for_opener) {
        if (!wait_for_opener()) return 15;
        const bool refused = (*db)->SaveIndex().IsInvalidArgument();
        db->reset();  // a worker's close of the handle it inherited
        return refused ? 0 : 6;
      });
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_LT(WEXITSTATUS(status), 10) << "the opener failed before its worker closed";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "SaveIndex in the worker was not refused";
  EXPECT_FALSE(fs::exists(path + "/BLOCKBLOOM-INDEX"));
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(FilteredDBOptions(), leveldb::Options(), path, &db).ok());
  EXPECT_EQ(db->index_stats().opened_from, IndexSource::kScan);
  std::string value;
  EXPECT_TRUE(db->Get(leveldb::ReadOptions(), "before-fork", &value).ok());
  for (uint64_t i = 0; i < 100; ++i) {
    const leveldb::Status s = db->Get(leveldb::ReadOptions(), Key(i), &value);
    ASSERT_TRUE(s.ok()) << Key(i) << ": " << s.ToString();
  }
  db.reset();
  DestroyFilteredDB(path, leveldb::Options());
}

// A process forked from the opener that deletes its copy closes LevelDB as
// a plain LevelDB there would and releases the directory in that process:
// once the opener has closed the database, the child opens it (the
// directory stayed held in the child for good while the copy was leaked).
TEST(FilteredDBPersistTest, AForkedChildOpensTheDatabaseAfterItsOpener) {
  const std::string path = TestPath("db");
  DestroyFilteredDB(path, leveldb::Options());
  const int status = RunOpenerAndForkedWorker(
      path,
      [](std::unique_ptr<FilteredDB>* db) {
        if (!(*db)->Put(leveldb::WriteOptions(), "after-fork", "v").ok()) return 17;
        db->reset();  // a clean close
        return 0;
      },
      [&path](std::unique_ptr<FilteredDB>* db, const std::function<bool()>& wait_for_opener) {
        db->reset();  // the copy, while the opener still holds the database
        if (!wait_for_opener()) return 15;
        std::unique_ptr<FilteredDB> again;
        if (!FilteredDB::Open(FilteredDBOptions(), leveldb::Options(), path, &again).ok()) return 6;
        std::string value;
        return again->Get(leveldb::ReadOptions(), "after-fork", &value).ok() ? 0 : 7;
      });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "6: the child could not open it; 7: a key missed";
  DestroyFilteredDB(path, leveldb::Options());
}

}  // namespace
}  // namespace blockbloom
