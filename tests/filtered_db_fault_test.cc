// FilteredDB under injected I/O errors: real LevelDB over a failing disk.
//
// FaultEnv is a leveldb::EnvWrapper over leveldb::NewMemEnv(Env::Default())
// that fails the Nth call of one kind (NewWritableFile, Append, Sync, Close,
// RenameFile, RemoveFile, NewSequentialFile, sequential and random Reads,
// GetChildren, LockFile, ...) with an IOError -- once, or from then on -- or
// turns the Nth Append into a short write. A fixed sequence of operations
// (Open, Puts, Deletes, WriteBatches, growth, CompactRange, RebuildIndex,
// close) runs with the fault at every N of every kind, and after each:
//  - no crash, hang or escaping exception: each call returns OK or non-OK;
//  - with the disk working again, every key LevelDB holds (FilteredDB's own
//    iterator is LevelDB's) is found by FilteredDB's Get with its value, and
//    every other key of the universe is NotFound; every write acknowledged
//    OK and not overwritten since is still there;
//  - after a clean close and reopen, FilteredDB answers exactly as plain
//    leveldb::DB::Open on the same directory (with FilteredDB's files, if
//    any, left out of the comparison: there must be none here, as another
//    Env than Env::Default() persists nothing).
// The persisted index (Env::Default() only, written with POSIX calls, not
// through the Env) is faulted with real file-system conditions instead: a
// directory where the temporary or the index file belongs, and a file-size
// limit (RLIMIT_FSIZE) that cuts the index file's write short.
#include "blockbloom/filtered_db.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <string>
#include <vector>

#include "blockbloom/dleft_counting_bloom.h"
#include "blockbloom/hash.h"
#include "leveldb/env.h"
#include "leveldb/helpers/memenv.h"
#include "leveldb/write_batch.h"
#include "sanitizers.h"
#include "filtered_db/key_index.h"
#include "filtered_db/testing_hooks.h"
#include "test_keys.h"
#include "test_paths.h"

#if !BLOCKBLOOM_UNDER_SANITIZER
// pthread_create, interposed (the sanitizers intercept it themselves, so
// the test that uses it runs only without them): fails the next
// g_fail_thread_creations calls with EAGAIN, as when the process is at its
// thread limit, and counts them in g_failed_thread_creations.
namespace {
std::atomic<int> g_fail_thread_creations{0};
std::atomic<int> g_failed_thread_creations{0};
}  // namespace

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                              void* arg) {
  for (int pending = g_fail_thread_creations.load(); pending > 0;) {
    if (g_fail_thread_creations.compare_exchange_weak(pending, pending - 1)) {
      g_failed_thread_creations.fetch_add(1);
      return EAGAIN;
    }
  }
  using Real = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const Real real = reinterpret_cast<Real>(::dlsym(RTLD_NEXT, "pthread_create"));
  return real(thread, attr, start, arg);
}

// fdatasync and fsync, interposed the same way: fail with EIO (a disk that
// cannot sync) while g_fail_syncs is set.
namespace {
std::atomic<bool> g_fail_syncs{false};
}  // namespace

namespace {
using SyncFn = int (*)(int);
SyncFn LibcSync(const char* name) { return reinterpret_cast<SyncFn>(::dlsym(RTLD_NEXT, name)); }
int SyncUnlessFailing(SyncFn real, int fd) {
  if (g_fail_syncs.load()) {
    errno = EIO;
    return -1;
  }
  return real(fd);
}
}  // namespace

extern "C" int fdatasync(int fd) {
  static const SyncFn real = LibcSync("fdatasync");
  return SyncUnlessFailing(real, fd);
}

extern "C" int fsync(int fd) {
  static const SyncFn real = LibcSync("fsync");
  return SyncUnlessFailing(real, fd);
}
#endif

namespace blockbloom {
namespace {

using testing_keys::Key;

// The Env calls FaultEnv can fail.
enum class Call : int {
  kNewSequentialFile,
  kSequentialRead,
  kNewRandomAccessFile,
  kRandomRead,
  kNewWritableFile,
  kNewAppendableFile,
  kAppend,
  kFlush,
  kSync,
  kClose,
  kRemoveFile,
  kRenameFile,
  kGetChildren,
  kGetFileSize,
  kCreateDir,
  kLockFile,
  kCount,
};
constexpr int kNumCalls = static_cast<int>(Call::kCount);

const char* CallName(Call c) {
  static const char* const kNames[kNumCalls] = {"NewSequentialFile",
                                                "SequentialRead",
                                                "NewRandomAccessFile",
                                                "RandomRead",
                                                "NewWritableFile",
                                                "NewAppendableFile",
                                                "Append",
                                                "Flush",
                                                "Sync",
                                                "Close",
                                                "RemoveFile",
                                                "RenameFile",
                                                "GetChildren",
                                                "GetFileSize",
                                                "CreateDir",
                                                "LockFile"};
  return kNames[static_cast<int>(c)];
}

// Thread-safe (LevelDB calls it from its background thread too).
class FaultEnv : public leveldb::EnvWrapper {
 public:
  enum class Mode { kOnce, kFromThenOn, kShortWrite };

  FaultEnv() : FaultEnv(leveldb::NewMemEnv(leveldb::Env::Default())) {}
  ~FaultEnv() override = default;

  // Fails the `nth` (1-based) call of `call` counted from now; kShortWrite
  // (Append only) writes the first half of that Append and fails it.
  void Arm(Call call, uint64_t nth, Mode mode) {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.fill(0);
    armed_ = true;
    call_ = call;
    nth_ = nth;
    mode_ = mode;
    fired_ = false;
  }
  void Disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
  }
  void ResetCounts() {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.fill(0);
  }
  uint64_t count(Call c) {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_[static_cast<int>(c)];
  }
  bool fired() {
    std::lock_guard<std::mutex> lock(mu_);
    return fired_;
  }

  // Counts the call; true if it is to fail. *short_write: fail it after half.
  bool Fail(Call c, bool* short_write = nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t n = ++calls_[static_cast<int>(c)];
    if (short_write != nullptr) *short_write = false;
    if (!armed_ || c != call_) return false;
    const bool hit = mode_ == Mode::kFromThenOn ? n >= nth_ : n == nth_;
    if (!hit) return false;
    fired_ = true;
    if (short_write != nullptr) *short_write = mode_ == Mode::kShortWrite;
    return true;
  }

  static leveldb::Status Injected(Call c) {
    return leveldb::Status::IOError("injected fault", CallName(c));
  }

  // The file-opening calls: counts `call` and fails it if armed, else opens
  // through open(File**) and hands out the file wrapped in Wrapper.
  template <class Wrapper, class File, class Open>
  leveldb::Status OpenWrapped(Call call, File** r, Open&& open) {
    *r = nullptr;
    if (Fail(call)) return Injected(call);
    File* base = nullptr;
    leveldb::Status s = open(&base);
    if (s.ok()) *r = new Wrapper(this, base);
    return s;
  }

