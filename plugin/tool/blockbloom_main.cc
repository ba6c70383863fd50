// blockbloom: size, build, query and inspect Bloom filters from the shell.
//
//   blockbloom calc --keys 1e9 --fpr 0.01
//   blockbloom calc --keys 1e9 --bits_per_key 10
//   blockbloom build --fpr 0.01 keys.txt -o seen.bbf
//   blockbloom query seen.bbf < candidates.txt
//   blockbloom inspect /path/to/leveldb
//   blockbloom doctor /usr/bin/program
//
// Exit status: 0 success; 1 bad usage or input (message on stderr); 2 an I/O
// or filter-file error; 3 (inspect) some tables could not be read (each is
// reported, the others are still inspected); 4 (doctor) the preload library
// cannot reach the file's LevelDB filter.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>  // mkostemp
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/c.h"
#include "blockbloom/compact_filter.h"
#include "blockbloom/filter_file.h"
#include "blockbloom/hash.h"
#include "blockbloom/math.h"
#include "blockbloom/partitioned_bloom.h"
#include "blockbloom/scalable_bloom.h"
#include "blockbloom/standard_bloom.h"
#include "elf_doctor.h"
#include "manifest.h"
#include "sstable_inspect.h"

ABSL_FLAG(double, keys, 0, "calc: number of keys (accepts 1e9)");
ABSL_FLAG(double, fpr, 0.01, "calc, build: target false-positive rate, in (0, 1)");
ABSL_FLAG(double, bits_per_key, 0,
          "calc, build: bits per key in [1, 64] instead of --fpr (not scalable)");
ABSL_FLAG(std::string, structure, "blocked",
          "build: blocked | standard | standard-double | partitioned | scalable");
ABSL_FLAG(std::string, o, "", "build: output filter file (same as --output)");
ABSL_FLAG(std::string, output, "", "build: output filter file");
ABSL_FLAG(bool, progress, false, "build, query: show a progress bar even when stderr is not a tty");
ABSL_FLAG(std::string, print, "maybe",
          "query: which candidates to print: maybe (may be in the set) | absent | none");
ABSL_FLAG(bool, absent, false,
          "query: the candidates are known not to be in the set; report the measured FPR");

