// FilteredDB's index file: SaveIndex(), the close-time save and the check
// that nobody wrote since LevelDB's close, and the validated load at Open
// (docs/FILTERED_DB.md, "Persisted index"; the layout is index_file.cc's).
#include "filtered_db/filtered_db_impl.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace blockbloom {

using namespace filtered_db;  // NOLINT: this library's own internals

namespace {

// A LevelDB write-ahead log (<number>.log): what every write appends to.
bool IsLogFile(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".log") == 0;
}

}  // namespace

leveldb::Status FilteredDB::Impl::Save() {
  if (!persist) return leveldb::Status::NotSupported("FilteredDB: persist_index is off");
  if (opener != ::getpid()) {
    return leveldb::Status::InvalidArgument(
        "FilteredDB: SaveIndex in a process forked from the one that opened the database (its "
        "index is a copy from the fork)");
  }
  std::lock_guard<std::mutex> save_lock(save_mu);
  filtered_db::IndexFileContents contents;
  {
    std::lock_guard<std::mutex> lock(write_mu);
    if (current == nullptr) {
      return leveldb::Status::InvalidArgument("FilteredDB: index saturated, nothing to save");
    }
    if (failed_writes != 0) {
      // Such a write may come back from LevelDB's log at the next Open,
      // and a rebuild since may have dropped its keys (write_path.cc).
      return leveldb::Status::IOError(
          "FilteredDB: a write failed in this session; it may reappear when LevelDB reopens, so "
          "the next Open scans instead of loading a saved index");
    }
    // No write is in flight (they hold write_mu): the index is a superset of
    // the live keys of the database the listing describes.
    current->Serialize(&contents.payload);
    auto listing = filtered_db::ListDbDir(name);
    if (!listing.ok()) return leveldb::Status::IOError(name, listing.status().ToString());
    contents.listing = std::move(listing).value();
  }
  const absl::Status s = filtered_db::WriteIndexFile(name, contents);
  if (!s.ok()) return leveldb::Status::IOError(name, s.ToString());
  std::lock_guard<std::mutex> lock(write_mu);
  ++saves;
  return leveldb::Status::OK();
}

std::unique_ptr<KeyIndex> FilteredDB::Impl::LoadIndexFile() {
  std::unique_ptr<KeyIndex> loaded;
  auto file = filtered_db::ReadIndexFile(name);
  if (file.ok()) {
    auto listing = filtered_db::ListDbDir(name);
    if (listing.ok() && *listing == file->listing) {
      auto index = KeyIndex::Deserialize(file->payload);
      // Built for these options (another target_fpr may need other cells).
      if (index.ok() && (*index)->kind() == options.kind &&
          (*index)->BuiltFor(options.target_fpr)) {
        loaded = std::move(index).value();
      }
    }
  }
  return loaded;
}

bool FilteredDB::Impl::RemoveIndexFileAfterOpen() {
  // Used at most once: the session changes the directory, and a crash from
  // here on must find no index (it would not match anyway). Removed only
  // once LevelDB has opened: a refused open (error_if_exists, a bad option,
  // an unreadable MANIFEST) leaves the file for the next Open, which checks
  // it against the directory as it then is.
  return filtered_db::RemoveIndexFile(name).ok();
}

bool FilteredDB::Impl::ListLogs(std::vector<filtered_db::DirEntry>* logs) {
  auto listing = filtered_db::ListDbDir(name);
  if (!listing.ok()) return false;
  for (filtered_db::DirEntry& e : *listing) {
    if (IsLogFile(e.name)) logs->push_back(std::move(e));
  }
  return true;
}

void FilteredDB::Impl::SaveAtClose(std::string payload,
                                   const std::vector<filtered_db::DirEntry>& logs_at_close) {
  // The lock keeps every opener out, unless it was dropped under us: a
  // failed open of this database elsewhere in this process (LevelDB's
  // in-process refusal closes a descriptor of LOCK, dropping the process's
  // lock; see RestoreLockAfterInProcessRefusal), or an opener that names
  // the directory differently (LevelDB's table goes by the name, and this
  // process's own POSIX locks never conflict). Such an opener's writes
  // would be in the listing but not in the index, so save only if there
  // was none: LevelDB with reuse_logs = false (the default) writes a new
  // CURRENT on every open, and every write goes to a log, which is then new
  // or longer (an opener with reuse_logs = true keeps CURRENT and appends to
  // the last log). So: CURRENT as right after our open, and every log now
  // is one of ours, unchanged. (An opener after this check changes CURRENT
  // or a log after the listing was taken, so the next Open rejects the
  // file.)
  auto listing = filtered_db::ListDbDir(name);
  const std::string current_now = filtered_db::ReadCurrent(name);
  const auto ours = [&](const filtered_db::DirEntry& e) {
    return !IsLogFile(e.name) ||
           std::find(logs_at_close.begin(), logs_at_close.end(), e) != logs_at_close.end();
  };
  if (listing.ok() && !current_now.empty() && current_now == current_at_open &&
      std::all_of(listing->begin(), listing->end(), ours)) {
    filtered_db::IndexFileContents contents{std::move(listing).value(), std::move(payload)};
    (void)filtered_db::WriteIndexFile(name, contents);  // failure: no file, next Open scans
  }
}

leveldb::Status FilteredDB::SaveIndex() { return impl_->Save(); }

}  // namespace blockbloom