  leveldb::Status NewSequentialFile(const std::string& f, leveldb::SequentialFile** r) override;
  leveldb::Status NewRandomAccessFile(const std::string& f, leveldb::RandomAccessFile** r) override;
  leveldb::Status NewWritableFile(const std::string& f, leveldb::WritableFile** r) override;
  leveldb::Status NewAppendableFile(const std::string& f, leveldb::WritableFile** r) override;
  leveldb::Status RemoveFile(const std::string& f) override {
    if (Fail(Call::kRemoveFile)) return Injected(Call::kRemoveFile);
    return target()->RemoveFile(f);
  }
  leveldb::Status RenameFile(const std::string& s, const std::string& t) override {
    if (Fail(Call::kRenameFile)) return Injected(Call::kRenameFile);
    return target()->RenameFile(s, t);
  }
  leveldb::Status GetChildren(const std::string& dir, std::vector<std::string>* r) override {
    if (Fail(Call::kGetChildren)) return Injected(Call::kGetChildren);
    return target()->GetChildren(dir, r);
  }
  leveldb::Status GetFileSize(const std::string& f, uint64_t* size) override {
    if (Fail(Call::kGetFileSize)) return Injected(Call::kGetFileSize);
    return target()->GetFileSize(f, size);
  }
  leveldb::Status CreateDir(const std::string& d) override {
    if (Fail(Call::kCreateDir)) return Injected(Call::kCreateDir);
    return target()->CreateDir(d);
  }
  leveldb::Status LockFile(const std::string& f, leveldb::FileLock** l) override {
    if (Fail(Call::kLockFile)) return Injected(Call::kLockFile);
    return target()->LockFile(f, l);
  }

  // The MemEnv this wraps (owned).
  leveldb::Env* mem() { return mem_.get(); }

 private:
  explicit FaultEnv(leveldb::Env* mem) : leveldb::EnvWrapper(mem), mem_(mem) {}

  std::unique_ptr<leveldb::Env> mem_;
  std::mutex mu_;
  std::array<uint64_t, kNumCalls> calls_{};
  bool armed_ = false;
  Call call_ = Call::kAppend;
  uint64_t nth_ = 0;
  Mode mode_ = Mode::kOnce;
  bool fired_ = false;
};

class FaultSequentialFile : public leveldb::SequentialFile {
 public:
  FaultSequentialFile(FaultEnv* env, leveldb::SequentialFile* base) : env_(env), base_(base) {}
  leveldb::Status Read(size_t n, leveldb::Slice* result, char* scratch) override {
    if (env_->Fail(Call::kSequentialRead)) return FaultEnv::Injected(Call::kSequentialRead);
    return base_->Read(n, result, scratch);
  }
  leveldb::Status Skip(uint64_t n) override { return base_->Skip(n); }

 private:
  FaultEnv* env_;
  std::unique_ptr<leveldb::SequentialFile> base_;
};

class FaultRandomAccessFile : public leveldb::RandomAccessFile {
 public:
  FaultRandomAccessFile(FaultEnv* env, leveldb::RandomAccessFile* base) : env_(env), base_(base) {}
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* scratch) const override {
    if (env_->Fail(Call::kRandomRead)) return FaultEnv::Injected(Call::kRandomRead);
    return base_->Read(offset, n, result, scratch);
  }

 private:
  FaultEnv* env_;
  std::unique_ptr<leveldb::RandomAccessFile> base_;
};

class FaultWritableFile : public leveldb::WritableFile {
 public:
  FaultWritableFile(FaultEnv* env, leveldb::WritableFile* base) : env_(env), base_(base) {}
  leveldb::Status Append(const leveldb::Slice& data) override {
    bool short_write = false;
    if (env_->Fail(Call::kAppend, &short_write)) {
      if (short_write) (void)base_->Append(leveldb::Slice(data.data(), data.size() / 2));
      return FaultEnv::Injected(Call::kAppend);
    }
    return base_->Append(data);
  }
  leveldb::Status Close() override {
    if (env_->Fail(Call::kClose)) return FaultEnv::Injected(Call::kClose);
    return base_->Close();
  }
  leveldb::Status Flush() override {
    if (env_->Fail(Call::kFlush)) return FaultEnv::Injected(Call::kFlush);
    return base_->Flush();
  }
  leveldb::Status Sync() override {
    if (env_->Fail(Call::kSync)) return FaultEnv::Injected(Call::kSync);
    return base_->Sync();
  }

 private:
  FaultEnv* env_;
  std::unique_ptr<leveldb::WritableFile> base_;
};

leveldb::Status FaultEnv::NewSequentialFile(const std::string& f, leveldb::SequentialFile** r) {
  return OpenWrapped<FaultSequentialFile>(Call::kNewSequentialFile, r, [&](auto** base) {
    return target()->NewSequentialFile(f, base);
  });
}

leveldb::Status FaultEnv::NewRandomAccessFile(const std::string& f, leveldb::RandomAccessFile** r) {
  return OpenWrapped<FaultRandomAccessFile>(Call::kNewRandomAccessFile, r, [&](auto** base) {
    return target()->NewRandomAccessFile(f, base);
  });
}

leveldb::Status FaultEnv::NewWritableFile(const std::string& f, leveldb::WritableFile** r) {
  return OpenWrapped<FaultWritableFile>(
      Call::kNewWritableFile, r, [&](auto** base) { return target()->NewWritableFile(f, base); });
}

leveldb::Status FaultEnv::NewAppendableFile(const std::string& f, leveldb::WritableFile** r) {
  return OpenWrapped<FaultWritableFile>(Call::kNewAppendableFile, r, [&](auto** base) {
    return target()->NewAppendableFile(f, base);
  });
}

constexpr char kDbName[] = "/fault_db";
constexpr uint64_t kUniverse = 360;  // keys Key(0) .. Key(kUniverse - 1)

std::string Value(uint64_t i, int version) {
  // ~1 KB: 64 keys fill LevelDB's smallest write buffer (64 KB), so the
  // sequence flushes memtables and compacts.
  std::string v = "v" + std::to_string(version) + "-" + std::to_string(i) + "-";
  v.resize(1000, static_cast<char>('a' + (i + version) % 26));
  return v;
}

// paranoid_checks: LevelDB reports a log it cannot read at recovery instead
// of opening without it (leveldb::DBImpl::MaybeIgnoreError), so no write it
// acknowledged goes missing while it says OK.
leveldb::Options DbOptions(leveldb::Env* env, bool paranoid) {
  leveldb::Options options;
  options.create_if_missing = true;
  options.paranoid_checks = paranoid;
  options.env = env;
  options.write_buffer_size = 64 << 10;
  return options;
}