namespace blockbloom {
namespace tool {
namespace {

constexpr int kExitUsage = 1, kExitIo = 2, kExitDamaged = 3, kExitNotReached = 4;

// ---- usage ----

constexpr char kMainUsage[] =
    "usage: blockbloom <command> [flags] [args]\n"
    "\n"
    "commands:\n"
    "  calc     bits, bytes and k of each structure for --keys and --fpr\n"
    "  build    build a filter file from keys, one per line\n"
    "  query    test candidates, one per line, against a filter file\n"
    "  inspect  report the filters of every table of a LevelDB database\n"
    "  doctor   whether libblockbloom_preload.so reaches a program's LevelDB filter\n"
    "\n"
    "`blockbloom <command> --help` describes a command; `blockbloom --version`\n"
    "prints the library's version.\n";

struct Command {
  const char* name;
  const char* usage;
  std::vector<std::string> flags;
};

const std::vector<Command>& Commands() {
  static const auto* commands = new std::vector<Command>{
      {"calc",
       "usage: blockbloom calc --keys N [--fpr P | --bits_per_key B]\n"
       "\n"
       "Prints, for N keys at target false-positive rate P (default 0.01), the bits,\n"
       "bytes, bits per key and probes k of a standard, partitioned, blocked and\n"
       "scalable (first stage) Bloom filter and of a compact filter, and each one's\n"
       "predicted FPR (a percentage). With --bits_per_key B (in [1, 64]) instead,\n"
       "each structure gets B bits per key and the rows give the FPR that buys\n"
       "(LevelDB's question: what FPR at 10 bits per key?). N is a whole number\n"
       "and accepts scientific notation (1e9).\n",
       {"keys", "fpr", "bits_per_key"}},
      {"build",
       "usage: blockbloom build [--fpr P | --bits_per_key B] [--structure S] KEYS -o OUT\n"
       "\n"
       "Builds a filter of every line of KEYS ('-' = stdin; a pipe works) and saves it\n"
       "to OUT (.bbf).\n"
       "One key per line: the line's bytes without its '\\n' (and a trailing '\\r');\n"
       "empty lines are skipped. S: blocked (default) | standard (enhanced double\n"
       "hashing) | standard-double (double hashing) | partitioned | scalable.\n"
       "(The compact filter that calc sizes is written by blockbloom's LevelDB\n"
       "policies and blockbloom::CompactFilter; a .bbf file does not hold one.)\n"
       "The filter is sized for the number of lines; a scalable filter starts\n"
       "there too and keeps its bound if keys are added later.\n"
       "Shows a progress bar on stderr when it is a terminal (or with --progress).\n",
       {"fpr", "bits_per_key", "structure", "o", "output", "progress"}},
      {"query",
       "usage: blockbloom query FILTER.bbf [CANDIDATES] [--print maybe|absent|none] [--absent]\n"
       "\n"
       "Tests every line of CANDIDATES (default stdin) against the filter. Prints\n"
       "the lines that may be in the set (--print maybe, default), or those that\n"
       "are certainly not (--print absent), to stdout; a summary goes to stderr.\n"
       "With --absent the candidates are known to be outside the set, and the\n"
       "summary reports the measured false-positive rate.\n",
       {"print", "absent", "progress"}},
      {"inspect",
       "usage: blockbloom inspect DBDIR\n"
       "\n"
       "For every live table (*.ldb, *.sst) of the LevelDB database in DBDIR: the\n"
       "filter policy name, number of filters, bytes, keys, bits per key, filter\n"
       "format (blockbloom blocked vN, blockbloom compact vN, LevelDB built-in,\n"
       "unknown) and predicted FPR (\"unknown (model work capped)\" for a table whose\n"
       "filters would need more model work than its size allows: none LevelDB\n"
       "writes). The live tables are those of the MANIFEST that CURRENT names; other\n"
       "table files (a compaction's output being written, or one left by an\n"
       "interrupted compaction, which LevelDB deletes at its next open) are listed\n"
       "as not live and not read. Files are only read, never locked or written: the\n"
       "database may be open.\n"
       "Exit status 3 if the MANIFEST or some live tables could not be read, or a\n"
       "live table is missing (each is reported).\n",
       {}},
      {"doctor",
       "usage: blockbloom doctor FILE\n"
       "\n"
       "Whether LD_PRELOAD=libblockbloom_preload.so gives the program or shared\n"
       "library FILE blockbloom's filters (docs/PRELOAD.md), read from its ELF\n"
       "symbols: it imports leveldb::NewBloomFilterPolicy(int) (or LevelDB's C\n"
       "leveldb_filterpolicy_create_bloom) from a shared libleveldb (reached), has\n"
       "LevelDB linked in statically, or asks for no LevelDB Bloom filter itself.\n"
       "For an interpreter, name the extension module that links LevelDB (plyvel's\n"
       "_plyvel*.so), not the interpreter. FILE is only read.\n"
       "Exit status 0 if reached, 4 if not, 2 if FILE is not a readable 64-bit ELF file.\n",
       {}},
  };
  return *commands;
}

// A mistake in the command line: the message, then the command's usage.
int UsageError(const std::string& message, const char* usage) {
  std::fprintf(stderr, "blockbloom: %s\n\n%s", message.c_str(), usage);
  return kExitUsage;
}

// A well-formed command that failed at run time (a missing file, a directory
// that is not a database): the message only; the usage would not help.
int RuntimeError(const std::string& message, int status) {
  std::fprintf(stderr, "blockbloom: %s\n", message.c_str());
  return status;
}

// The names of the flags on the command line (set by Main before parsing),
// so that an explicit value equal to the default, such as --bits_per_key 0,
// is still checked.
std::set<std::string>& GivenFlags() {
  static auto* given = new std::set<std::string>;
  return *given;
}
bool FlagGiven(const std::string& name) { return GivenFlags().count(name) != 0; }

// The flag named by argument `a` ("--f", "-f", "--f=v"), or "" if `a` is not
// a flag: a positional argument or a (negative) number given as a value.
std::string FlagName(std::string_view a) {
  if (a.size() < 2 || a[0] != '-') return "";
  if (std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.') return "";  // "-5"
  a.remove_prefix(a[1] == '-' ? 2 : 1);
  return std::string(a.substr(0, a.find('=')));
}

// Rejects flags that the command does not take (absl's parser accepts every
// defined flag everywhere). Handles --f, -f, --f=v, --nof.
std::optional<std::string> ForeignFlag(const std::vector<char*>& args, const Command& cmd) {
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "--") break;
    const std::string name = FlagName(a);
    if (name.empty()) continue;
    const auto known = [&](const std::string& n) {
      return std::find(cmd.flags.begin(), cmd.flags.end(), n) != cmd.flags.end();
    };
    if (known(name)) continue;
    if (name.rfind("no", 0) == 0 && known(name.substr(2))) continue;
    return "--" + name;
  }
  return std::nullopt;
}

// Sets the flags of `args` (args[0] is the program) and returns the
// positional arguments, program first, as absl::ParseCommandLine would, but
// reports a bad flag value as every other mistake is reported (a message,
// then the command's usage) instead of absl's own style. Takes --f=v, -f=v,
// --f v, and for booleans --f and --nof; "--" ends the flags. REQUIRES:
// ForeignFlag(args, cmd) found nothing.
std::optional<std::vector<char*>> ParseFlags(const std::vector<char*>& args, const Command& cmd,
                                             std::string* error) {
  std::vector<char*> positional = {args[0]};
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--") {
      positional.insert(positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    std::string name = FlagName(a);
    if (name.empty()) {
      positional.push_back(args[i]);
      continue;
    }
    const size_t eq = a.find('=');
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    bool negated = false;
    if (flag == nullptr && name.rfind("no", 0) == 0) {
      flag = absl::FindCommandLineFlag(name.substr(2));
      negated = flag != nullptr && flag->IsOfType<bool>() && eq == std::string_view::npos;
      if (!negated) flag = nullptr;
    }
    if (flag == nullptr) {
      *error = absl::StrFormat("%s does not take --%s", cmd.name, name);
      return std::nullopt;
    }
    std::string value;
    if (negated) {
      value = "false";
    } else if (eq != std::string_view::npos) {
      value = std::string(a.substr(eq + 1));
    } else if (flag->IsOfType<bool>()) {
      value = "true";
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      *error = absl::StrFormat("--%s needs a value", flag->Name());
      return std::nullopt;
    }
    std::string why;
    if (!flag->ParseFrom(value, &why)) {
      *error = absl::StrFormat("bad value '%s' for --%s", value, flag->Name());
      return std::nullopt;
    }
  }
  return positional;
}

// --fpr and --bits_per_key ask for the same thing two ways: one at most.
std::optional<std::string> ConflictingSizeFlags() {
  if (FlagGiven("fpr") && FlagGiven("bits_per_key")) {
    return "give --fpr or --bits_per_key, not both";
  }
  return std::nullopt;
}

// ---- line input with progress ----

class LineReader {
 public:
  // path "-" = stdin.
  static absl::StatusOr<std::unique_ptr<LineReader>> Open(const std::string& path) {
    FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
      return absl::NotFoundError(absl::StrFormat("cannot open %s: %s", path, std::strerror(errno)));
    }
    uint64_t total = 0;
    struct stat st;
    if (::fstat(::fileno(f), &st) == 0 && S_ISREG(st.st_mode)) total = st.st_size;
    return std::unique_ptr<LineReader>(new LineReader(f, path != "-", total));
  }
  ~LineReader() {
    if (owned_) std::fclose(file_);
  }
  // Next non-empty line into *line; false at the end.
  bool Next(std::string* line) {
    while (true) {
      line->clear();
      int c;
      bool any = false;
      while ((c = getc_unlocked(file_)) != EOF) {  // single-threaded reader
        any = true;
        ++bytes_read_;
        if (c == '\n') break;
        line->push_back(static_cast<char>(c));
      }
      if (!any) return false;
      if (!line->empty() && line->back() == '\r') line->pop_back();
      if (!line->empty()) return true;
    }
  }
  bool failed() const { return std::ferror(file_) != 0; }
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t total_bytes() const { return total_bytes_; }  // 0 = unknown

 private:
  LineReader(FILE* f, bool owned, uint64_t total) : file_(f), owned_(owned), total_bytes_(total) {}
  FILE* file_;
  bool owned_;
  uint64_t total_bytes_;
  uint64_t bytes_read_ = 0;
};

// A one-line progress bar on stderr, redrawn at most 10 times a second.
class Progress {
 public:
  Progress(const char* verb, bool enabled) : verb_(verb), enabled_(enabled) {}
  void Update(uint64_t items, uint64_t done_bytes, uint64_t total_bytes) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    drawn_ = true;
    if (total_bytes > 0) {
      const double frac = std::min(1.0, static_cast<double>(done_bytes) / total_bytes);
      const int filled = static_cast<int>(frac * 30);
      std::fprintf(stderr, "\r%s [%s%s] %3d%% %" PRIu64 " keys", verb_,
                   std::string(filled, '#').c_str(), std::string(30 - filled, '.').c_str(),
                   static_cast<int>(frac * 100), items);
    } else {
      std::fprintf(stderr, "\r%s %" PRIu64 " keys", verb_, items);
    }
  }
  void Finish(uint64_t items, uint64_t total_bytes) {
    if (!enabled_) return;
    drawn_ = false;
    Update(items, total_bytes, total_bytes);
    std::fprintf(stderr, "\n");
  }

