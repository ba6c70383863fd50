// libblockbloom_preload.so: blockbloom's filters for LevelDB programs that
// cannot be rebuilt.
//
//   LD_PRELOAD=/usr/local/lib/libblockbloom_preload.so program ...
//
// defines leveldb::NewBloomFilterPolicy(int), the call by which every program
// linking a shared libleveldb asks for LevelDB's built-in Bloom filter, ahead
// of libleveldb's own definition: the program gets blockbloom's migrating
// policy instead, which answers to the built-in's name, reads the built-in
// filters of tables already written exactly as LevelDB does, and writes
// filters that stock LevelDB reads as "may match" (docs/PRELOAD.md: why a
// database stays correct with and without the preload).
//
// Configuration, read from the environment once, at the first call:
//   BLOCKBLOOM_PRELOAD=off               LevelDB's own policy (also "0")
//   BLOCKBLOOM_PRELOAD_POLICY=blocked    migrating blocked Bloom (default)
//                            =compact    migrating compact
//   BLOCKBLOOM_PRELOAD_BITS_PER_KEY=N    N bits/key (a number in [1, 64])
//                                        instead of the program's
//   BLOCKBLOOM_PRELOAD_REPORT=1          one line on stderr at the first call
// A value not understood never changes the program's filters: that process
// gets LevelDB's own policy and one line on stderr saying why.
//
// Only leveldb::NewBloomFilterPolicy(int) is exported (preload.map). In a
// static build blockbloom's own symbols stay inside this library, so they
// cannot replace those of a program or library that links another
// blockbloom; a shared build links libblockbloom_*.so.X.Y instead, whose
// symbols carry their version's node, BLOCKBLOOM_X.Y (docs/PRELOAD.md). Nothing in
// blockbloom calls leveldb::NewBloomFilterPolicy (the migrating policies
// read built-in filters with their own reader, format/leveldb_bloom.h), so a
// call can never come back here.
//
// Thread-safety: NewBloomFilterPolicy may be called from any thread; the
// configuration is read and reported exactly once.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "blockbloom/blocked_bloom.h"
#include "blockbloom/compact_filter_policy.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "leveldb/filter_policy.h"

