// The key-level probes of src/blocked/key_probe-inl.h (hash + trailer parse +
// in-register probe, one function per Highway target) against the scalar
// composition they replace: HashBytes, then blocked::ParseFilter, then the
// scalar kernels of simd/blocked_kernel.h. Registered once per compiled
// target (HWY_EXPORT_AND_TEST_P), so a failure names its target; then the
// dispatched pointers (blocked/key_probe.h) under every target forced in
// turn, and the LevelDB policies whose KeyMayMatch is compiled for one
// target (policy/blocked_policy.h).
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "blocked_key_probe_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "blockbloom/hash.h"
#include "blocked/format.h"
#include "blocked/key_probe-inl.h"
#include "blocked/key_probe.h"
#include "blocked_kernel.h"
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"
#include "test_keys.h"

#ifndef BLOCKBLOOM_KEY_PROBE_TEST_ONCE
#define BLOCKBLOOM_KEY_PROBE_TEST_ONCE
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "blocked_bloom_simd.h"
#include "policy/blocked_policy.h"
#include "policy/filter_sizing.h"
#include "targets.h"
namespace blockbloom {
namespace key_probe_test {

// The scalar composition: what every target must answer (1, 0, or -1 for
// "not a blocked filter").
inline int Reference(const std::string& key, const std::string& filter) {
  if (filter.size() < 2 || static_cast<uint8_t>(filter.back()) != blocked::kMarker) return -1;
  blocked::FilterView view;
  if (!blocked::ParseFilter(filter, &view)) return 1;
  if (view.num_bytes == 0) return 0;
  const uint64_t h = HashKey(key);
  const uint64_t bits = view.num_bytes * 8;
  return (view.geometry == blocked::Geometry::kFlat
              ? blocked::flat::MayContainHash(h, bits, view.num_probes, view.bits)
              : blocked::MayContainHash(h, bits, view.num_probes, view.bits))
             ? 1
             : 0;
}

// A filter as the policies write it: n keys "k<2i>" (testing_keys::Key), at
// the geometry AppendFilter picks for `bytes` bit bytes, k probes.
inline std::string Filter(size_t n, uint64_t bytes, int k) {
  std::vector<std::string> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = testing_keys::Key(2 * i);
  std::string out;
  blocked::AppendFilter(
      n, bytes, k, [&](size_t i) -> std::string_view { return keys[i]; }, &out);
  return out;
}

// Filters of every geometry plus damaged and foreign encodings.
inline std::vector<std::string> Filters() {
  std::vector<std::string> out;
  for (size_t n : {0, 1, 10, 40, 200, 3000}) {
    for (int k : {1, 6, 7, 9, 16}) {
      const uint64_t bytes = (n * 10 + 7) / 8;  // flat up to 512 bytes, blocked above
      out.push_back(Filter(n, bytes, k));
    }
  }
  const std::string good = Filter(100, 125, 7);
  std::string bad = good;
  bad[bad.size() - 3] = 0;  // k = 0
  out.push_back(bad);
  bad = good;
  bad[bad.size() - 2] = 0x30;  // unknown version
  out.push_back(bad);
  out.push_back(good.substr(good.size() - 2));  // 2 bytes ending in the marker
  out.push_back(std::string(1, static_cast<char>(blocked::kMarker)));
  out.push_back(std::string());
  out.push_back(std::string(100, '\x07'));  // a LevelDB built-in filter's last byte
  out.push_back(std::string(600, '\0') + std::string("\x07\x20\xBB", 3));  // flat, too long
  // Every edge of the trailer word the probe reads at once (bits byte | k |
  // version | marker): each version byte near the two valid ones, k at and
  // past each bound, on bodies of 0, 1 and 64 bytes.
  for (size_t body : {0, 1, 64}) {
    for (int version : {0x00, 0x12, 0x13, 0x14, 0x1F, 0x20, 0x21, 0x33, 0xFF}) {
      for (int k : {0, 1, 2, 8, 16, 17, 30, 31, 128, 255}) {
        std::string f(body, '\x5A');
        f.push_back(static_cast<char>(k));
        f.push_back(static_cast<char>(version));
        f.push_back(static_cast<char>(blocked::kMarker));
        out.push_back(f);
      }
    }
  }
  return out;
}

// Queries: the present keys of the largest filter, absent ones, odd lengths.
inline std::vector<std::string> Queries() {
  std::vector<std::string> q;
  for (size_t i = 0; i < 3000; ++i) q.push_back(testing_keys::Key(2 * i));
  for (size_t i = 0; i < 2000; ++i) q.push_back(testing_keys::Key(2 * i + 1));
  for (const std::string& k : testing_keys::RandomLengthKeys(300, 5)) q.push_back(k);
  return q;
}

// Zeroed bytes that become memory only where touched (an anonymous
// MAP_NORESERVE mapping, ordinary pages): filters larger than 2^32 bits at
// the cost of the lines their keys set.
class SparseBytes {
 public:
  explicit SparseBytes(uint64_t n) : size_(static_cast<size_t>(n)) {
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return;
    data_ = static_cast<uint8_t*>(p);
    ::madvise(p, size_, MADV_NOHUGEPAGE);  // page counts below stay per 4 KiB page
  }
  ~SparseBytes() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }
  SparseBytes(const SparseBytes&) = delete;
  SparseBytes& operator=(const SparseBytes&) = delete;