 private:
  const char* verb_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

bool ProgressEnabled() { return absl::GetFlag(FLAGS_progress) || ::isatty(STDERR_FILENO); }

// A probability, always as a percentage (never a bare fraction).
std::string Percent(double p) {
  if (p == 0) return "0%";
  return absl::StrFormat("%.4g%%", 100 * p);
}

// ---- calc ----

// n keys at B bits per key (clamped like the filters clamp it) as a whole
// number of bits, or nullopt past 2^64 bits.
std::optional<uint64_t> BitsFor(double n, double bits_per_key) {
  const double bits = std::ceil(n * bits_per_key);
  if (!(bits < 18446744073709551616.0)) return std::nullopt;
  return static_cast<uint64_t>(bits);
}

int Calc(const std::vector<char*>& args) {
  const char* usage = Commands()[0].usage;
  if (args.size() != 1) return UsageError("calc takes no arguments, only flags", usage);
  if (!FlagGiven("keys")) return UsageError("calc needs --keys N", usage);
  if (std::optional<std::string> both = ConflictingSizeFlags()) return UsageError(*both, usage);
  const double n = absl::GetFlag(FLAGS_keys);
  const double p = absl::GetFlag(FLAGS_fpr);
  const bool bpk_given = FlagGiven("bits_per_key");
  const double bpk = absl::GetFlag(FLAGS_bits_per_key);
  if (!(n >= 1) || !std::isfinite(n)) {
    return UsageError(absl::StrFormat("--keys must be a whole number >= 1, got %g", n), usage);
  }
  if (n != std::floor(n)) {
    return UsageError(absl::StrFormat("--keys must be a whole number, got %g", n), usage);
  }
  if (!(p > 0 && p < 1)) return UsageError("--fpr must be in (0, 1)", usage);
  if (bpk_given && !(bpk >= 1 && bpk <= 64)) {
    return UsageError(absl::StrFormat("--bits_per_key must be in [1, 64], got %g", bpk), usage);
  }
  // --keys is read as a double: the largest below 2^64 is 2^64 - 2048.
  if (n >= 18446744073709551616.0) {
    return UsageError("--keys must be at most 18446744073709549568 (2^64 - 2048)", usage);
  }
  const uint64_t keys = static_cast<uint64_t>(n);

  if (bpk_given) {
    std::printf("%" PRIu64 " keys at %g bits per key\n\n", keys, bpk);
  } else {
    std::printf("%" PRIu64 " keys at target FPR %s\n\n", keys, Percent(p).c_str());
  }
  std::printf("%-22s %20s %20s %9s %3s  %s\n", "structure", "bits", "bytes", "bits/key", "k",
              "predicted FPR");
  // A structure that cannot be sized for these arguments (too many bits for
  // its format, an FPR it cannot reach) gets a row saying why; the other
  // rows still print.
  const auto no_row = [](const char* name, const std::string& why) {
    std::printf("%-22s %s\n", name, why.c_str());
  };
  const auto row = [&](const char* name, std::optional<uint64_t> bits, const std::string& k,
                       double fpr) {
    if (!bits.has_value()) {
      no_row(name, "more than 2^64 bits");
      return;
    }
    std::printf("%-22s %20" PRIu64 " %20" PRIu64 " %9.3f %3s  %s\n", name, *bits,
                *bits / 8 + (*bits % 8 != 0), static_cast<double>(*bits) / n, k.c_str(),
                Percent(fpr).c_str());
  };
  const auto bytes_to_bits = [](uint64_t bytes) -> std::optional<uint64_t> {
    if (bytes > UINT64_MAX / 8) return std::nullopt;
    return bytes * 8;
  };

  // Standard and partitioned: as their Create(n, bits per key) sizes them,
  // n B bits (at least 64) and the k best for B bits per key.
  if (bpk_given) {
    const std::optional<uint64_t> m = BitsFor(n, bpk);
    absl::StatusOr<int> k =
        m.has_value() ? StandardOptimalProbes(ClampBitsPerKey(bpk), 1.0) : absl::StatusOr<int>(1);
    if (!k.ok()) {
      no_row("standard", std::string(k.status().message()));
      no_row("partitioned", std::string(k.status().message()));
    } else {
      const std::optional<uint64_t> sm =
          m.has_value() ? std::optional<uint64_t>(std::max<uint64_t>(*m, 64)) : std::nullopt;
      absl::StatusOr<double> sfpr =
          sm.has_value() ? StandardFprFor(*k, static_cast<double>(*sm), n) : 1.0;
      row("standard", sm, std::to_string(*k), sfpr.ok() ? *sfpr : 1.0);
      std::optional<uint64_t> pm;
      if (sm.has_value()) {
        const uint64_t slice = *sm / *k + (*sm % *k != 0);
        if (slice <= UINT64_MAX / *k) pm = slice * *k;
      }
      absl::StatusOr<double> pfpr =
          pm.has_value() ? PartitionedFprFor(*k, static_cast<double>(*pm), n) : 1.0;
      row("partitioned", pm, std::to_string(*k), pfpr.ok() ? *pfpr : 1.0);
    }
  } else {
    absl::StatusOr<StandardBloomFilter::Geometry> sg = StandardBloomFilter::GeometryForFpr(keys, p);
    if (sg.ok()) {
      row("standard", sg->num_bits, std::to_string(sg->num_probes),
          *StandardFprFor(sg->num_probes, static_cast<double>(sg->num_bits), n));
    } else {
      no_row("standard", std::string(sg.status().message()));
    }
    absl::StatusOr<PartitionedBloomFilter::Geometry> pg =
        PartitionedBloomFilter::GeometryForFpr(keys, p);
    if (pg.ok()) {
      const uint64_t pbits = pg->slice_bits * static_cast<uint64_t>(pg->num_probes);
      row("partitioned", pbits, std::to_string(pg->num_probes),
          *PartitionedFprFor(pg->num_probes, static_cast<double>(pbits), n));
    } else {
      no_row("partitioned", std::string(pg.status().message()));
    }
  }

  // Blocked: at the given bits per key, or the geometry CreateForFpr builds
  // for `target`; whole_blocks (the scalable filter's stages): the fewest
  // bits per key that meet `target`, in whole 64-byte blocks.
  const auto blocked_row = [&](const char* name, std::optional<double> bits_per_key, double target,
                               bool whole_blocks = false) {
    double b = 0;
    if (bits_per_key.has_value()) {
      b = *bits_per_key;
    } else {
      absl::StatusOr<double> needed = BlockedBitsPerKeyForFpr(target);
      if (!needed.ok()) {
        no_row(name, std::string(needed.status().message()));
        return;
      }
      b = *needed;
    }
    uint64_t bytes = BlockedBloomBytes(keys, b);
    int k = BlockedBloomProbes(b);
    if (whole_blocks && bytes % 64 != 0 && bytes <= UINT64_MAX - 64) bytes += 64 - bytes % 64;
    if (!bits_per_key.has_value() && !whole_blocks && bytes <= UINT64_MAX / 16) {
      // The geometry BlockedBloomFilter::CreateForFpr builds.
      const absl::StatusOr<BlockedBloomFilter::Geometry> geometry =
          BlockedBloomFilter::GeometryForFpr(keys, target);
      if (!geometry.ok()) {
        no_row(name, std::string(geometry.status().message()));
        return;
      }
      bytes = geometry->num_bytes;
      k = geometry->num_probes;
    }
    row(name, bytes_to_bits(bytes), std::to_string(k), BlockedBloomPredictedFpr(keys, bytes, k));
  };
  blocked_row("blocked (512-bit)", bpk_given ? std::optional<double>(bpk) : std::nullopt, p);

  // Compact: the given bits per key, or the fewest (bisection over [1, 64];
  // the model falls with bits per key) whose model FPR meets p.
  std::optional<double> compact_bpk;
  if (bpk_given) {
    compact_bpk = bpk;
  } else if (CompactFilterPredictedFpr(keys, 64.0) <= p) {
    double lo = 1.0, hi = 64.0;
    for (int i = 0; i < 40; ++i) {
      const double mid = 0.5 * (lo + hi);
      (CompactFilterPredictedFpr(keys, mid) <= p ? hi : lo) = mid;
    }
    compact_bpk = hi;
  }
  const int compact_version = CompactFilterFormatVersion(keys, compact_bpk.value_or(10.0));
  const char* compact_name = compact_version == 2 ? "compact (v2)" : "compact (v1, Rice)";
  if (!compact_bpk.has_value()) {
    no_row(compact_name, "cannot reach FPR " + Percent(p) + " with at most 64 bits per key");
  } else {
    // Version 2 takes exactly ceil(n B / 8) bytes; version 1 at most 8 more.
    std::optional<uint64_t> bits = bytes_to_bits(CompactFilterMaxBytes(keys, *compact_bpk));
    if (compact_version == 2) bits = (*BitsFor(n, *compact_bpk) + 7) / 8 * 8;  // n <= 2^16
    row(compact_name, bits, "-", CompactFilterPredictedFpr(keys, *compact_bpk));
  }

  ScalableBloomOptions so;
  so.fpr = p;
  so.initial_capacity = keys;
  if (bpk_given) {
    no_row("scalable, 1st stage", "sized by --fpr only");
  } else {
    // Stage 0 as the builder makes it: sized for its target, in whole blocks.
    blocked_row("scalable, 1st stage", std::nullopt,
                ScalableBloomFilter::kStageModelMargin * ScalableBloomFilter::StageFpr(so, 0),
                /*whole_blocks=*/true);
  }
  std::printf(
      "\nstandard: %s.\n"
      "blocked: Poisson-mixture model (Putze et al. 2007); filters of up to 64\n"
      "blocks exactly (binomial loads, the short last block), within a bound on\n"
      "the work.\n"
      "compact: one filter of all the keys, no k. Up to 65,536 keys it is a GF(2)\n"
      "retrieval structure of R-bit fingerprints (format version 2: FPR 2^-R, R the\n"
      "bits per key left after a 3-byte trailer); beyond that, Golomb-Rice coded\n"
      "fingerprints (version 1). The compact LevelDB policies write one filter per\n"
      "table block (tens to hundreds of keys): LevelDB's built-in bits plus a 3-byte\n"
      "trailer, version 2 (a flat Bloom filter at 1-3 bits/key, where it does\n"
      "better; docs/FORMAT.md): `calc --keys 100 --bits_per_key 10` comes close.\n",
      bpk_given ? "n B bits (at least 64), k = B ln 2 rounded to the better integer"
                : "the fewest bits (at least 64) at which the small-m model\n"
                  "(blockbloom/math.h) meets the target, with the closed form's k or a\n"
                  "neighbour");
  if (!bpk_given) {
    std::printf("scalable: the first stage holds all %" PRIu64
                " keys at %.1f p(1-r) with r = %.1f (its\n"
                "model margin), in whole 512-bit blocks, leaving headroom for growth\n"
                "(s = %.0f) under the same compound bound.\n",
                keys, ScalableBloomFilter::kStageModelMargin, so.tightening, so.growth);
  }
  return 0;
}

// ---- build ----

absl::StatusOr<uint64_t> CountLines(const std::string& path) {
  absl::StatusOr<std::unique_ptr<LineReader>> in = LineReader::Open(path);
  if (!in.ok()) return in.status();
  Progress progress("counting", ProgressEnabled());
  uint64_t n = 0;
  std::string line;
  while ((*in)->Next(&line)) {
    ++n;
    if ((n & 0xfff) == 0) progress.Update(n, (*in)->bytes_read(), (*in)->total_bytes());
  }
  progress.Finish(n, (*in)->total_bytes());
  if ((*in)->failed()) return absl::DataLossError("error reading " + path);
  return n;
}

// Copies all of `in` (possibly nothing; `name` in messages) into a new file
// named `prefix` + six random characters (mkostemp: created exclusively, so
// never through an existing file or symlink, and unique to this run);
// *path is its name, set as soon as it exists.
absl::Status CopyToNewFile(FILE* in, const std::string& name, const std::string& prefix,
                           std::string* path) {
  std::string name_template = prefix + "XXXXXX";
  const int fd = ::mkostemp(name_template.data(), O_CLOEXEC);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrFormat("cannot buffer %s into %sXXXXXX: %s", name, prefix, std::strerror(errno)));
  }
  *path = name_template;
  FILE* out = ::fdopen(fd, "wb");
  if (out == nullptr) {
    ::close(fd);
    return absl::UnavailableError(
        absl::StrFormat("cannot buffer %s into %s: %s", name, *path, std::strerror(errno)));
  }
  std::vector<char> buf(1 << 16);
  size_t n;
  bool write_ok = true;
  while (write_ok && (n = std::fread(buf.data(), 1, buf.size(), in)) > 0) {
    write_ok = std::fwrite(buf.data(), 1, n, out) == n;
  }
  const bool read_ok = std::ferror(in) == 0;
  write_ok = std::fclose(out) == 0 && write_ok;
  if (!read_ok) return absl::DataLossError("error reading " + name);
  if (!write_ok) return absl::UnavailableError("cannot buffer " + name + " into " + *path);
  return absl::OkStatus();
}

