// FilteredDB's lock on <db>/LOCK (db_lock.h).
#include "filtered_db/db_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace blockbloom {
namespace filtered_db {
namespace {

// Locking <db>/LOCK. POSIX record locks belong to the process, not to a
// descriptor: a process's own locks never conflict with each other, and
// closing ANY descriptor of the file drops ALL of the process's locks on it.
// So a second LevelDB of this process would open under the first one's lock,
// and closing a descriptor of LOCK would leave another LevelDB of the process
// open without a lock (another process could then open the database too: two
// writers). LevelDB guards against the first with its Env's in-process table
// of locked file names, but not against the second: PosixEnv::LockFile,
// asked for a name its table holds, closes the descriptor it just opened
// (LevelDB 1.23 util/env_posix.cc), which drops the holder's lock.
//
// Hence FilteredDB's rules: its only lock is LevelDB's own (Env::LockFile:
// table entry and POSIX lock together), which it never lets go of while its
// index is validated, in use or saved; it closes no descriptor of LOCK
// itself; and it asks LevelDB for the lock only when no FilteredDB of this
// process holds the database (LockedDirs), repairing the damage when a plain
// LevelDB of the process does (RestoreLockAfterInProcessRefusal).

// The database directories a FilteredDB of this process holds (DbLock), by
// identity (DirKey): "db" and "db/" or "./db" are one directory.
std::mutex& LockedDirsMu() {
  static std::mutex mu;
  return mu;
}
std::set<std::string>& LockedDirs() {
  static auto* dirs = new std::set<std::string>();  // never destroyed: used at exit
  return *dirs;
}

// A directory's identity, device and inode, whatever name reaches it; the
// name itself where it cannot be read (LevelDB's open then fails anyway).
std::string DirKey(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return "name:" + dir;
  return "inode:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

// Another FilteredDB of this process holds `dir`: the refusal, worded as
// LevelDB words its own (IsInProcessRefusal).
leveldb::Status HeldByProcess(const std::string& dir) {
  return leveldb::Status::IOError("lock " + dir + "/LOCK", "already held by process");
}

// How LevelDB 1.23's PosixEnv words the in-process refusal of a lock.
bool IsInProcessRefusal(const leveldb::Status& s) {
  return s.IsIOError() && s.ToString().find("already held by process") != std::string::npos;
}

}  // namespace

// Whether LevelDB runs on Env::Default(), the real file system: the only one
// where FilteredDB keeps index files and locks <db>/LOCK itself.
bool UsesDefaultEnv(const leveldb::Options& options) {
  return options.env == nullptr || options.env == leveldb::Env::Default();
}

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
void RestoreLockAfterInProcessRefusal(const std::string& dir, const leveldb::Status& s) {
  if (!IsInProcessRefusal(s)) return;
  const int fd = ::open((dir + "/LOCK").c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  struct flock f = {};
  f.l_type = F_WRLCK;
  f.l_whence = SEEK_SET;
  (void)::fcntl(fd, F_SETLK, &f);                  // fails only if another process holds it now
  static std::mutex kept_mu;                       // (callers may hold LockedDirsMu)
  static auto* kept_fds = new std::vector<int>();  // never freed, never closed
  std::lock_guard<std::mutex> lock(kept_mu);
  kept_fds->push_back(fd);
}

leveldb::Status DbLock::Acquire(const std::string& dir) {
  const std::string lock_name = dir + "/LOCK";
  const std::string key = DirKey(dir);
  std::lock_guard<std::mutex> lock(LockedDirsMu());
  // Another FilteredDB of this process holds it, under any name: refused
  // here, without asking LevelDB (whose refusal would drop the holder's
  // lock, and whose table, by name, would let an alias in).
  if (LockedDirs().count(key) != 0) return HeldByProcess(dir);
  leveldb::Status s = leveldb::Env::Default()->LockFile(lock_name, &env_.held);
  if (!s.ok()) {
    env_.held = nullptr;
    RestoreLockAfterInProcessRefusal(dir, s);
    return s;
  }
  env_.lock_name = lock_name;
  dir_key_ = key;
  LockedDirs().insert(key);
  return s;
}

leveldb::Status DbLock::Reserve(const std::string& dir) {
  const std::string key = DirKey(dir);
  std::lock_guard<std::mutex> lock(LockedDirsMu());
  if (LockedDirs().count(key) != 0) return HeldByProcess(dir);
  dir_key_ = key;
  LockedDirs().insert(key);
  return leveldb::Status::OK();
}

leveldb::Status DbLock::RefuseIfHeld(const std::string& dir) {
  const std::string key = DirKey(dir);
  std::lock_guard<std::mutex> lock(LockedDirsMu());
  return LockedDirs().count(key) != 0 ? HeldByProcess(dir) : leveldb::Status::OK();
}

void DbLock::Release() {
  if (dir_key_.empty()) return;  // neither acquired nor reserved
  assert(!env_.lent);
  // Under the mutex: an Acquire of this directory by another FilteredDB
  // waits, rather than finding it in LockedDirs a moment after it is free.
  std::lock_guard<std::mutex> lock(LockedDirsMu());
  if (env_.held != nullptr) {  // Acquire's (Reserve took no file lock)
    (void)leveldb::Env::Default()->UnlockFile(env_.held);
    env_.held = nullptr;
  }
  LockedDirs().erase(dir_key_);
  dir_key_.clear();
}

}  // namespace filtered_db
}  // namespace blockbloom