FilteredDBOptions IndexOptions(IndexKind kind) {
  FilteredDBOptions o;
  o.kind = kind;
  o.expected_keys = 48;  // grows (in the background) during the sequence
  o.progress_interval = 64;
  return o;
}

// What the caller knows of each key: a value written with an OK status
// (and not touched by a failed write since), absent for sure, or unknown.
struct Oracle {
  std::map<std::string, std::string> present;
  std::set<std::string> absent;
  void Ok(const std::string& key, const std::string* value) {
    if (value != nullptr) {
      present[key] = *value;
      absent.erase(key);
    } else {
      present.erase(key);
      absent.insert(key);
    }
  }
  void Unknown(const std::string& key) {
    present.erase(key);
    absent.erase(key);
  }
};

// Every key of LevelDB's view (`db`'s iterator) is found by `db`'s Get with
// its value; every other key of the universe is NotFound. *held: that view.
void ExpectGetMatchesLevelDB(leveldb::DB* db, const std::string& where,
                             std::map<std::string, std::string>* held) {
  held->clear();
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator(leveldb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    (*held)[it->key().ToString()] = it->value().ToString();
  }
  ASSERT_TRUE(it->status().ok()) << where << ": " << it->status().ToString();
  for (uint64_t i = 0; i < kUniverse; ++i) {
    const std::string key = Key(i);
    std::string value;
    const leveldb::Status s = db->Get(leveldb::ReadOptions(), key, &value);
    const auto h = held->find(key);
    if (h != held->end()) {
      ASSERT_TRUE(s.ok()) << where << ": LevelDB holds " << key << ", Get says " << s.ToString();
      ASSERT_EQ(value, h->second) << where << " " << key;
    } else {
      ASSERT_TRUE(s.IsNotFound()) << where << ": " << key << " absent, Get says " << s.ToString();
    }
  }
}

// Applies the operation sequence to `db` (which may fail anywhere), keeping
// `oracle` to what the returned statuses prove.
void RunSequence(FilteredDB* db, Oracle* oracle) {
  const leveldb::WriteOptions wo;
  const auto put = [&](uint64_t i, int version) {
    const std::string key = Key(i), value = Value(i, version);
    if (db->Put(wo, key, value).ok()) {
      oracle->Ok(key, &value);
    } else {
      oracle->Unknown(key);
    }
  };
  const auto del = [&](uint64_t i) {
    const std::string key = Key(i);
    if (db->Delete(wo, key).ok()) {
      oracle->Ok(key, nullptr);
    } else {
      oracle->Unknown(key);
    }
  };
  // New keys (growth from 48 to a few hundred, memtable flushes).
  for (uint64_t i = 0; i < 200; ++i) put(i, 0);
  db->WaitForGrowth();
  // Deletes of present and absent keys, overwrites.
  for (uint64_t i = 0; i < 240; i += 3) del(i);
  for (uint64_t i = 1; i < 200; i += 7) put(i, 1);
  // Batches: net effect per key, new and old keys, a key put then deleted.
  for (uint64_t b = 0; b < 8; ++b) {
    leveldb::WriteBatch batch;
    std::vector<std::pair<std::string, std::string>> effect;
    for (uint64_t j = 0; j < 12; ++j) {
      const uint64_t i = 200 + b * 12 + j;
      const std::string key = Key(i), value = Value(i, 2);
      batch.Put(key, value);
      if (j % 4 == 0) {
        batch.Delete(key);
        effect.emplace_back(key, "");
      } else {
        effect.emplace_back(key, value);
      }
    }
    batch.Delete(Key(b * 5 + 2));
    effect.emplace_back(Key(b * 5 + 2), "");
    const bool ok = db->Write(wo, &batch).ok();
    for (const auto& [key, value] : effect) {
      if (!ok) {
        oracle->Unknown(key);
      } else {
        oracle->Ok(key, value.empty() ? nullptr : &value);
      }
    }
  }
  db->WaitForGrowth();
  db->CompactRange(nullptr, nullptr);
  (void)db->RebuildIndex();
  for (uint64_t i = 296; i < 330; ++i) put(i, 3);
  (void)db->SaveIndex();  // NotSupported here (not Env::Default): must not touch the disk
  db->WaitForGrowth();
}

void ExpectOracleHolds(const Oracle& oracle, const std::map<std::string, std::string>& held,
                       const std::string& where) {
  for (const auto& [key, value] : oracle.present) {
    const auto h = held.find(key);
    ASSERT_TRUE(h != held.end()) << where << ": acknowledged " << key << " lost";
    ASSERT_EQ(h->second, value) << where << " " << key;
  }
  for (const std::string& key : oracle.absent) {
    ASSERT_EQ(held.count(key), 0u) << where << ": deleted " << key << " is back";
  }
}

// LevelDB's files only: FilteredDB leaves nothing of its own in a non-default Env.
void ExpectOnlyLevelDBFiles(leveldb::Env* env, const std::string& where) {
  std::vector<std::string> children;
  ASSERT_TRUE(env->GetChildren(kDbName, &children).ok()) << where;
  for (const std::string& f : children) {
    ASSERT_EQ(f.find("BLOCKBLOOM"), std::string::npos) << where << ": left behind " << f;
    ASSERT_EQ(f.find(".tmp"), std::string::npos) << where << ": left behind " << f;
  }
}