int Build(const std::vector<char*>& args) {
  const char* usage = Commands()[1].usage;
  if (args.size() != 2) return UsageError("build takes exactly one KEYS file ('-' = stdin)", usage);
  const std::string input = args[1];
  std::string output = absl::GetFlag(FLAGS_o);
  if (output.empty()) output = absl::GetFlag(FLAGS_output);
  if (output.empty()) return UsageError("missing -o OUT", usage);
  if (output == "-") {
    return UsageError(
        "-o - is not stdout: a filter file is written whole or not at all "
        "(a temporary file, then a rename); name a file",
        usage);
  }
  if (std::optional<std::string> both = ConflictingSizeFlags()) return UsageError(*both, usage);
  const double fpr = absl::GetFlag(FLAGS_fpr);
  const double bpk = absl::GetFlag(FLAGS_bits_per_key);
  if (!(fpr > 0 && fpr < 1)) return UsageError("--fpr must be in (0, 1)", usage);
  const bool bpk_given = FlagGiven("bits_per_key");
  if (bpk_given && !(bpk >= 1 && bpk <= 64)) {
    return UsageError(absl::StrFormat("--bits_per_key must be in [1, 64], got %g", bpk), usage);
  }
  const std::string structure = absl::GetFlag(FLAGS_structure);
  if (structure == "compact") {
    return UsageError(
        "a .bbf file does not hold a compact filter: blockbloom's compact LevelDB policies "
        "(blockbloom::NewCompactFilterPolicy) and blockbloom::CompactFilter build one; "
        "`calc` sizes it",
        usage);
  }

  // Regular files are read twice (count, add). Stdin and other streams (a
  // pipe, a FIFO, bash's <(...)) can be read once only: they are buffered in
  // a file first. An empty stream is an empty key set, as an empty file is.
  // The buffer file is removed on every path out, a failed copy included.
  std::string buffered_path = input;
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      if (!path.empty()) std::remove(path.c_str());
    }
  } cleanup;
  struct stat input_stat;
  const bool stream =
      input == "-" || (::stat(input.c_str(), &input_stat) == 0 && !S_ISREG(input_stat.st_mode) &&
                       !S_ISDIR(input_stat.st_mode));
  if (stream) {
    FILE* in = input == "-" ? stdin : std::fopen(input.c_str(), "rb");
    if (in == nullptr) {
      std::fprintf(stderr, "blockbloom build: cannot open %s: %s\n", input.c_str(),
                   std::strerror(errno));
      return kExitIo;
    }
    // Beside OUT, under a name no other run or file has.
    const absl::Status s =
        CopyToNewFile(in, input == "-" ? "stdin" : input, output + ".keys.", &cleanup.path);
    buffered_path = cleanup.path;
    if (in != stdin) std::fclose(in);
    if (!s.ok()) {
      std::fprintf(stderr, "blockbloom build: %s\n", std::string(s.message()).c_str());
      return kExitIo;
    }
  }

  absl::StatusOr<uint64_t> n = CountLines(buffered_path);
  if (!n.ok()) {
    std::fprintf(stderr, "blockbloom build: %s\n", std::string(n.status().message()).c_str());
    return kExitIo;
  }

  std::optional<AnyFilter> filter;
  const auto make = [&]() -> absl::Status {
    if (structure == "blocked") {
      double b = bpk;
      if (!bpk_given) {
        // OutOfRange below ~1.1e-8: no blocked filter reaches it (calc says so too).
        const absl::StatusOr<double> needed = BlockedBitsPerKeyForFpr(fpr);
        if (!needed.ok()) return needed.status();
        b = *needed;
      }
      absl::StatusOr<BlockedBloomFilter> f = BlockedBloomFilter::Create(*n, b);
      if (!f.ok()) return f.status();
      filter.emplace(*std::move(f));
    } else if (structure == "standard" || structure == "standard-double") {
      const HashScheme s =
          structure == "standard" ? HashScheme::kEnhancedDoubleHashing : HashScheme::kDoubleHashing;
      absl::StatusOr<StandardBloomFilter> f = bpk_given
                                                  ? StandardBloomFilter::Create(*n, bpk, s)
                                                  : StandardBloomFilter::CreateForFpr(*n, fpr, s);
      if (!f.ok()) return f.status();
      filter.emplace(*std::move(f));
    } else if (structure == "partitioned") {
      absl::StatusOr<PartitionedBloomFilter> f =
          bpk_given ? PartitionedBloomFilter::Create(*n, bpk)
                    : PartitionedBloomFilter::CreateForFpr(*n, fpr);
      if (!f.ok()) return f.status();
      filter.emplace(*std::move(f));
    } else if (structure == "scalable") {
      if (bpk_given)
        return absl::InvalidArgumentError("a scalable filter takes --fpr, not --bits_per_key");
      absl::StatusOr<ScalableBloomFilter> f = ScalableBloomFilter::Create(*n, fpr);
      if (!f.ok()) return f.status();
      filter.emplace(*std::move(f));
    } else {
      return absl::InvalidArgumentError("unknown --structure '" + structure + "'");
    }
    return absl::OkStatus();
  };
  if (absl::Status s = make(); !s.ok()) return UsageError(std::string(s.message()), usage);

  absl::StatusOr<std::unique_ptr<LineReader>> in = LineReader::Open(buffered_path);
  if (!in.ok()) {
    std::fprintf(stderr, "blockbloom build: %s\n", std::string(in.status().message()).c_str());
    return kExitIo;
  }
  Progress progress("building", ProgressEnabled());
  std::string line;
  uint64_t added = 0;
  while ((*in)->Next(&line)) {
    const uint64_t h = HashKey(line);
    std::visit([h](auto& f) { f.AddHash(h); }, *filter);
    ++added;
    if ((added & 0xfff) == 0) progress.Update(added, (*in)->bytes_read(), (*in)->total_bytes());
  }
  progress.Finish(added, (*in)->total_bytes());
  if ((*in)->failed() || added != *n) {
    std::fprintf(stderr, "blockbloom build: %s changed while being read\n", input.c_str());
    return kExitIo;
  }
  const double target = bpk_given ? 0 : fpr;
  if (absl::Status s = std::visit(
          [&](const auto& f) { return SaveFilterFile(output, f, added, target); }, *filter);
      !s.ok()) {
    std::fprintf(stderr, "blockbloom build: %s\n", std::string(s.message()).c_str());
    return kExitIo;
  }
  absl::StatusOr<LoadedFilter> check = LoadFilterFile(output);
  if (!check.ok()) {
    std::fprintf(stderr, "blockbloom build: re-reading %s: %s\n", output.c_str(),
                 std::string(check.status().message()).c_str());
    return kExitIo;
  }
  const FilterFileInfo& info = check->info();
  std::printf("built %s filter: %" PRIu64 " keys, %" PRIu64 " filter bits (%.2f bits/key), ",
              FilterKindName(info.kind), added, info.num_bits,
              added == 0 ? 0.0 : static_cast<double>(info.num_bits) / added);
  if (info.num_probes != 0) std::printf("k=%u, ", info.num_probes);
  std::printf("predicted FPR %s\nwrote %s (%" PRIu64 " bytes)\n",
              Percent(check->PredictedFpr()).c_str(), output.c_str(), info.file_bytes);
  return 0;
}