  bool ok() const { return data_ != nullptr; }
  uint8_t* data() const { return data_; }
  // Pages backed by memory (mincore): the ones written or read.
  size_t ResidentPages() const {
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in_core((size_ + page - 1) / page);
    if (::mincore(data_, size_, in_core.data()) != 0) return 0;
    size_t n = 0;
    for (unsigned char c : in_core) n += c & 1;
    return n;
  }

 private:
  size_t size_;
  uint8_t* data_ = nullptr;
};

}  // namespace key_probe_test
}  // namespace blockbloom
#endif  // BLOCKBLOOM_KEY_PROBE_TEST_ONCE

HWY_BEFORE_NAMESPACE();
namespace blockbloom {
namespace HWY_NAMESPACE {

// Each filter sits at the end of an exact-size heap buffer, so ASan flags a
// read past it.
HWY_NOINLINE void TestEncodedMatchesScalarComposition() {
  const std::vector<std::string> queries = key_probe_test::Queries();
  for (const std::string& filter : key_probe_test::Filters()) {
    std::unique_ptr<char[]> exact(new char[filter.size() + 1]);
    if (!filter.empty()) std::memcpy(exact.get(), filter.data(), filter.size());
    for (const std::string& key : queries) {
      ASSERT_EQ(EncodedKeyMayMatch(key.data(), key.size(), exact.get(), filter.size()),
                key_probe_test::Reference(key, filter))
          << hwy::TargetName(HWY_TARGET) << " filter bytes=" << filter.size() << " key=" << key;
    }
  }
}

HWY_NOINLINE void TestRawMatchesScalar() {
  const std::vector<std::string> queries = key_probe_test::Queries();
  for (const std::string& filter : key_probe_test::Filters()) {
    blocked::FilterView view;
    if (!blocked::ParseFilter(filter, &view)) continue;
    const bool flat = view.geometry == blocked::Geometry::kFlat;
    for (const std::string& key : queries) {
      const int expected = key_probe_test::Reference(key, filter);
      ASSERT_EQ(MayContainKey(key.data(), key.size(), view.num_bytes * 8, view.num_probes,
                              view.bits, flat),
                expected == 1)
          << hwy::TargetName(HWY_TARGET) << " bytes=" << view.num_bytes << " key=" << key;
    }
  }
}

// The fused build (hash and set in one loop) writes the bytes of hashing
// every key with HashKey and adding it with the scalar kernel: flat, blocked
// in cache, and blocked over simd::kPrefetchMinBytes (the rolling window of
// hashes ahead), at key counts below, at and above the window, over prior
// contents. Each filter sits at the end of an exact-size heap buffer, so
// ASan flags a write past it.
HWY_NOINLINE void TestAddKeysMatchesScalarComposition() {
  const std::vector<std::string> all = testing_keys::RandomLengthKeys(700, 11);
  // (bytes, flat): the writers' geometry for each size; sizes up to 512
  // bytes in both geometries (AddHashesByteMap), whose bits are and are not
  // a whole number of vectors (its map is rounded up to whole vectors); and
  // the blocked geometry of one block (1-64 bytes: the class's small
  // filters, whose keys all land in the one block, built in registers on
  // AVX2/AVX-512).
  const std::pair<uint64_t, bool> kSizes[] = {
      {1, true},   {3, true},    {33, true},   {100, true},
      {255, true}, {512, true},  {513, false}, {4000, false},
      {1, false},  {25, false},  {63, false},  {64, false},
      {65, false}, {200, false}, {512, false}, {simd::kPrefetchMinBytes + 65, false}};
  for (const auto& [bytes, flat] : kSizes) {
    for (const size_t n : {size_t{0}, size_t{1}, simd::kDefaultWindow - 1, simd::kDefaultWindow,
                           simd::kDefaultWindow + 1, all.size()}) {
      for (const int k : {1, 7, 8, 9, 16}) {
        std::vector<uint8_t> expected(bytes);
        for (size_t i = 0; i < bytes; i += 3) expected[i] = static_cast<uint8_t>(i * 37);
        std::unique_ptr<uint8_t[]> got(new uint8_t[bytes]);
        std::memcpy(got.get(), expected.data(), bytes);
        for (size_t i = 0; i < n; ++i) {
          const uint64_t h = HashKey(all[i]);
          if (flat) {
            blocked::flat::AddHash(h, bytes * 8, k, expected.data());
          } else {
            blocked::AddHash(h, bytes * 8, k, expected.data());
          }
        }
        // Keys past n are never asked for (the rolling window's first fill
        // and refills stop at n): counted, and answered from inside `all`.
        size_t asked_past_n = 0;
        AddKeys(
            n,
            [&](size_t i) -> const std::string& {
              asked_past_n += i >= n;
              return all[std::min(i, all.size() - 1)];
            },
            bytes * 8, k, got.get(), flat);
        ASSERT_EQ(asked_past_n, 0u)
            << hwy::TargetName(HWY_TARGET) << " bytes=" << bytes << " n=" << n << " k=" << k;
        ASSERT_TRUE(std::equal(expected.begin(), expected.end(), got.get()))
            << hwy::TargetName(HWY_TARGET) << " bytes=" << bytes << " n=" << n << " k=" << k;
      }
    }
  }
}

// A filter above 2^32 bits (2^33 + 320: 1 GiB and a short last block),
// where a key's block offset needs the whole 64-bit range reduction: the
// fused build sets the reference's bytes in every key's line (at k = 7 and
// k = 16, one and two vectors of probes), writes no page the reference does
// not, and the per-target probe finds every key. The two filters are sparse
// mappings: only the pages of the keys' lines become memory.
HWY_NOINLINE void TestAddKeysAboveFourGibibits() {
  constexpr uint64_t kBytes = (uint64_t{1} << 30) + 40;
  constexpr uint64_t kBits = kBytes * 8;
  key_probe_test::SparseBytes want(kBytes), got(kBytes);
  ASSERT_TRUE(want.ok() && got.ok()) << "cannot map 2 x 1 GiB";
  const std::vector<std::string> keys = testing_keys::RandomLengthKeys(2000, 23);
  for (const int k : {7, 16}) {
    for (const std::string& key : keys) blocked::AddHash(HashKey(key), kBits, k, want.data());
    AddKeys(
        keys.size(), [&](size_t i) -> const std::string& { return keys[i]; }, kBits, k, got.data(),
        /*flat=*/false);
  }
  // Before any comparison reads a page: a stray write shows as an extra page.
  const size_t pages = want.ResidentPages();
  EXPECT_GT(pages, keys.size() / 2);
  EXPECT_EQ(got.ResidentPages(), pages) << hwy::TargetName(HWY_TARGET);
  for (const std::string& key : keys) {
    const uint64_t h = HashKey(key);
    const blocked::Block b = blocked::LocateBlock(h, kBits);
    const uint64_t at = b.first_bit / 8;
    ASSERT_EQ(std::memcmp(want.data() + at, got.data() + at, b.num_bits / 8), 0)
        << hwy::TargetName(HWY_TARGET) << " line at byte " << at;
    for (const int k : {7, 16}) {
      ASSERT_TRUE(MayContainKey(key.data(), key.size(), kBits, k, got.data(), false))
          << hwy::TargetName(HWY_TARGET) << " k=" << k;
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace blockbloom
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace blockbloom {
HWY_BEFORE_TEST(KeyProbePerTarget);
HWY_EXPORT_AND_TEST_P(KeyProbePerTarget, TestEncodedMatchesScalarComposition);
HWY_EXPORT_AND_TEST_P(KeyProbePerTarget, TestRawMatchesScalar);
HWY_EXPORT_AND_TEST_P(KeyProbePerTarget, TestAddKeysMatchesScalarComposition);
HWY_EXPORT_AND_TEST_P(KeyProbePerTarget, TestAddKeysAboveFourGibibits);

namespace {

class KeyProbeDispatch : public ::testing::Test {
 protected:
  void TearDown() override { simd::ForceTargetForTesting(0); }
};

// The pointers resolved once per process follow ForceTargetForTesting, and
// equal the per-target entry points; every present key is found.
TEST_F(KeyProbeDispatch, EveryForcedTargetAnswersAsTheScalarComposition) {
  const std::vector<std::string> queries = key_probe_test::Queries();
  const std::vector<std::string> filters = key_probe_test::Filters();
  for (int64_t target : simd::SupportedTargets()) {
    simd::ForceTargetForTesting(target);
    const blocked::EncodedKeyMayMatchFn fn = blocked::EncodedKeyMayMatchForTarget(target);
    ASSERT_NE(fn, nullptr) << simd::TargetName(target);
    ASSERT_NE(blocked::MayContainKeyForTarget(target), nullptr);
    // The retarget hook re-resolved the process-wide pointers.
    EXPECT_EQ(internal::g_encoded_key_may_match.load(), fn) << simd::TargetName(target);
    EXPECT_EQ(internal::g_may_contain_key.load(), blocked::MayContainKeyForTarget(target));
    EXPECT_EQ(simd::internal::g_may_contain_hash.load(), simd::MayContainHashForTarget(target));
    for (const std::string& filter : filters) {
      for (const std::string& key : queries) {
        const int expected = key_probe_test::Reference(key, filter);
        ASSERT_EQ(blocked::EncodedKeyMayMatch(key.data(), key.size(), filter.data(), filter.size()),
                  expected)
            << simd::TargetName(target);
        ASSERT_EQ(fn(key.data(), key.size(), filter.data(), filter.size()), expected);
      }
    }
  }
  // No false negatives: the 3000-key filter holds Key(0), Key(2), ...
  const std::string big = key_probe_test::Filter(3000, 3750, 7);
  for (size_t i = 0; i < 3000; ++i) {
    const std::string key = testing_keys::Key(2 * i);
    ASSERT_EQ(blocked::EncodedKeyMayMatch(key.data(), key.size(), big.data(), big.size()), 1);
  }
}

// The dispatched build follows ForceTargetForTesting, and every target's
// policy writes blocked::AppendFilter's bytes (the hash-then-add reference)
// at LevelDB's small flat sizes and at blocked ones in and out of cache.
TEST_F(KeyProbeDispatch, EveryTargetBuildsTheReferenceBytes) {
  std::vector<std::string> keys = testing_keys::RandomLengthKeys(30000, 17);
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::vector<std::string_view> views(keys.begin(), keys.end());
  for (int64_t target : simd::SupportedTargets()) {
    simd::ForceTargetForTesting(target);
    ASSERT_NE(blocked::AddKeysForTarget(target), nullptr) << simd::TargetName(target);
    EXPECT_EQ(internal::g_add_keys.load(), blocked::AddKeysForTarget(target));
    // 0 to 7 keys (flat filters of at most 64 bits are built in one
    // register: up to 6 keys at 10 bits/key), flat in the byte map (<= 409
    // keys at 10 bits/key) and beyond it (flat up to millions of keys: the
    // blocked geometry's paths are covered by the class API below).
    for (double bits_per_key : {4.0, 10.0, 23.0}) {
      std::unique_ptr<const internal::BlockedPolicy> policy(
          internal::NewBlockedPolicyForTarget(target, bits_per_key, "test.policy", false));
      ASSERT_NE(policy, nullptr);
      const internal::FilterSizing sizing(bits_per_key);
      for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{5}, size_t{6}, size_t{7},
                       size_t{20}, size_t{409}, size_t{410}, keys.size()}) {
        std::string want = "prefix";
        std::string got = want;
        const internal::BloomLayout layout = sizing.Bloom(n);
        blocked::AppendFilter(
            n, layout.bytes, layout.num_probes, layout.geometry,
            [&](size_t i) -> std::string_view { return keys[i]; }, &want);
        policy->CreateFilter(slices.data(), static_cast<int>(n), &got);
        ASSERT_EQ(got, want) << simd::TargetName(target) << " n=" << n
                             << " bits/key=" << bits_per_key;
      }
    }
    // The class API: many keys' worth of bits, few keys, through the
    // dispatched pointer; same bytes as AddHashes of their hashes.
    for (uint64_t capacity : {uint64_t{100}, uint64_t{5000}, uint64_t{400000}}) {
      auto by_keys = BlockedBloomFilter::Create(capacity, 10);
      auto by_hashes = BlockedBloomFilter::Create(capacity, 10);
      ASSERT_TRUE(by_keys.ok() && by_hashes.ok());
      const size_t n = std::min<size_t>(views.size(), capacity);
      by_keys->AddKeys(absl::MakeConstSpan(views.data(), n));
      std::vector<uint64_t> hashes(n);
      for (size_t i = 0; i < n; ++i) hashes[i] = HashKey(views[i]);
      by_hashes->AddHashes(hashes);
      ASSERT_EQ(by_keys->Serialize(), by_hashes->Serialize())
          << simd::TargetName(target) << " capacity=" << capacity;
      EXPECT_EQ(by_keys->num_added(), n);
      for (size_t i = 0; i < n; ++i) ASSERT_TRUE(by_keys->MayContain(views[i]));
    }
  }
}

// The blocked policies are created as a subclass compiled for one target:
// for every target, the policy made for it reports that target and answers
// every filter (blocked, damaged, foreign, LevelDB's built-in) exactly as
// the generic path through the dispatched pointer, PolicyBase::KeyMayMatch,
// called non-virtually; the public factories follow a forced target.
TEST_F(KeyProbeDispatch, PolicyOfEveryTargetAnswersAsTheGenericPath) {
  const std::vector<std::string> queries = key_probe_test::Queries();
  std::vector<std::string> filters = key_probe_test::Filters();
  {  // LevelDB's built-in encoding, which the migrating policy reads.
    std::unique_ptr<const leveldb::FilterPolicy> builtin(leveldb::NewBloomFilterPolicy(10));
    std::vector<leveldb::Slice> keys;
    for (size_t i = 0; i < 200; ++i) keys.emplace_back(queries[i]);
    filters.emplace_back();
    builtin->CreateFilter(keys.data(), static_cast<int>(keys.size()), &filters.back());
  }
  for (int64_t target : simd::SupportedTargets()) {
    for (bool migrating : {false, true}) {
      std::unique_ptr<const internal::BlockedPolicy> policy(
          internal::NewBlockedPolicyForTarget(target, 10, "test.policy", migrating));
      ASSERT_NE(policy, nullptr) << simd::TargetName(target);
      EXPECT_EQ(policy->target(), target) << simd::TargetName(target);
      size_t ruled_out = 0;
      for (const std::string& filter : filters) {
        for (const std::string& key : queries) {
          const leveldb::Slice k(key), f(filter);
          const bool answer = policy->KeyMayMatch(k, f);
          ASSERT_EQ(answer, policy->PolicyBase::KeyMayMatch(k, f))
              << simd::TargetName(target) << " migrating " << migrating;
          const int reference = key_probe_test::Reference(key, filter);
          if (reference >= 0) ASSERT_EQ(answer, reference != 0) << simd::TargetName(target);
          ruled_out += !answer;
        }
      }
      EXPECT_GT(ruled_out, 0u);  // the test is not vacuous
    }
    simd::ForceTargetForTesting(target);
    for (const leveldb::FilterPolicy* made :
         {NewBlockedBloomFilterPolicy(10), NewMigratingFilterPolicy(10)}) {
      std::unique_ptr<const leveldb::FilterPolicy> owned(made);
      EXPECT_EQ(static_cast<const internal::BlockedPolicy*>(made)->target(), target)
          << simd::TargetName(target);
    }
    simd::ForceTargetForTesting(0);
  }
  // A target that is not compiled in gets no policy.
  EXPECT_EQ(internal::NewBlockedPolicyForTarget(0, 10, "test.policy", false), nullptr);
}

}  // namespace
}  // namespace blockbloom
#endif  // HWY_ONCE