namespace blockbloom {
namespace preload {
namespace {

// The mangled name of leveldb::NewBloomFilterPolicy(int).
constexpr char kSymbol[] = "_ZN7leveldb20NewBloomFilterPolicyEi";
using NewPolicyFn = const leveldb::FilterPolicy* (*)(int);

enum class Choice { kBuiltin, kBlocked, kCompact };

struct Config {
  Choice choice = Choice::kBlocked;
  double bits_per_key = 0;  // 0: the program's own
  bool report = false;
  std::string why_builtin;  // why kBuiltin, for the report
  NewPolicyFn builtin = nullptr;
};

bool IsSet(const char* value) { return value != nullptr && value[0] != '\0'; }

bool Is(const char* value, const char* word) { return std::strcmp(value, word) == 0; }

// A plain decimal number (digits with at most one point, nothing else: no
// sign, spaces, exponent, hex, inf or nan, which std::strtod would take),
// read without the locale (std::strtod follows LC_NUMERIC: under a locale
// with a decimal comma it read "9.5" as 9). False if `value` is not one.
bool ParsePlainDecimal(const char* value, double* out) {
  double result = 0, scale = 1;
  bool digit = false, point = false;
  for (const char* p = value; *p != '\0'; ++p) {
    if (*p >= '0' && *p <= '9') {
      digit = true;
      if (point) {
        scale /= 10;
        result += (*p - '0') * scale;
      } else {
        result = result * 10 + (*p - '0');
      }
    } else if (*p == '.' && !point) {
      point = true;
    } else {
      return false;
    }
  }
  *out = result;
  return digit;
}

// Every variable is checked, whatever the others say: a value not
// understood gets LevelDB's own policy and one line on stderr naming it
// (the first such), as docs/PRELOAD.md promises.
Config ReadConfig() {
  Config c;
  // The next definition after this library's: libleveldb's own.
  c.builtin = reinterpret_cast<NewPolicyFn>(dlsym(RTLD_NEXT, kSymbol));
  const char* report = std::getenv("BLOCKBLOOM_PRELOAD_REPORT");
  const char* on = std::getenv("BLOCKBLOOM_PRELOAD");
  const char* policy = std::getenv("BLOCKBLOOM_PRELOAD_POLICY");
  const char* bits = std::getenv("BLOCKBLOOM_PRELOAD_BITS_PER_KEY");
  std::string error;
  const auto fail = [&](const char* name, const char* value, const char* why) {
    if (error.empty()) error = std::string(name) + "=" + value + " " + why;
  };
  c.report = IsSet(report) && Is(report, "1");
  if (IsSet(report) && !Is(report, "1") && !Is(report, "0")) {
    fail("BLOCKBLOOM_PRELOAD_REPORT", report, "is not 1 or 0");
  }
  const bool off = IsSet(on) && (Is(on, "off") || Is(on, "0"));
  if (IsSet(on) && !off && !Is(on, "on") && !Is(on, "1")) {
    fail("BLOCKBLOOM_PRELOAD", on, "is not on, 1, off or 0");
  }
  if (IsSet(policy) && Is(policy, "compact")) {
    c.choice = Choice::kCompact;
  } else if (IsSet(policy) && !Is(policy, "blocked")) {
    fail("BLOCKBLOOM_PRELOAD_POLICY", policy, "is not blocked or compact");
  }
  if (IsSet(bits)) {
    double value = 0;
    if (ParsePlainDecimal(bits, &value) && value >= 1 && value <= 64) {
      c.bits_per_key = value;
    } else {
      fail("BLOCKBLOOM_PRELOAD_BITS_PER_KEY", bits, "is not a number in [1, 64]");
    }
  }
  if (!error.empty()) {
    c.choice = Choice::kBuiltin;
    c.why_builtin = error;
    std::fprintf(stderr, "blockbloom-preload: %s: using LevelDB's built-in filter\n",
                 error.c_str());
  } else if (off) {
    c.choice = Choice::kBuiltin;
    c.why_builtin = std::string("BLOCKBLOOM_PRELOAD=") + on;
  }
  return c;
}

const Config& GetConfig() {
  static const Config config = ReadConfig();
  return config;
}

void Report(const Config& c, int requested, double used) {
  if (!c.report) return;
  if (c.choice == Choice::kBuiltin) {
    std::fprintf(stderr,
                 "blockbloom-preload: leveldb::NewBloomFilterPolicy(%d) -> LevelDB's built-in "
                 "(%s)\n",
                 requested, c.why_builtin.c_str());
    return;
  }
  std::fprintf(stderr,
               "blockbloom-preload: leveldb::NewBloomFilterPolicy(%d) -> blockbloom migrating %s, "
               "%g bits/key%s\n",
               requested, c.choice == Choice::kCompact ? "compact" : "blocked", used,
               c.bits_per_key > 0 ? " (BLOCKBLOOM_PRELOAD_BITS_PER_KEY)" : "");
}

}  // namespace
}  // namespace preload
}  // namespace blockbloom

namespace leveldb {

const FilterPolicy* NewBloomFilterPolicy(int bits_per_key) {
  using blockbloom::preload::Choice;
  const blockbloom::preload::Config& c = blockbloom::preload::GetConfig();
  const double used = c.bits_per_key > 0 ? c.bits_per_key : bits_per_key;
  static std::once_flag reported;
  // The report shows what the policy uses: it clamps bits/key into [1, 64].
  std::call_once(reported, [&] {
    blockbloom::preload::Report(c, bits_per_key, blockbloom::ClampBitsPerKey(used));
  });
  switch (c.choice) {
    case Choice::kBuiltin:
      if (c.builtin != nullptr) return c.builtin(bits_per_key);
      // No libleveldb after this library in the lookup order (it links
      // one, so only a broken installation gets here): blockbloom's policy
      // is the safe stand-in.
      return blockbloom::NewMigratingFilterPolicy(bits_per_key);
    case Choice::kCompact:
      return blockbloom::NewMigratingCompactFilterPolicy(used);
    case Choice::kBlocked:
      break;
  }
  return blockbloom::NewMigratingFilterPolicy(used);
}

}  // namespace leveldb