// ---- query ----

int Query(const std::vector<char*>& args) {
  const char* usage = Commands()[2].usage;
  if (args.size() < 2 || args.size() > 3) {
    return UsageError("query takes a FILTER file and optionally a CANDIDATES file", usage);
  }
  const std::string print = absl::GetFlag(FLAGS_print);
  if (print != "maybe" && print != "absent" && print != "none") {
    return UsageError("--print must be maybe, absent or none", usage);
  }
  absl::StatusOr<LoadedFilter> filter = LoadFilterFile(args[1]);
  if (!filter.ok()) {
    std::fprintf(stderr, "blockbloom query: %s\n", std::string(filter.status().message()).c_str());
    return kExitIo;
  }
  absl::StatusOr<std::unique_ptr<LineReader>> in =
      LineReader::Open(args.size() == 3 ? args[2] : "-");
  if (!in.ok()) {
    std::fprintf(stderr, "blockbloom query: %s\n", std::string(in.status().message()).c_str());
    return kExitIo;
  }
  Progress progress("querying", ProgressEnabled());
  std::string line;
  uint64_t total = 0, maybe = 0;
  while ((*in)->Next(&line)) {
    const bool hit = filter->MayContain(line);
    ++total;
    maybe += hit;
    if ((hit && print == "maybe") || (!hit && print == "absent")) {
      std::fwrite(line.data(), 1, line.size(), stdout);
      std::fputc('\n', stdout);
    }
    if ((total & 0xfff) == 0) progress.Update(total, (*in)->bytes_read(), (*in)->total_bytes());
  }
  progress.Finish(total, (*in)->total_bytes());
  if ((*in)->failed()) {
    const bool named = args.size() == 3 && std::strcmp(args[2], "-") != 0;
    struct stat st;
    const bool dir = named && ::stat(args[2], &st) == 0 && S_ISDIR(st.st_mode);
    std::fprintf(stderr, "blockbloom query: cannot read %s%s\n", named ? args[2] : "stdin",
                 dir ? ": it is a directory" : "");
    return kExitIo;
  }
  if (std::fflush(stdout) != 0) {
    std::fprintf(stderr, "blockbloom query: cannot write the output: %s\n", std::strerror(errno));
    return kExitIo;
  }
  const FilterFileInfo& info = filter->info();
  std::fprintf(stderr,
               "%s filter, %" PRIu64 " keys, %" PRIu64
               " bytes, predicted FPR %s\n"
               "queried %" PRIu64 ": %" PRIu64 " may be present, %" PRIu64 " absent\n",
               FilterKindName(info.kind), info.num_keys, info.file_bytes,
               Percent(filter->PredictedFpr()).c_str(), total, maybe, total - maybe);
  if (absl::GetFlag(FLAGS_absent) && total > 0) {
    std::fprintf(stderr, "measured FPR %s (%" PRIu64 " false positives of %" PRIu64 ")\n",
                 Percent(static_cast<double>(maybe) / total).c_str(), maybe, total);
  }
  return 0;
}

