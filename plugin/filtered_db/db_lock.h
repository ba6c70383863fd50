// FilteredDB's hold on <db>/LOCK and the Env that lends it to LevelDB
// (docs/FILTERED_DB.md, "Persisted index", point 4).
// Thread-safety: DbLock is used by one thread at a time (the one opening or
// closing its FilteredDB); the functions are safe from any thread.
#ifndef BLOCKBLOOM_FILTERED_DB_DB_LOCK_H_
#define BLOCKBLOOM_FILTERED_DB_DB_LOCK_H_

#include <string>

#include "leveldb/env.h"
#include "leveldb/options.h"
#include "leveldb/status.h"

namespace blockbloom {
namespace filtered_db {

// Whether LevelDB runs on Env::Default(), the real file system: the only one
// where FilteredDB keeps index files and locks <db>/LOCK itself.
bool UsesDefaultEnv(const leveldb::Options& options);

// `s` is a failed Env::Default()->LockFile of <dir>/LOCK (FilteredDB's, or
// inside LevelDB's Open). If LevelDB refused it because its in-process table
// holds the file, LevelDB's descriptor close just dropped the lock of the
// LevelDB that holds it: take the lock again for the process, through a
// descriptor that is never closed (closing it would drop the lock again,
// whoever holds it by then), so no other process can open the database under
// the holder. The holder's close releases it as before (its UnlockFile
// unlocks the process's lock). Cost: one descriptor for the process's life
// per such refused open (opening a database this process has open is a
// misuse; FilteredDBs are refused before LevelDB is asked, see DbLock). If
// another process took the lock in the moment between, nothing can be done;
// if the holder closed in that moment, the process keeps a lock nobody
// releases until a LevelDB of this process opens and closes the database
// (or the process exits): other processes are refused, never let in.
void RestoreLockAfterInProcessRefusal(const std::string& dir, const leveldb::Status& s);

// FilteredDB's hold on a database: LevelDB's lock on <db>/LOCK, taken before
// the index file is validated and released after it is saved at close. In
// between LevelDB borrows it: LevelDB is opened with env(), which hands it the
// held lock when it asks for <db>/LOCK and takes it back, still held, when
// LevelDB unlocks it at its close. So from Acquire to Release no other opener
// of the database, another process or another thread of this one, gets in
// (an in-process one is refused by LevelDB's table, which has the name all
// along): the index cannot be validated, used or saved while anybody else
// writes. (It once held its own POSIX lock on a raw descriptor beside
// LevelDB's, released at LevelDB's close and re-taken after it: in that window
// a plain LevelDB of this process could open the database, and closing the
// raw descriptor then dropped that LevelDB's lock.)
class DbLock {
 public:
  DbLock() = default;
  DbLock(const DbLock&) = delete;
  DbLock& operator=(const DbLock&) = delete;
  ~DbLock() { Release(); }

  // OK: held. Otherwise what LevelDB's Open would report, and nothing held.
  leveldb::Status Acquire(const std::string& dir);
  // For a FilteredDB that leaves <dir>/LOCK to LevelDB (no persisted index):
  // records the directory as one a FilteredDB of this process holds, without
  // locking the file, so that another FilteredDB's open of it under any name
  // is refused as Acquire refuses it. OK, or the IOError Acquire would give.
  leveldb::Status Reserve(const std::string& dir);
  // REQUIRES: LevelDB is closed (or never opened) on this directory.
  void Release();
  // The IOError Acquire gives if a FilteredDB of this process holds (or
  // reserved) `dir`, under any of its names; else OK.
  static leveldb::Status RefuseIfHeld(const std::string& dir);
  // Env::Default(), lending the held lock. REQUIRES: held.
  leveldb::Env* env() { return &env_; }

 private:
  // LevelDB asks for the lock once at Open (LockFile of dbname + "/LOCK",
  // exactly the name Acquire locked) and gives it back once at close or
  // after a failed Open; both on the thread that opens or closes the
  // FilteredDB. Any other lock request goes to Env::Default().
  struct LendingEnv : public leveldb::EnvWrapper {
    LendingEnv() : EnvWrapper(leveldb::Env::Default()) {}
    leveldb::Status LockFile(const std::string& name, leveldb::FileLock** lock) override {
      if (held != nullptr && !lent && name == lock_name) {
        lent = true;
        *lock = held;
        return leveldb::Status::OK();
      }
      return target()->LockFile(name, lock);
    }
    leveldb::Status UnlockFile(leveldb::FileLock* lock) override {
      if (lent && lock == held) {
        lent = false;  // back to the DbLock, still locked
        return leveldb::Status::OK();
      }
      return target()->UnlockFile(lock);
    }
    std::string lock_name;
    leveldb::FileLock* held = nullptr;
    bool lent = false;
  };

  LendingEnv env_;
  std::string dir_key_;  // DirKey of the held or reserved directory; empty: none
};

}  // namespace filtered_db
}  // namespace blockbloom

#endif  // BLOCKBLOOM_FILTERED_DB_DB_LOCK_H_