// One run: the sequence with `call`'s nth call failing (nth == 0: none).
// *fired: whether the fault was reached; *calls: calls of `call` from the
// reopen to the end of the close.
// paranoid: LevelDB's paranoid_checks, and then also that every write
// acknowledged OK is there (without it, LevelDB itself may open without a
// log it failed to read).
void RunWithFault(IndexKind kind, bool paranoid, Call call, uint64_t nth, FaultEnv::Mode mode,
                  bool* fired, uint64_t* calls) {
  FaultEnv owned_env;
  FaultEnv* env = &owned_env;
  const std::string where = std::string(CallName(call)) + " #" + std::to_string(nth) +
                            (mode == FaultEnv::Mode::kOnce         ? " once"
                             : mode == FaultEnv::Mode::kFromThenOn ? " from then on"
                                                                   : " short write");
  // Some data from before: the run starts with a reopen.
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(IndexOptions(kind), DbOptions(env, paranoid), kDbName, &db).ok());
    for (uint64_t i = 330; i < kUniverse; ++i) {
      ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), Value(i, 9)).ok());
    }
  }
  Oracle oracle;
  for (uint64_t i = 330; i < kUniverse; ++i) {
    const std::string v = Value(i, 9);
    oracle.Ok(Key(i), &v);
  }
  if (nth != 0) {
    env->Arm(call, nth, mode);
  } else {
    env->ResetCounts();
  }
  {
    std::unique_ptr<FilteredDB> db;
    const leveldb::Status open =
        FilteredDB::Open(IndexOptions(kind), DbOptions(env, paranoid), kDbName, &db);
    if (open.ok()) {
      ASSERT_TRUE(db != nullptr);
      RunSequence(db.get(), &oracle);
      env->Disarm();
      std::map<std::string, std::string> held;
      ASSERT_NO_FATAL_FAILURE(ExpectGetMatchesLevelDB(db.get(), where + ", same session", &held));
      if (paranoid) {
        ASSERT_NO_FATAL_FAILURE(ExpectOracleHolds(oracle, held, where + ", same session"));
      }
    } else {
      ASSERT_TRUE(db == nullptr) << where;
      for (uint64_t i = 0; i < 330; ++i) oracle.Ok(Key(i), nullptr);
    }
  }  // close (may still fail, if the fault is still armed)
  *fired = env->fired();
  *calls = env->count(call);
  env->Disarm();
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyLevelDBFiles(env, where + ", after close"));

  // Plain LevelDB's view of the directory after a clean reopen...
  std::map<std::string, std::string> plain;
  leveldb::Status plain_open;
  {
    leveldb::DB* raw = nullptr;
    plain_open = leveldb::DB::Open(DbOptions(env, paranoid), kDbName, &raw);
    std::unique_ptr<leveldb::DB> plain_db(raw);
    if (plain_open.ok()) {
      std::unique_ptr<leveldb::Iterator> it(plain_db->NewIterator(leveldb::ReadOptions()));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        plain[it->key().ToString()] = it->value().ToString();
      }
      ASSERT_TRUE(it->status().ok()) << where << ": " << it->status().ToString();
    }
  }
  // ... is FilteredDB's, key for key.
  std::unique_ptr<FilteredDB> db;
  const leveldb::Status reopen =
      FilteredDB::Open(IndexOptions(kind), DbOptions(env, paranoid), kDbName, &db);
  ASSERT_EQ(reopen.ok(), plain_open.ok())
      << where << ": " << reopen.ToString() << " vs " << plain_open.ToString();
  if (!reopen.ok()) return;
  std::map<std::string, std::string> held;
  ASSERT_NO_FATAL_FAILURE(ExpectGetMatchesLevelDB(db.get(), where + ", reopened", &held));
  ASSERT_EQ(held, plain) << where;
  db.reset();
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyLevelDBFiles(env, where + ", after reopen"));
}

struct SweepParam {
  IndexKind kind;
  bool paranoid;
  Call call;
  FaultEnv::Mode mode;
};

std::string ParamName(const testing::TestParamInfo<SweepParam>& info) {
  const SweepParam& p = info.param;
  return std::string(p.kind == IndexKind::kDleft ? "Dleft" : "Counting") +
         (p.paranoid ? "_Paranoid_" : "_") + CallName(p.call) +
         (p.mode == FaultEnv::Mode::kOnce         ? "_Once"
          : p.mode == FaultEnv::Mode::kFromThenOn ? "_FromThenOn"
                                                  : "_ShortWrite");
}

class FaultSweepTest : public testing::TestWithParam<SweepParam> {};

// Runs the sequence once per call of the chosen kind (up to kMaxRuns,
// spread evenly over the calls beyond that), the fault at that call. The
// sanitizer run, whose job here is memory errors on the error paths, takes
// every other of those faults: the whole sweep was a third of its time.
TEST_P(FaultSweepTest, EveryFaultLeavesGetExactAndNothingAcknowledgedLost) {
  const SweepParam p = GetParam();
  constexpr uint64_t kMaxRuns = testing_build::kUnderSanitizer ? 20 : 40;
  bool fired = false;
  uint64_t clean_calls = 0, ignored = 0;
  ASSERT_NO_FATAL_FAILURE(
      RunWithFault(p.kind, p.paranoid, p.call, 0, p.mode, &fired, &clean_calls));
  // Calls of the sequence (from the armed reopen to the end of the close),
  // plus a margin: background work varies a little from run to run.
  const uint64_t calls = clean_calls + 2;
  const uint64_t stride = calls > kMaxRuns ? (calls + kMaxRuns - 1) / kMaxRuns : 1;
  uint64_t runs = 0, fired_runs = 0;
  for (uint64_t nth = 1; nth <= calls; nth += stride) {
    ASSERT_NO_FATAL_FAILURE(
        RunWithFault(p.kind, p.paranoid, p.call, nth, p.mode, &fired, &ignored));
    ++runs;
    fired_runs += fired ? 1 : 0;
  }
  if (clean_calls > 0) EXPECT_GT(fired_runs, 0u);
  RecordProperty("calls", static_cast<int>(calls));
  RecordProperty("runs", static_cast<int>(runs));
}

