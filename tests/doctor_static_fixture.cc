// A program with LevelDB linked in statically (libleveldb.a), for
// `blockbloom doctor` (tests/cli_test.cc): its leveldb::NewBloomFilterPolicy
// call binds inside the program, where no preloaded library can replace it.
#include <memory>

#include "leveldb/filter_policy.h"

int main() {
  const std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
  return policy->Name()[0] == 'l' ? 0 : 1;
}
