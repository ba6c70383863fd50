// Opens a LevelDB database with blockbloom's policy, as the README shows.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/blocked_bloom_inline.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "leveldb/db.h"

int main() {
  const std::string path =
      (std::filesystem::temp_directory_path() / "blockbloom_consumer_db").string();
  leveldb::DestroyDB(path, leveldb::Options());
  std::unique_ptr<const leveldb::FilterPolicy> policy(blockbloom::NewBlockedBloomFilterPolicy(10));
  leveldb::Options options;
  options.create_if_missing = true;
  options.filter_policy = policy.get();
  leveldb::DB* raw = nullptr;
  if (!leveldb::DB::Open(options, path, &raw).ok()) return 1;
  std::unique_ptr<leveldb::DB> db(raw);
  for (int i = 0; i < 1000; ++i) db->Put(leveldb::WriteOptions(), "key" + std::to_string(i), "v");
  db->CompactRange(nullptr, nullptr);
  std::string value;
  for (int i = 0; i < 1000; ++i) {
    if (!db->Get(leveldb::ReadOptions(), "key" + std::to_string(i), &value).ok()) return 2;
  }
  if (!db->Get(leveldb::ReadOptions(), "absent", &value).IsNotFound()) return 3;
  db.reset();
  leveldb::DestroyDB(path, leveldb::Options());
  // The inline probe (installed kernel headers, Highway from the package).
  auto filter = blockbloom::BlockedBloomFilter::Create(100, 10.0);
  if (!filter.ok()) return 4;
  filter->AddKey("present");
  if (!blockbloom::InlineMayContain(*filter, "present")) return 5;
  std::printf("consumer: ok (%s)\n", policy->Name());
  return 0;
}