std::vector<SweepParam> SweepParams() {
  std::vector<SweepParam> out;
  for (IndexKind kind : {IndexKind::kDleft, IndexKind::kCounting}) {
    for (bool paranoid : {true, false}) {
      for (int c = 0; c < kNumCalls; ++c) {
        for (FaultEnv::Mode mode : {FaultEnv::Mode::kOnce, FaultEnv::Mode::kFromThenOn}) {
          out.push_back({kind, paranoid, static_cast<Call>(c), mode});
        }
      }
      out.push_back({kind, paranoid, Call::kAppend, FaultEnv::Mode::kShortWrite});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllCalls, FaultSweepTest, testing::ValuesIn(SweepParams()), ParamName);

// A write LevelDB accepts without reading anything must not fail because
// FilteredDB's presence check (a LevelDB Get of a key the index claims)
// cannot read: plain LevelDB overwrites and deletes such a key fine, and
// overwriting is how a key in a damaged block is repaired.
TEST(FaultTest, ReadErrorsDoNotFailWritesLevelDBAccepts) {
  for (IndexKind kind : {IndexKind::kDleft, IndexKind::kCounting}) {
    SCOPED_TRACE(kind == IndexKind::kDleft ? "d-left" : "counting");
    FaultEnv env;
    {
      std::unique_ptr<FilteredDB> db;
      ASSERT_TRUE(FilteredDB::Open(IndexOptions(kind), DbOptions(&env, true), kDbName, &db).ok());
      for (uint64_t i = 0; i < 100; ++i) {
        ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), Value(i, 0)).ok());
      }
      db->CompactRange(nullptr, nullptr);  // every key in a table, none in the memtable
    }
    // Reopened: no data block cached (the index's scan does not fill the cache).
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(IndexOptions(kind), DbOptions(&env, true), kDbName, &db).ok());
    env.Arm(Call::kRandomRead, 1, FaultEnv::Mode::kFromThenOn);
    std::string value;
    ASSERT_FALSE(db->Get(leveldb::ReadOptions(), Key(5), &value).ok());  // the disk is failing
    const leveldb::WriteOptions wo;
    EXPECT_TRUE(db->Put(wo, Key(5), "new five").ok());
    EXPECT_TRUE(db->Delete(wo, Key(6)).ok());
    leveldb::WriteBatch batch;
    batch.Put(Key(7), "new seven");
    batch.Delete(Key(8));
    batch.Put(Key(500), "new key");
    EXPECT_TRUE(db->Write(wo, &batch).ok());
    EXPECT_TRUE(db->Put(wo, Key(501), "another new key").ok());
    EXPECT_TRUE(db->Delete(wo, Key(501)).ok());
    // The disk works again: LevelDB's answers, and the index claims every
    // key LevelDB holds.
    env.Disarm();
    const std::map<std::string, std::string> expected_changes = {
        {Key(5), "new five"}, {Key(7), "new seven"}, {Key(500), "new key"}};
    for (const auto& [key, v] : expected_changes) {
      ASSERT_TRUE(db->Get(leveldb::ReadOptions(), key, &value).ok()) << key;
      EXPECT_EQ(value, v);
    }
    for (uint64_t i : {6, 8, 501}) {
      EXPECT_TRUE(db->Get(leveldb::ReadOptions(), Key(i), &value).IsNotFound()) << i;
    }
    std::map<std::string, std::string> held;
    ASSERT_NO_FATAL_FAILURE(ExpectGetMatchesLevelDB(db.get(), "after read errors", &held));
    EXPECT_EQ(held.size(), 100u - 2 + 1);
    // Deleting what is left while reads fail again must leave no key the
    // index rules out but LevelDB holds, and no erase of a key never
    // inserted (a later rebuild is exact).
    env.Arm(Call::kRandomRead, 1, FaultEnv::Mode::kFromThenOn);
    for (uint64_t i = 0; i < 50; ++i) EXPECT_TRUE(db->Delete(wo, Key(i)).ok()) << i;
    env.Disarm();
    ASSERT_NO_FATAL_FAILURE(ExpectGetMatchesLevelDB(db.get(), "after deletes", &held));
    ASSERT_TRUE(db->RebuildIndex().ok());
    ASSERT_NO_FATAL_FAILURE(ExpectGetMatchesLevelDB(db.get(), "after rebuild", &held));
    EXPECT_EQ(db->index_stats().keys, held.size());
  }
}

// DestroyFilteredDB with each of LockFile, GetChildren and RemoveFile
// failing at every call: a Status either way, and with the disk working
// again a second destroy removes everything.
TEST(FaultTest, DestroyUnderFaultsReportsAndCanBeRepeated) {
  for (Call call : {Call::kLockFile, Call::kGetChildren, Call::kRemoveFile}) {
    for (uint64_t nth = 1; nth <= 12; ++nth) {
      SCOPED_TRACE(std::string(CallName(call)) + " #" + std::to_string(nth));
      FaultEnv env;
      {
        std::unique_ptr<FilteredDB> db;
        ASSERT_TRUE(
            FilteredDB::Open(IndexOptions(IndexKind::kDleft), DbOptions(&env, true), kDbName, &db)
                .ok());
        for (uint64_t i = 0; i < 100; ++i) {
          ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), Value(i, 0)).ok());
        }
      }
      env.Arm(call, nth, FaultEnv::Mode::kOnce);
      const leveldb::Status first = DestroyFilteredDB(kDbName, DbOptions(&env, true));
      env.Disarm();
      // LevelDB's DestroyDB may report OK after a failed removal of one
      // file; whatever is left goes with the next destroy.
      std::vector<std::string> children;
      ASSERT_TRUE(DestroyFilteredDB(kDbName, DbOptions(&env, true)).ok());
      (void)env.GetChildren(kDbName, &children);
      EXPECT_TRUE(children.empty())
          << children.size() << " files left, first: " << first.ToString();
    }
  }
}

// A growth whose thread cannot be started (EAGAIN: the process is at its
// thread limit) fails like one whose index cannot be allocated: the write
// that triggered it returns OK (no exception escapes), WaitForGrowth()
// returns, and a later write tries again once the index has taken as many
// inserts again.
TEST(FaultTest, GrowthThreadThatCannotStartIsRetriedLater) {
#if BLOCKBLOOM_UNDER_SANITIZER
  GTEST_SKIP() << "pthread_create is interposed only without sanitizers";
#else
  FaultEnv env;
  FilteredDBOptions o = IndexOptions(IndexKind::kDleft);
  o.expected_keys = 16;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(o, DbOptions(&env, true), kDbName, &db).ok());
  db->CompactRange(nullptr, nullptr);  // LevelDB's background thread exists before the fault
  const uint64_t capacity = db->index_stats().capacity;
  g_failed_thread_creations = 0;
  g_fail_thread_creations = 1;
  uint64_t i = 0;
  for (; i < 100 * capacity && g_failed_thread_creations == 0; ++i) {
    leveldb::Status s;
    ASSERT_NO_THROW(s = db->Put(leveldb::WriteOptions(), Key(i), "v")) << i;
    ASSERT_TRUE(s.ok()) << i << " " << s.ToString();
  }
  g_fail_thread_creations = 0;
  ASSERT_EQ(g_failed_thread_creations, 1);
  auto waited = std::async(std::launch::async, [&] { db->WaitForGrowth(); });
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "WaitForGrowth() hangs after a growth that never started";
  std::map<std::string, std::string> held;
  ASSERT_NO_FATAL_FAILURE(ExpectGetMatchesLevelDB(db.get(), "after the failed start", &held));
  for (uint64_t end = i + 8 * capacity; i < end; ++i) {
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), "v").ok()) << i;
  }
  db->WaitForGrowth();
  const FilteredDBStats stats = db->index_stats();
  EXPECT_TRUE(stats.index_active);
  EXPECT_GT(stats.capacity, capacity) << "grew on a later write";
  EXPECT_GE(stats.rebuilds, 2u);
  ASSERT_NO_FATAL_FAILURE(ExpectGetMatchesLevelDB(db.get(), "after growth", &held));
#endif
}

// The growth thread's last rebuild has published its index; before the
// thread finishes, writes make that index refuse a key (d-left counter
// overflow: four new keys sharing one fingerprint at its geometry, and not
// at twice its size) and so ask for a growth. The thread must run it:
// before, it saw itself still running, ignored the request and stopped,
// leaving the index saturated (every Get passed through) for the rest of
// the session.
FilteredDB* g_hook_db = nullptr;
std::atomic<int> g_hook_runs{0};
std::vector<std::string> g_hook_keys;

