// Every public header, compiled by the compiler this build was NOT configured
// with (ctest public_headers_other_compiler: clang in a g++ build, g++ in a
// clang one), with -march=native where taken, so that the inline probe is
// compiled for this CPU's static target. blockbloom builds with both
// compilers (the sanitizer presets use clang-14), and users include these
// headers with either: a construct only one of them accepts (clang-14
// rejects a GNU attribute before alignas, "an attribute list cannot appear
// here") would otherwise surface only in the sanitizer builds or at a user's.
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/blocked_bloom_inline.h"
#include "blockbloom/c.h"
#include "blockbloom/compact_filter.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/counting_bloom.h"
#include "blockbloom/dleft_counting_bloom.h"
#include "blockbloom/filter_file.h"
#include "blockbloom/filter_format.h"
#include "blockbloom/filter_stats.h"
#include "blockbloom/filtered_db.h"
#include "blockbloom/hash.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "blockbloom/math.h"
#include "blockbloom/partitioned_bloom.h"
#include "blockbloom/scalable_bloom.h"
#include "blockbloom/set_ops.h"
#include "blockbloom/standard_bloom.h"

// The inline probe, used, so that its body is checked for the static target.
bool PublicHeadersCheckProbe(const blockbloom::BlockedBloomFilter& filter, uint64_t hash) {
  return blockbloom::InlineMayContainHash(filter, hash);
}