// ---- inspect ----

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// "v1+v2": every version in a VersionBit set ("v?" for bit 31).
std::string Versions(uint32_t versions) {
  std::string out;
  for (int v = 0; v < 32; ++v) {
    if ((versions >> v & 1) == 0) continue;
    out += (out.empty() ? "v" : "+v") + (v == 31 ? std::string("?") : std::to_string(v));
  }
  return out;
}

std::string FormatOf(const TableReport& r) {
  std::vector<std::string> parts;
  if (r.blocked_filters > 0) parts.push_back("blockbloom blocked " + Versions(r.blocked_versions));
  if (r.compact_filters > 0) parts.push_back("blockbloom compact " + Versions(r.compact_versions));
  if (r.builtin_filters > 0) parts.push_back("leveldb built-in");
  if (r.unknown_filters > 0) parts.push_back("unknown");
  if (parts.empty()) return "-";
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " + ") + p;
  if (parts.size() > 1) {
    out += absl::StrFormat(" (%d/%d/%d/%d)", r.blocked_filters, r.compact_filters,
                           r.builtin_filters, r.unknown_filters);
  }
  if (r.max_probes > 0) {
    out += r.min_probes == r.max_probes ? absl::StrFormat(", k=%d", r.max_probes)
                                        : absl::StrFormat(", k=%d..%d", r.min_probes, r.max_probes);
  }
  return out;
}

// Reads the table file at `path` into *contents; the reason it cannot, or
// "". Only a regular file is read, and only as many bytes as fstat gave
// when it was opened: a FIFO (whose open would block until a writer
// came), a device such as /dev/zero (endless) or a directory is refused
// without reading.
std::string ReadTableFile(const std::string& path, std::string* contents) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::string("cannot open the file: ") + std::strerror(errno);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return std::string("cannot stat the file: ") + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  try {
    contents->resize(static_cast<size_t>(st.st_size));
  } catch (const std::exception&) {
    return "file too large to read into memory";
  }
  size_t done = 0;
  while (done < contents->size()) {
    const ssize_t n = ::read(fd, &(*contents)[done], contents->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::string("cannot read the file: ") + std::strerror(errno);
    if (n == 0) break;  // shrank since fstat: parse what is there
    done += static_cast<size_t>(n);
  }
  contents->resize(done);
  return "";
}

// The table files (*.ldb, *.sst) in dir, sorted; "" or why they could not be
// listed.
std::string ListTables(const std::string& dir, std::vector<std::string>* tables) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return absl::StrFormat("cannot list %s: %s", dir, std::strerror(errno));
  while (struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (EndsWith(name, ".ldb") || EndsWith(name, ".sst")) tables->push_back(name);
  }
  ::closedir(d);
  std::sort(tables->begin(), tables->end());
  return "";
}

// The live tables' numbers (manifest.h) from dir's CURRENT and the MANIFEST
// it names (*manifest: that name, or "" if CURRENT names none).
absl::StatusOr<std::set<uint64_t>> ReadLiveTables(const std::string& dir, std::string* manifest) {
  manifest->clear();
  std::string current, log;
  if (const std::string error = ReadTableFile(dir + "/CURRENT", &current); !error.empty()) {
    return absl::DataLossError("CURRENT: " + error);
  }
  absl::StatusOr<std::string> name = ManifestName(current);
  if (!name.ok()) return name.status();
  *manifest = *name;
  if (const std::string error = ReadTableFile(dir + "/" + *name, &log); !error.empty()) {
    return absl::DataLossError(error);
  }
  return LiveTableNumbers(log);
}