// The seed RefusalRightAfterAGrowthPublishesGrowsAgain fixes for every index
// (testing_hooks.h), and a key's top bits in such an index.
constexpr uint64_t kFixedSeed = 0xFA17FA17FA17FA17ull;
uint64_t TopBits(const std::string& key, int bits) {
  return KeyIndex::HashOf(key, kFixedSeed) >> (64 - bits);
}

// Four keys whose hashes share their top `bits` bits, not all the next one.
std::vector<std::string> KeysSharingTopBits(int bits) {
  std::unordered_map<uint64_t, std::vector<std::string>> groups;
  for (uint64_t i = 0;; ++i) {
    std::string key = "fp" + std::to_string(i);
    std::vector<std::string>& group = groups[TopBits(key, bits)];
    group.push_back(std::move(key));
    if (group.size() < 4) continue;
    size_t next_bit_set = 0;
    for (const std::string& k : group) next_bit_set += TopBits(k, bits + 1) & 1;
    if (next_bit_set != 0 && next_bit_set != 4) return group;
    group.erase(group.begin());
  }
}

void RefuseAfterGrowth(const std::string& /*db_name*/) {
  if (g_hook_runs.fetch_add(1) != 0) return;  // the first growth only
  // The published index's geometry: capacity = 6 keys * 4 subtables *
  // 2^log2_buckets (design_capacity), fingerprint = the top log2_buckets +
  // 14 hash bits (blockbloom/dleft_counting_bloom.h).
  const uint64_t capacity = g_hook_db->index_stats().capacity;
  using Filter = DleftCountingBloomFilter;
  const uint64_t buckets = capacity / (uint64_t{Filter::kDesignKeysPerBucket} * Filter::kSubtables);
  ASSERT_TRUE(buckets != 0 && (buckets & (buckets - 1)) == 0) << capacity;
  g_hook_keys = KeysSharingTopBits(__builtin_ctzll(buckets) + Filter::kRemainderBits);
  for (const std::string& key : g_hook_keys) {
    EXPECT_TRUE(g_hook_db->Put(leveldb::WriteOptions(), key, "shared").ok());
  }
}

TEST(FaultTest, RefusalRightAfterAGrowthPublishesGrowsAgain) {
  FaultEnv env;
  FilteredDBOptions o = IndexOptions(IndexKind::kDleft);
  o.expected_keys = 16;
  o.target_fpr = 1e-4;  // 16-bit cells, whose counter refuses a fourth key
  struct FixedSeed {
    FixedSeed() { filtered_db::SetIndexSeedForTesting(true, kFixedSeed); }
    ~FixedSeed() { filtered_db::SetIndexSeedForTesting(false, 0); }
  } fixed_seed;  // so that the hook can choose keys that collide in the index
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(o, DbOptions(&env, true), kDbName, &db).ok());
  const FilteredDBStats before = db->index_stats();
  g_hook_db = db.get();
  g_hook_runs = 0;
  g_hook_keys.clear();
  filtered_db::SetGrowthRebuiltHookForTesting(RefuseAfterGrowth);
  uint64_t i = 0;
  for (; g_hook_runs == 0 && i < 4 * before.capacity; ++i) {
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), "v").ok());
    db->WaitForGrowth();  // the hook's writes are the last before the growth ends
  }
  filtered_db::SetGrowthRebuiltHookForTesting(nullptr);
  g_hook_db = nullptr;
  ASSERT_GE(g_hook_runs, 1) << "no growth ran";
  ASSERT_EQ(g_hook_keys.size(), 4u);
  const FilteredDBStats after = db->index_stats();
  EXPECT_EQ(after.insert_refusals, before.insert_refusals + 1) << "the hook's 4th key is refused";
  EXPECT_TRUE(after.index_active) << "saturated: the growth asked for after the publish never ran";
  std::map<std::string, std::string> held;
  ASSERT_NO_FATAL_FAILURE(ExpectGetMatchesLevelDB(db.get(), "after growth", &held));
  std::string value;
  for (const std::string& key : g_hook_keys) {
    ASSERT_TRUE(db->Get(leveldb::ReadOptions(), key, &value).ok()) << key;
  }
  // The index is exact again: absent keys are ruled out from memory.
  EXPECT_EQ(after.keys, i + 4);
}

// The persisted index (Env::Default() only; written by POSIX calls, not
// through the Env) under real file-system failures.

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// Names in `dir` that are neither LevelDB's nor the index file.
std::vector<std::string> Leftovers(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find("BLOCKBLOOM") != std::string::npos && name != "BLOCKBLOOM-INDEX") {
      out.push_back(name);
    }
  }
  return out;
}

// Plain LevelDB's contents of `path` (a clean open and close).
void ReadWithPlainLevelDB(const std::string& path, std::map<std::string, std::string>* held) {
  held->clear();
  leveldb::DB* raw = nullptr;
  leveldb::Options options;
  ASSERT_TRUE(leveldb::DB::Open(options, path, &raw).ok());
  std::unique_ptr<leveldb::DB> db(raw);
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator(leveldb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    (*held)[it->key().ToString()] = it->value().ToString();
  }
  ASSERT_TRUE(it->status().ok());
}

// A clean reopen of FilteredDB obtains its index from `expected_source`
// and answers as plain LevelDB then does on the same directory (opened
// after it: LevelDB's open changes the directory, so the index file would
// not be used after it).
void ExpectReopenMatchesPlainLevelDB(const std::string& path, IndexSource expected_source) {
  std::map<std::string, std::string> plain, held;
  {
    std::unique_ptr<FilteredDB> db;
    FilteredDBOptions o;
    o.expected_keys = 1000;
    leveldb::Options options;
    ASSERT_TRUE(FilteredDB::Open(o, options, path, &db).ok());
    EXPECT_EQ(db->index_stats().opened_from, expected_source);
    ASSERT_NO_FATAL_FAILURE(ExpectGetMatchesLevelDB(db.get(), "reopened " + path, &held));
    EXPECT_FALSE(Exists(path + "/BLOCKBLOOM-INDEX")) << "used at most once";
  }
  ASSERT_NO_FATAL_FAILURE(ReadWithPlainLevelDB(path, &plain));
  EXPECT_EQ(held, plain);
  EXPECT_TRUE(Leftovers(path).empty());
}

class DiskFaultTest : public testing::Test {
 protected:
  void SetUp() override {
    path_ = TestPath("db");
    ASSERT_TRUE(DestroyFilteredDB(path_, leveldb::Options()).ok());
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  void OpenDb(std::unique_ptr<FilteredDB>* db) {
    FilteredDBOptions o;
    o.expected_keys = 1000;
    leveldb::Options options;
    options.create_if_missing = true;
    ASSERT_TRUE(FilteredDB::Open(o, options, path_, db).ok());
  }
  // Puts Key(i) = Value(i, 0) for i in [begin, end).
  static void PutKeys(FilteredDB* db, uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) {
      ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), Value(i, 0)).ok());
    }
  }
  // A compacted database whose largest table `damage` changes (given the
  // open file and its size): plain LevelDB opens it and fails some Gets;
  // FilteredDB opens it saturated and answers every Get as LevelDB does;
  // RebuildIndex() returns LevelDB's error (Corruption or not).
  void ExpectADamagedTableOpensPassingThrough(
      const std::function<void(std::FILE*, uintmax_t)>& damage, bool corruption);
  std::string path_;
};

