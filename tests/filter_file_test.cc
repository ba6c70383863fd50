// Standalone filter files: round trips of every structure through disk (read
// and mmap paths), a clear error for every truncation and every bit flip,
// and the specific message for each kind of damage.
#include "blockbloom/filter_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <vector>
#include <chrono>
#include <cstdio>
#include <future>
#include <fstream>
#include <sstream>
#include <string>

#include "blockbloom/hash.h"
#include "common/coding.h"
#include "sanitizers.h"
#include "test_keys.h"
#include "test_paths.h"

namespace blockbloom {
namespace {

using testing_keys::Key;
using testing_keys::SplitMix64;

std::string TempPath(const std::string& name) { return TestPath(name); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// One small filter of every kind holding keys [0, n).
std::vector<std::pair<std::string, std::string>> SmallFiles(uint64_t n) {
  auto blocked = BlockedBloomFilter::Create(n, 10);
  auto standard = StandardBloomFilter::CreateForFpr(n, 0.01, HashScheme::kDoubleHashing);
  auto partitioned = PartitionedBloomFilter::CreateForFpr(n, 0.01);
  ScalableBloomOptions o;
  o.initial_capacity = n / 8 + 1;
  auto scalable = ScalableBloomFilter::Create(o);
  for (uint64_t i = 0; i < n; ++i) {
    blocked->AddKey(Key(i));
    standard->AddKey(Key(i));
    partitioned->AddKey(Key(i));
    scalable->AddKey(Key(i));
  }
  return {{"blocked", EncodeFilterFile(*blocked, n, 0.0096)},
          {"standard", EncodeFilterFile(*standard, n, 0.01)},
          {"partitioned", EncodeFilterFile(*partitioned, n, 0.01)},
          {"scalable", EncodeFilterFile(*scalable, n, 0.01)}};
}

TEST(FilterFileTest, EveryStructureRoundTripsThroughDiskBothWays) {
  constexpr uint64_t kKeys = 300000;  // ~360 KB: big enough to map
  auto blocked = BlockedBloomFilter::Create(kKeys, 10);
  auto standard = StandardBloomFilter::CreateForFpr(kKeys, 0.01);
  auto partitioned = PartitionedBloomFilter::CreateForFpr(kKeys, 0.01);
  auto scalable = ScalableBloomFilter::Create(kKeys / 10, 0.01);
  for (uint64_t i = 0; i < kKeys; ++i) {
    blocked->AddKey(Key(2 * i));
    standard->AddKey(Key(2 * i));
    partitioned->AddKey(Key(2 * i));
    scalable->AddKey(Key(2 * i));
  }
  const std::string path = TempPath("roundtrip.bbf");
  for (FilterKind kind : {FilterKind::kBlocked, FilterKind::kStandard, FilterKind::kPartitioned,
                          FilterKind::kScalable}) {
    absl::Status s;
    switch (kind) {
      case FilterKind::kBlocked:
        s = SaveFilterFile(path, *blocked, kKeys, 0.0096);
        break;
      case FilterKind::kStandard:
        s = SaveFilterFile(path, *standard, kKeys, 0.01);
        break;
      case FilterKind::kPartitioned:
        s = SaveFilterFile(path, *partitioned, kKeys, 0.01);
        break;
      case FilterKind::kScalable:
        s = SaveFilterFile(path, *scalable, kKeys, 0.01);
        break;
    }
    ASSERT_TRUE(s.ok()) << s;
    for (bool mmap : {false, true}) {
      LoadOptions options;
      options.allow_mmap = mmap;
      options.mmap_threshold = 0;
      absl::StatusOr<LoadedFilter> loaded = LoadFilterFile(path, options);
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      EXPECT_EQ(loaded->info().mmapped, mmap);
      EXPECT_EQ(loaded->info().kind, kind);
      EXPECT_EQ(loaded->info().num_keys, kKeys);
      EXPECT_EQ(loaded->info().file_bytes, ReadAll(path).size());
      // The loaded filter re-encodes to the very same file.
      EXPECT_EQ(EncodeFilterFile(loaded->filter(), kKeys, loaded->info().target_fpr), ReadAll(path))
          << FilterKindName(kind);
      uint64_t hits = 0;
      for (uint64_t i = 0; i < 200000; ++i) {
        ASSERT_TRUE(loaded->MayContain(Key(2 * i))) << FilterKindName(kind);
        hits += loaded->MayContain(Key(2 * i + 1));
      }
      const double measured = hits / 200000.0;
      EXPECT_NEAR(measured, loaded->PredictedFpr(), 0.003) << FilterKindName(kind);
    }
  }
}

// Found by fuzz/variants_oracle (corpus seed3_0): a scalable filter saved with
// a count other than its own num_added() (distinct keys instead of adds) was
// written with a header its own loader rejects. The header now takes the
// filter's count.
TEST(FilterFileTest, ScalableFileLoadsWhateverCountTheCallerPassed) {
  ScalableBloomOptions o;
  o.initial_capacity = 4;
  auto scalable = ScalableBloomFilter::Create(o);
  ASSERT_TRUE(scalable.ok());
  for (uint64_t i = 0; i < 20; ++i) {
    scalable->AddKey(Key(i % 10));  // 20 adds of 10 distinct keys
  }
  for (uint64_t n : {uint64_t{0}, uint64_t{10}, uint64_t{20}, ~uint64_t{0}}) {
    const std::string file = EncodeFilterFile(*scalable, n, 0.01);
    auto loaded = DecodeFilterFile(file);
    ASSERT_TRUE(loaded.ok()) << "count " << n << ": " << loaded.status();
    EXPECT_EQ(loaded->info().num_keys, 20u);
    for (uint64_t i = 0; i < 10; ++i) EXPECT_TRUE(loaded->MayContain(Key(i)));
    EXPECT_EQ(EncodeFilterFile(loaded->filter(), loaded->info().num_keys, 0.01), file);
  }
}

TEST(FilterFileTest, LargeFilesLoadByMmapByDefault) {
  auto big = BlockedBloomFilter::Create(2000000, 10);  // 2.5 MB > 1 MiB threshold
  for (uint64_t i = 0; i < 1000; ++i) big->AddKey(Key(i));
  const std::string path = TempPath("big.bbf");
  ASSERT_TRUE(SaveFilterFile(path, *big, 1000).ok());
  absl::StatusOr<LoadedFilter> loaded = LoadFilterFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->info().mmapped);
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(loaded->MayContain(Key(i)));
}

TEST(FilterFileTest, EveryTruncationIsAClearError) {
  for (const auto& [name, bytes] : SmallFiles(200)) {
    for (size_t len = 0; len < bytes.size(); ++len) {
      absl::StatusOr<LoadedFilter> f = DecodeFilterFile(std::string_view(bytes).substr(0, len));
      ASSERT_FALSE(f.ok()) << name << " len " << len;
      ASSERT_EQ(f.status().code(), absl::StatusCode::kDataLoss);
      const std::string msg(f.status().message());
      EXPECT_TRUE(msg.find("truncated") != std::string::npos) << name << ": " << msg;
    }
    // Also through the file path, read and mmap.
    const std::string path = TempPath(name + "_cut.bbf");
    WriteAll(path, bytes.substr(0, bytes.size() - 1));
    for (uint64_t threshold : {uint64_t{0}, uint64_t{1} << 40}) {
      LoadOptions o;
      o.mmap_threshold = threshold;
      EXPECT_EQ(LoadFilterFile(path, o).status().code(), absl::StatusCode::kDataLoss);
    }
  }
}

TEST(FilterFileTest, EveryBitFlipIsRejected) {
  for (const auto& [name, bytes] : SmallFiles(100)) {
    ASSERT_TRUE(DecodeFilterFile(bytes).ok()) << name;
    for (size_t i = 0; i < bytes.size(); ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string damaged = bytes;
        damaged[i] ^= static_cast<char>(1 << bit);
        ASSERT_FALSE(DecodeFilterFile(damaged).ok()) << name << " byte " << i << " bit " << bit;
      }
    }
  }
  // Random multi-bit damage to a larger file.
  auto f = StandardBloomFilter::CreateForFpr(50000, 0.01);
  for (uint64_t i = 0; i < 50000; ++i) f->AddKey(Key(i));
  const std::string bytes = EncodeFilterFile(*f, 50000, 0.01);
  SplitMix64 rng(99);
  for (int trial = 0; trial < 300; ++trial) {
    std::string damaged = bytes;
    const int flips = 1 + static_cast<int>(rng.Next() % 8);
    for (int j = 0; j < flips; ++j) {
      const uint64_t bit = rng.Next() % (8 * damaged.size());
      damaged[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    }
    if (damaged == bytes) continue;  // the flips cancelled out
    ASSERT_EQ(DecodeFilterFile(damaged).status().code(), absl::StatusCode::kDataLoss) << trial;
  }
}

// Rewrites the checksum so a test can reach the checks behind it.
std::string Reseal(std::string bytes) {
  const size_t body = bytes.size() - 8;
  internal::EncodeFixed64(&bytes[body], HashBytes(bytes.data(), body));
  return bytes;
}

std::string ErrorOf(const std::string& bytes) {
  absl::StatusOr<LoadedFilter> f = DecodeFilterFile(bytes);
  return f.ok() ? "OK" : std::string(f.status().message());
}

TEST(FilterFileTest, EachDamageHasItsOwnMessage) {
  const std::string good = SmallFiles(50)[1].second;  // standard
  ASSERT_EQ(ErrorOf(good), "OK");
  const auto has = [](const std::string& msg, const char* word) {
    return msg.find(word) != std::string::npos;
  };
  std::string bad = good;
  bad[0] = 'X';
  EXPECT_TRUE(has(ErrorOf(bad), "bad magic")) << ErrorOf(bad);
  bad = good;
  bad[8] = 2;  // version 2
  EXPECT_TRUE(has(ErrorOf(Reseal(bad)), "unsupported format version 2")) << ErrorOf(bad);
  bad = good + "x";
  EXPECT_TRUE(has(ErrorOf(bad), "size mismatch")) << ErrorOf(bad);
  bad = good;
  bad[70] ^= 1;  // a filter byte
  EXPECT_TRUE(has(ErrorOf(bad), "checksum mismatch")) << ErrorOf(bad);
  bad = good;
  bad[12] = 9;  // structure id 9
  EXPECT_TRUE(has(ErrorOf(Reseal(bad)), "unknown structure id 9")) << ErrorOf(Reseal(bad));
  bad = good;
  bad[12] = 3;  // says partitioned: the payload is not one
  EXPECT_TRUE(has(ErrorOf(Reseal(bad)), "partitioned filter")) << ErrorOf(Reseal(bad));
  bad = good;
  bad[32] ^= 1;  // k in the header disagrees with the payload's
  EXPECT_TRUE(has(ErrorOf(Reseal(bad)), "do not match")) << ErrorOf(Reseal(bad));
  bad = good;
  bad[60] = 1;  // reserved
  EXPECT_TRUE(has(ErrorOf(Reseal(bad)), "reserved")) << ErrorOf(Reseal(bad));
  // The target FPR (f64 at offset 40) must be in [0, 1): 1.0, -0.5 and NaN
  // are damage (filter_file.h lists this check).
  for (uint64_t fpr_bits :
       {uint64_t{0x3FF0000000000000}, uint64_t{0xBFE0000000000000}, uint64_t{0x7FF8000000000000}}) {
    bad = good;
    for (int i = 0; i < 8; ++i) bad[40 + i] = static_cast<char>(fpr_bits >> (8 * i));
    EXPECT_TRUE(has(ErrorOf(Reseal(bad)), "target FPR out of range")) << ErrorOf(Reseal(bad));
  }
}

// In a death test's child: caps the address space at 16 MiB above what the
// process uses, decodes `bytes`, prints the status and exits 0 when it is
// ResourceExhausted (1 for another error, 2 for OK, 9 if the cap failed).
void DecodeUnderAddressSpaceCap(const std::string& bytes) {
  long pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  const rlim_t limit = static_cast<rlim_t>(pages) * ::sysconf(_SC_PAGESIZE) + (16 << 20);
  struct rlimit rl;
  rl.rlim_cur = limit;
  rl.rlim_max = limit;
  if (::setrlimit(RLIMIT_AS, &rl) != 0) std::_Exit(9);
  const absl::StatusOr<LoadedFilter> loaded = DecodeFilterFile(bytes);
  std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
  std::_Exit(loaded.status().code() == absl::StatusCode::kResourceExhausted ? 0
             : loaded.ok()                                                  ? 2
                                                                            : 1);
}

// A sound file that cannot be loaded for want of memory is ResourceExhausted,
// not DataLoss: a caller that discards damaged files must not discard it.
// The child process of a death test caps its address space a little above
// what it uses, so the filter's 64 MiB copy cannot be allocated.
TEST(FilterFileTest, AllocationFailureIsNotReportedAsDamage) {
  if (testing_build::kUnderSanitizer) GTEST_SKIP() << "sanitizers reserve address space";
  absl::StatusOr<StandardBloomFilter> standard =
      StandardBloomFilter::CreateWithGeometry(uint64_t{1} << 29, 3);  // 64 MiB
  ASSERT_TRUE(standard.ok()) << standard.status();
  standard->AddKey("key");
  const std::string file = EncodeFilterFile(*standard, 1);
  standard = absl::UnknownError("freed");
  ScalableBloomOptions o;
  o.initial_capacity = uint64_t{1} << 25;  // one stage of ~57 MiB
  absl::StatusOr<ScalableBloomFilter> scalable = ScalableBloomFilter::Create(o);
  ASSERT_TRUE(scalable.ok()) << scalable.status();
  const std::string scalable_file = EncodeFilterFile(*scalable, 0);
  scalable = absl::UnknownError("freed");
  for (const std::string* bytes : {&file, &scalable_file}) {
    EXPECT_EXIT(DecodeUnderAddressSpaceCap(*bytes), ::testing::ExitedWithCode(0),
                "RESOURCE_EXHAUSTED");
  }
}

TEST(FilterFileTest, OsErrorsAreReported) {
  EXPECT_EQ(LoadFilterFile(TempPath("does-not-exist.bbf")).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(LoadFilterFile(::testing::TempDir()).status().code(),
            absl::StatusCode::kInvalidArgument);  // a directory
  auto f = BlockedBloomFilter::Create(10, 10);
  EXPECT_FALSE(SaveFilterFile(TempPath("no/such/dir/x.bbf"), *f, 0).ok());
  // A failed save leaves the previous file intact.
  const std::string path = TempPath("keep.bbf");
  ASSERT_TRUE(SaveFilterFile(path, *f, 0).ok());
  const std::string before = ReadAll(path);
  ASSERT_TRUE(SaveFilterFile(path, *f, 0).ok());
  EXPECT_EQ(ReadAll(path), before);
}

// A FIFO (or any file that is not a regular one) is refused at once, as a
// directory is: open(2) without O_NONBLOCK waited for a writer forever, so
// the "not a regular file" check was never reached.
TEST(FilterFileTest, FifoIsRefusedWithoutWaitingForAWriter) {
  const std::string path = TempPath("fifo.bbf");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
  std::future<absl::Status> load =
      std::async(std::launch::async, [&] { return LoadFilterFile(path).status(); });
  const bool done = load.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  EXPECT_TRUE(done) << "LoadFilterFile blocked on a FIFO";
  if (!done) {
    // Release the blocked open (a writer arrives and leaves: end of file).
    const int writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer >= 0) ::close(writer);
  }
  EXPECT_EQ(load.get().code(), absl::StatusCode::kInvalidArgument);
  ::unlink(path.c_str());
}

// A symbolic link planted at the temporary name is refused, not written
// through: the file it points to is left as it was.
TEST(FilterFileTest, SymlinkAtTheTemporaryNameIsNotFollowed) {
  const std::string victim = TempPath("victim");
  WriteAll(victim, "precious");
  const std::string tmp = TempPath("planted.tmp");
  ASSERT_EQ(::symlink(victim.c_str(), tmp.c_str()), 0);
  const absl::Status s = WriteFileAtomically(TempPath("target.bbf"), tmp, "new bytes");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(ReadAll(victim), "precious");
  struct stat st;
  EXPECT_NE(::stat(TempPath("target.bbf").c_str(), &st), 0);
  ::unlink(tmp.c_str());
}

// A temporary name already taken (here a symbolic link, as a crashed
// process with this pid or another user could leave one) is skipped for the
// next one: the save succeeds, the link's target is untouched and the
// leftover is left where it was. The name the next save will try is read
// from a failed save's error message (the per-process count goes up by one
// per save). Fails with O_TRUNC in place of O_EXCL, with EEXIST not mapped
// to AlreadyExists, without the retry, and with a count that does not advance.
TEST(FilterFileTest, TakenTemporaryNameIsSkippedForTheNextOne) {
  const std::string dir = TempPath("taken-tmp");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  const std::string path = dir + "/f.bbf";
  // A save into a missing directory fails at the temporary's creation and
  // names it: "<path>.tmp.<pid>.<count>".
  const std::string missing = dir + "/no-such-dir/f.bbf";
  const absl::Status failed = WriteFileAtomically(missing, "x");
  ASSERT_FALSE(failed.ok());
  const std::string prefix = missing + ".tmp." + std::to_string(::getpid()) + ".";
  const std::string message(failed.message());
  const size_t at = message.find(prefix);
  ASSERT_NE(at, std::string::npos) << message;
  const uint64_t count = std::stoull(message.substr(at + prefix.size()));
  const std::string victim = TempPath("taken-tmp-victim");
  WriteAll(victim, "precious");
  const std::string taken =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(count + 1);
  ASSERT_EQ(::symlink(victim.c_str(), taken.c_str()), 0) << taken;
  const absl::Status s = WriteFileAtomically(path, "new bytes");
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(ReadAll(path), "new bytes");
  EXPECT_EQ(ReadAll(victim), "precious");
  struct stat st;
  EXPECT_EQ(::lstat(taken.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 2);  // f.bbf and the leftover: no temporary of ours
  ::unlink(taken.c_str());
}

}  // namespace
}  // namespace blockbloom