int Inspect(const std::vector<char*>& args) {
  const char* usage = Commands()[3].usage;
  if (args.size() != 2) return UsageError("inspect takes exactly one DBDIR", usage);
  const std::string dir = args[1];
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    return RuntimeError(absl::StrFormat("cannot read %s: %s", dir, std::strerror(errno)), kExitIo);
  }
  if (!S_ISDIR(st.st_mode)) return RuntimeError(dir + " is not a directory", kExitIo);
  if (::access((dir + "/CURRENT").c_str(), F_OK) != 0) {
    return RuntimeError(dir + " is not a LevelDB database (no CURRENT file)", kExitIo);
  }
  // The live tables and the table files, in a consistent view: an open
  // database may switch to a new MANIFEST, add tables and delete obsolete
  // ones while they are read, so the MANIFEST is read again after the
  // listing, until both reads agree.
  // A disagreeing read is the next attempt's first.
  std::string manifest;
  absl::StatusOr<std::set<uint64_t>> live = ReadLiveTables(dir, &manifest);
  std::vector<std::string> tables;
  for (int attempt = 0;; ++attempt) {
    tables.clear();
    if (const std::string error = ListTables(dir, &tables); !error.empty()) {
      return RuntimeError(error, kExitIo);
    }
    if (attempt == 4) break;
    std::string manifest_again;
    absl::StatusOr<std::set<uint64_t>> again = ReadLiveTables(dir, &manifest_again);
    if (live.ok() && again.ok() && manifest_again == manifest && *again == *live) break;
    live = std::move(again);
    manifest = std::move(manifest_again);
  }
  // The live tables as of now, read once when a table is found gone: one
  // compacted away since `live` was read is no longer live, not damage.
  std::optional<absl::StatusOr<std::set<uint64_t>>> live_now;
  const auto still_live = [&](uint64_t number) {
    if (!live_now.has_value()) {
      std::string manifest_now;
      live_now = ReadLiveTables(dir, &manifest_now);
    }
    return !live_now->ok() || (*live_now)->count(number) != 0;
  };
  std::printf("%-12s %-30s %8s %10s %10s %9s  %-32s %s\n", "table", "filter policy", "filters",
              "bytes", "keys", "bits/key", "format", "model FPR");
  uint64_t all_bytes = 0, all_keys = 0, all_filters = 0, damaged = 0, not_live = 0;
  if (!live.ok()) {
    std::printf("%-12s DAMAGED: %s; every table file is read\n",
                manifest.empty() ? "CURRENT" : manifest.c_str(),
                std::string(live.status().message()).c_str());
    ++damaged;
  } else {
    std::set<uint64_t> listed;
    for (const std::string& name : tables) {
      if (const std::optional<uint64_t> number = TableNumber(name)) listed.insert(*number);
    }
    for (const uint64_t number : *live) {
      if (listed.count(number) != 0 || !still_live(number)) continue;
      std::printf("%-12s DAMAGED: missing (%s lists it)\n",
                  absl::StrFormat("%06d.ldb", number).c_str(), manifest.c_str());
      ++damaged;
    }
  }
  double weighted_fpr = 0;
  bool fpr_known = true;
  for (const std::string& name : tables) {
    const std::optional<uint64_t> number = TableNumber(name);
    // Every table file is read when the MANIFEST cannot be.
    if (live.ok() && !(number.has_value() && live->count(*number) != 0)) {
      std::printf("%-12s not live: not in %s (being written, or left over); not read\n",
                  name.c_str(), manifest.c_str());
      ++not_live;
      continue;
    }
    std::string contents;
    if (const std::string error = ReadTableFile(dir + "/" + name, &contents); !error.empty()) {
      if (live.ok() && number.has_value() && ::access((dir + "/" + name).c_str(), F_OK) != 0 &&
          errno == ENOENT && !still_live(*number)) {
        std::printf("%-12s not live: compacted away while this ran\n", name.c_str());
        ++not_live;
        continue;
      }
      std::printf("%-12s DAMAGED: %s\n", name.c_str(), error.c_str());
      ++damaged;
      continue;
    }
    const TableReport r = InspectTable(contents);
    if (!r.error.empty()) {
      std::printf("%-12s DAMAGED: %s\n", name.c_str(), r.error.c_str());
      ++damaged;
      continue;
    }
    const std::string policy = r.policy_name.empty() ? "(no filter)" : r.policy_name;
    const double bpk = r.num_keys == 0 ? 0.0 : 8.0 * r.filter_bytes / r.num_keys;
    std::printf("%-12s %-30s %8" PRIu64 " %10" PRIu64 " %10" PRIu64 " %9.2f  %-32s %s\n",
                name.c_str(), policy.c_str(), r.num_filters, r.filter_bytes, r.num_keys, bpk,
                FormatOf(r).c_str(),
                r.policy_name.empty()   ? "100% (every read)"
                : r.fpr_known           ? Percent(r.predicted_fpr).c_str()
                : r.model_work_exceeded ? "unknown (model work capped)"
                                        : "unknown");
    all_bytes += r.filter_bytes;
    all_keys += r.num_keys;
    all_filters += r.num_filters;
    if (r.policy_name.empty()) {
      weighted_fpr += static_cast<double>(r.num_keys);
    } else if (r.fpr_known) {
      weighted_fpr += r.predicted_fpr * static_cast<double>(r.num_keys);
    } else {
      fpr_known = false;
    }
  }
  std::printf("\n%" PRIu64 " tables (%" PRIu64 " damaged%s), %" PRIu64 " filters, %" PRIu64
              " filter bytes, %" PRIu64 " keys, %.2f bits/key, model FPR %s\n",
              static_cast<uint64_t>(tables.size()) - not_live, damaged,
              not_live == 0 ? "" : absl::StrFormat("; %d not live, not read", not_live).c_str(),
              all_filters, all_bytes, all_keys, all_keys == 0 ? 0.0 : 8.0 * all_bytes / all_keys,
              !fpr_known      ? "unknown"
              : all_keys == 0 ? "-"
                              : Percent(weighted_fpr / all_keys).c_str());
  std::printf(
      "\nmodel FPR: what each filter's math predicts for well-hashed keys, not a\n"
      "measurement. blockbloom filters hash with 64-bit XXH3 and measure at their model.\n"
      "LevelDB's built-in filter (modelled as a standard Bloom filter) hashes with a\n"
      "32-bit hash and plain double hashing; on structured keys (sequential numbers,\n"
      "shared prefixes) it measures well above its model: blockbloom-demo measures\n"
      "~3.5%% on its sequential keys at 10 bits/key against a model of ~0.8%%.\n");
  // A FilteredDB's saved index screens Gets before any table's filter.
  struct stat index_stat;
  if (::stat((dir + "/BLOCKBLOOM-INDEX").c_str(), &index_stat) == 0) {
    std::printf(
        "\nBLOCKBLOOM-INDEX (%lld bytes): the index a FilteredDB saved beside these tables.\n"
        "Through FilteredDB, Gets of keys it rules out never reach the filters above; its\n"
        "own statistics: GetProperty(\"blockbloom.stats\") of the open FilteredDB.\n",
        static_cast<long long>(index_stat.st_size));
  }
  return damaged == 0 ? 0 : kExitDamaged;
}