// A SaveIndex that fails (the temporary cannot be created) says so, leaves
// no temporary, and the older file it could not replace is not trusted: the
// database changed since, so the next Open scans.
TEST_F(DiskFaultTest, FailedSaveIsReportedAndTheOlderFileIsNotTrusted) {
  const std::string tmp = path_ + "/BLOCKBLOOM-INDEX.tmp";
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_NO_FATAL_FAILURE(OpenDb(&db));
    ASSERT_NO_FATAL_FAILURE(PutKeys(db.get(), 0, 100));
    ASSERT_TRUE(db->SaveIndex().ok());
    ASSERT_TRUE(Exists(path_ + "/BLOCKBLOOM-INDEX"));
    ASSERT_NO_FATAL_FAILURE(PutKeys(db.get(), 100, 150));
    for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(db->Delete(leveldb::WriteOptions(), Key(i)).ok());
    ASSERT_EQ(::mkdir(tmp.c_str(), 0700), 0);  // the temporary cannot be written
    const leveldb::Status s = db->SaveIndex();
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    EXPECT_EQ(db->index_stats().index_saves, 1u);
  }  // the save at close fails the same way
  ASSERT_EQ(::rmdir(tmp.c_str()), 0);
  EXPECT_TRUE(Exists(path_ + "/BLOCKBLOOM-INDEX"));  // the first save's, now stale
  ASSERT_NO_FATAL_FAILURE(ExpectReopenMatchesPlainLevelDB(path_, IndexSource::kScan));
}

// A temporary left by a save that was killed before its rename is removed
// by the next Open, and a save with the disk working then replaces it.
TEST_F(DiskFaultTest, TemporaryLeftByAKilledSaveIsRemovedAtOpen) {
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_NO_FATAL_FAILURE(OpenDb(&db));
    ASSERT_NO_FATAL_FAILURE(PutKeys(db.get(), 0, 100));
  }
  const std::string tmp = path_ + "/BLOCKBLOOM-INDEX.tmp";
  {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("half an index file", f);
    ASSERT_EQ(std::fclose(f), 0);
  }
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_NO_FATAL_FAILURE(OpenDb(&db));
    EXPECT_EQ(db->index_stats().opened_from, IndexSource::kFile);  // the tmp is not listed
    EXPECT_FALSE(Exists(tmp));
    EXPECT_TRUE(Leftovers(path_).empty());
  }
  ASSERT_NO_FATAL_FAILURE(ExpectReopenMatchesPlainLevelDB(path_, IndexSource::kFile));
}

// An index file that cannot be removed at Open (a directory in its place)
// is not used; the save at close cannot replace it and leaves no temporary;
// DestroyFilteredDB reports it and leaves LevelDB's files.
TEST_F(DiskFaultTest, IndexFileThatCannotBeRemovedIsNeverUsed) {
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_NO_FATAL_FAILURE(OpenDb(&db));
    ASSERT_NO_FATAL_FAILURE(PutKeys(db.get(), 0, 100));
  }
  const std::string index = path_ + "/BLOCKBLOOM-INDEX";
  ASSERT_TRUE(Exists(index));
  ASSERT_EQ(::unlink(index.c_str()), 0);
  ASSERT_EQ(::mkdir(index.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((index + "/x").c_str(), 0700), 0);  // not removable by unlink or rmdir
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_NO_FATAL_FAILURE(OpenDb(&db));
    EXPECT_EQ(db->index_stats().opened_from, IndexSource::kScan);
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(100), Value(100, 0)).ok());
    std::map<std::string, std::string> held;
    ASSERT_NO_FATAL_FAILURE(ExpectGetMatchesLevelDB(db.get(), "open", &held));
    EXPECT_FALSE(db->SaveIndex().ok());
  }
  EXPECT_TRUE(Leftovers(path_).empty());
  const leveldb::Status destroyed = DestroyFilteredDB(path_, leveldb::Options());
  EXPECT_TRUE(destroyed.IsIOError()) << destroyed.ToString();
  EXPECT_TRUE(Exists(path_ + "/CURRENT"));
  ASSERT_EQ(::rmdir((index + "/x").c_str()), 0);
  ASSERT_EQ(::rmdir(index.c_str()), 0);
  ASSERT_NO_FATAL_FAILURE(ExpectReopenMatchesPlainLevelDB(path_, IndexSource::kScan));
  EXPECT_TRUE(DestroyFilteredDB(path_, leveldb::Options()).ok());
  EXPECT_FALSE(Exists(path_));
}

// A short write of the index file (the file-size limit reached mid-file:
// write() stores part, then EFBIG) fails the save and removes the
// temporary; with the disk working again, the save at close is good and
// used.
TEST_F(DiskFaultTest, ShortWriteOfTheIndexFileFailsTheSave) {
  std::unique_ptr<FilteredDB> db;
  ASSERT_NO_FATAL_FAILURE(OpenDb(&db));
  // An index file of several pages (the limit below cuts it mid-file).
  for (uint64_t i = 0; i < 2000; ++i) {
    ASSERT_TRUE(db->Put(leveldb::WriteOptions(), Key(i), "small").ok());
  }
  db->WaitForGrowth();
  ASSERT_GT(db->index_stats().memory_bytes, 4096u);
  struct rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct sigaction ignore = {}, old_action;
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old_action), 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 2048;  // less than half the file
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  const leveldb::Status s = db->SaveIndex();
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  ASSERT_EQ(::sigaction(SIGXFSZ, &old_action, nullptr), 0);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_FALSE(Exists(path_ + "/BLOCKBLOOM-INDEX"));
  EXPECT_TRUE(Leftovers(path_).empty());
  db.reset();  // saves
  ASSERT_NO_FATAL_FAILURE(ExpectReopenMatchesPlainLevelDB(path_, IndexSource::kFile));
}

// A write whose log sync fails is in LevelDB's log but not in its memory
// (LevelDB: it "may or may not show up when the DB is re-opened"). A
// rebuild, which scans LevelDB's memory, drops its key; the index must then
// never be saved, or the next Open would load an index that rules out a key
// LevelDB recovers from the log.
TEST_F(DiskFaultTest, AFailedSyncIsNeverSavedAsAbsent) {
#if BLOCKBLOOM_UNDER_SANITIZER
  GTEST_SKIP() << "fdatasync is interposed only without sanitizers";
#else
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_NO_FATAL_FAILURE(OpenDb(&db));
    ASSERT_NO_FATAL_FAILURE(PutKeys(db.get(), 0, 100));
    leveldb::WriteOptions sync;
    sync.sync = true;
    g_fail_syncs = true;
    const leveldb::Status failed = db->Put(sync, Key(100), Value(100, 0));
    g_fail_syncs = false;
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(db->index_stats().failed_writes, 1u);
    ASSERT_TRUE(db->RebuildIndex().ok());  // LevelDB's memory: without Key(100)
    const leveldb::Status saved = db->SaveIndex();
    EXPECT_TRUE(saved.IsIOError()) << saved.ToString();
    EXPECT_FALSE(Exists(path_ + "/BLOCKBLOOM-INDEX"));
  }  // no save at close either
  EXPECT_FALSE(Exists(path_ + "/BLOCKBLOOM-INDEX"));
  ASSERT_NO_FATAL_FAILURE(ExpectReopenMatchesPlainLevelDB(path_, IndexSource::kScan));
  std::map<std::string, std::string> plain;
  ASSERT_NO_FATAL_FAILURE(ReadWithPlainLevelDB(path_, &plain));
  EXPECT_EQ(plain.count(Key(100)), 1u) << "LevelDB recovered the write from its log";
#endif
}

// An open LevelDB refuses (here error_if_exists) leaves the saved index in
// place: the next Open loads it instead of scanning.
TEST_F(DiskFaultTest, ARefusedOpenKeepsTheSavedIndex) {
  {
    std::unique_ptr<FilteredDB> db;
    ASSERT_NO_FATAL_FAILURE(OpenDb(&db));
    ASSERT_NO_FATAL_FAILURE(PutKeys(db.get(), 0, 100));
  }
  ASSERT_TRUE(Exists(path_ + "/BLOCKBLOOM-INDEX"));
  {
    std::unique_ptr<FilteredDB> db;
    leveldb::Options options;
    options.error_if_exists = true;
    const leveldb::Status s = FilteredDB::Open(FilteredDBOptions(), options, path_, &db);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_EQ(db, nullptr);
  }
  EXPECT_TRUE(Exists(path_ + "/BLOCKBLOOM-INDEX"));
  ASSERT_NO_FATAL_FAILURE(ExpectReopenMatchesPlainLevelDB(path_, IndexSource::kFile));
}

// A database with a damaged table, which plain LevelDB opens and serves
// (the damaged block's keys answer Corruption), opens as a FilteredDB too:
// its scan cannot read the table, so every Get passes through and answers
// as plain LevelDB does; RebuildIndex() reports LevelDB's error.
TEST_F(DiskFaultTest, ADamagedTableOpensPassingThrough) {
  ASSERT_NO_FATAL_FAILURE(ExpectADamagedTableOpensPassingThrough(
      [](std::FILE* f, uintmax_t size) {
        // 4 KiB of junk a third of the way in: a block's checksum fails.
        ASSERT_EQ(std::fseek(f, static_cast<long>(size / 3), SEEK_SET), 0);
        const std::string junk(4096, '\xff');
        ASSERT_EQ(std::fwrite(junk.data(), 1, junk.size(), f), junk.size());
      },
      /*corruption=*/true));
}

// The same for a table cut short, which LevelDB's memory-mapped reader
// reports as an IOError of EINVAL (a read past the end), not Corruption.
TEST_F(DiskFaultTest, ATableCutShortOpensPassingThrough) {
  ASSERT_NO_FATAL_FAILURE(ExpectADamagedTableOpensPassingThrough(
      [](std::FILE* f, uintmax_t size) {
        ASSERT_EQ(::ftruncate(::fileno(f), static_cast<off_t>(size - 10)), 0);
      },
      /*corruption=*/false));
}

void DiskFaultTest::ExpectADamagedTableOpensPassingThrough(
    const std::function<void(std::FILE*, uintmax_t)>& damage, bool corruption) {
  leveldb::Options options;
  options.create_if_missing = true;
  options.compression = leveldb::kNoCompression;
  constexpr uint64_t kKeys = 4000;
  {
    leveldb::DB* raw = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(options, path_, &raw).ok());
    std::unique_ptr<leveldb::DB> plain(raw);
    for (uint64_t i = 0; i < kKeys; ++i) {
      ASSERT_TRUE(plain->Put(leveldb::WriteOptions(), Key(i), Value(i, 0)).ok());
    }
    plain->CompactRange(nullptr, nullptr);  // into tables
  }
  std::string table;
  uintmax_t table_size = 0;
  for (const auto& e : std::filesystem::directory_iterator(path_)) {
    if (e.path().extension() == ".ldb" && e.file_size() > table_size) {
      table = e.path().string();
      table_size = e.file_size();
    }
  }
  ASSERT_GT(table_size, 16384u);
  {
    std::FILE* f = std::fopen(table.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    damage(f, table_size);
    ASSERT_EQ(std::fclose(f), 0);
  }
  // Plain LevelDB's answers, key by key.
  std::vector<leveldb::Status> expected(kKeys);
  std::vector<std::string> expected_value(kKeys);
  {
    leveldb::DB* raw = nullptr;
    ASSERT_TRUE(leveldb::DB::Open(leveldb::Options(), path_, &raw).ok());
    std::unique_ptr<leveldb::DB> plain(raw);
    for (uint64_t i = 0; i < kKeys; ++i) {
      expected[i] = plain->Get(leveldb::ReadOptions(), Key(i), &expected_value[i]);
    }
  }
  uint64_t unreadable = 0;
  for (const leveldb::Status& s : expected) unreadable += s.ok() ? 0 : 1;
  ASSERT_GT(unreadable, 0u) << "the damage reaches a block";
  ASSERT_LT(unreadable, kKeys);
  std::unique_ptr<FilteredDB> db;
  const leveldb::Status opened =
      FilteredDB::Open(FilteredDBOptions(), leveldb::Options(), path_, &db);
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  EXPECT_FALSE(db->index_stats().index_active);
  for (uint64_t i = 0; i < kKeys; ++i) {
    std::string value;
    const leveldb::Status s = db->Get(leveldb::ReadOptions(), Key(i), &value);
    ASSERT_EQ(s.ToString(), expected[i].ToString()) << Key(i);
    if (s.ok()) ASSERT_EQ(value, expected_value[i]) << Key(i);
  }
  const leveldb::Status rebuilt = db->RebuildIndex();
  EXPECT_EQ(rebuilt.IsCorruption(), corruption) << rebuilt.ToString();
  EXPECT_EQ(rebuilt.IsIOError(), !corruption) << rebuilt.ToString();
  EXPECT_FALSE(db->index_stats().index_active);
}

}  // namespace
}  // namespace blockbloom