// ---- doctor ----

std::string Joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

int Doctor(const std::vector<char*>& args) {
  const char* usage = Commands()[4].usage;
  if (args.size() != 2) return UsageError("doctor takes exactly one FILE", usage);
  const std::string path = args[1];
  std::string contents;
  if (std::string why = ReadTableFile(path, &contents); !why.empty()) {
    return RuntimeError(path + ": " + why, kExitIo);
  }
  const ElfReport r = ExamineElf(contents);
  if (!r.error.empty()) return RuntimeError(path + ": " + r.error, kExitIo);
  const char* f = path.c_str();
  const std::string leveldb = r.leveldb.empty() ? "a shared libleveldb" : Joined(r.leveldb);
  if (r.exports_new_bloom && r.soname.rfind("libleveldb", 0) == 0) {
    std::printf(
        "%s: LevelDB's shared library (%s): every program linking it asks it for\n"
        "leveldb::NewBloomFilterPolicy(int), which the preload library replaces.\n",
        f, r.soname.c_str());
    std::printf(
        r.relocates_new_bloom
            ? "Its own calls to it (leveldb_filterpolicy_create_bloom, LevelDB's C API) go\n"
              "through the dynamic linker: C callers are reached too.\n"
            : "Its own calls to it (leveldb_filterpolicy_create_bloom, LevelDB's C API) are\n"
              "bound inside the library: C callers are not reached.\n");
    return 0;
  }
  if (r.exports_new_bloom && !r.leveldb.empty()) {
    std::printf(
        "%s: defines leveldb::NewBloomFilterPolicy(int) ahead of %s: a replacement of\n"
        "LevelDB's, as libblockbloom_preload.so is.\n",
        f, leveldb.c_str());
    return 0;
  }
  if (r.imports_new_bloom) {
    std::printf(
        "%s: imports leveldb::NewBloomFilterPolicy(int) from %s:\n"
        "LD_PRELOAD=libblockbloom_preload.so gives it blockbloom's filters.\n",
        f, leveldb.c_str());
    return 0;
  }
  if (r.imports_create_bloom) {
    std::printf(
        "%s: imports leveldb_filterpolicy_create_bloom (LevelDB's C API) from %s:\n"
        "reached if that library calls leveldb::NewBloomFilterPolicy(int) through the\n"
        "dynamic linker, as Debian's libleveldb.so.1d does (blockbloom doctor on the\n"
        "library says).\n",
        f, leveldb.c_str());
    return 0;
  }
  if (r.defines_new_bloom || (!r.has_symtab && r.has_builtin_name && r.leveldb.empty())) {
    std::printf(
        "%s: LevelDB is linked into it statically (%s):\n"
        "its calls stay inside it; the preload library changes nothing (its filters\n"
        "stay LevelDB's).\n",
        f,
        r.defines_new_bloom ? "it defines leveldb::NewBloomFilterPolicy(int)"
                            : "stripped, but it holds LevelDB's built-in filter name");
    return kExitNotReached;
  }
  if (!r.leveldb.empty()) {
    std::printf(
        "%s: links %s but never asks it for its Bloom filter (it uses no\n"
        "filter, or a policy of its own): the preload library changes nothing.\n",
        f, leveldb.c_str());
    return kExitNotReached;
  }
  std::printf(
      "%s: neither links nor contains LevelDB's Bloom filter. A program that loads\n"
      "LevelDB through another file (an extension module, a plugin) is reached if\n"
      "that file imports it: run blockbloom doctor on that file.\n",
      f);
  return kExitNotReached;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kMainUsage, stderr);
    return kExitUsage;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help" || name == "-help") {
    std::fputs(kMainUsage, stdout);
    return 0;
  }
  if (name == "--version" || name == "-version") {
    std::printf("blockbloom %s\n", blockbloom_version());
    return 0;
  }
  const Command* cmd = nullptr;
  for (const Command& c : Commands()) {
    if (name == c.name) cmd = &c;
  }
  if (cmd == nullptr) {
    std::fprintf(stderr, "blockbloom: unknown command '%s'\n\n%s", name.c_str(), kMainUsage);
    return kExitUsage;
  }
  std::vector<char*> rest = {argv[0]};
  for (int i = 2; i < argc; ++i) rest.push_back(argv[i]);
  for (size_t i = 1; i < rest.size(); ++i) {
    const std::string_view a = rest[i];
    if (a == "--") break;
    if (a == "--help" || a == "-h" || a == "-help" || a == "--helpfull") {
      std::fputs(cmd->usage, stdout);
      return 0;
    }
  }
  for (size_t i = 1; i < rest.size() && std::string_view(rest[i]) != "--"; ++i) {
    if (std::string flag = FlagName(rest[i]); !flag.empty()) GivenFlags().insert(flag);
  }
  if (std::optional<std::string> bad = ForeignFlag(rest, *cmd)) {
    return UsageError(absl::StrFormat("%s does not take %s", cmd->name, *bad), cmd->usage);
  }
  std::string error;
  const std::optional<std::vector<char*>> parsed = ParseFlags(rest, *cmd, &error);
  if (!parsed.has_value()) return UsageError(error, cmd->usage);
  const std::vector<char*>& positional = *parsed;
  const int code = name == "calc"     ? Calc(positional)
                   : name == "build"  ? Build(positional)
                   : name == "query"  ? Query(positional)
                   : name == "doctor" ? Doctor(positional)
                                      : Inspect(positional);
  // Every command reports on stdout: a report that could not be written (a
  // full disk) is said on stderr, never lost in silence, and turns a success
  // into an I/O error (inspect's 3 and doctor's 4 stay: they are the answer,
  // and the message says the report is missing).
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fprintf(stderr, "blockbloom %s: cannot write the output: %s\n", cmd->name,
                 std::strerror(errno));
    return code == 0 ? kExitIo : code;
  }
  return code;
}

}  // namespace
}  // namespace tool
}  // namespace blockbloom

int main(int argc, char** argv) { return blockbloom::tool::Main(argc, argv); }
