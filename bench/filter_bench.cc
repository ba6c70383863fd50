// Microbenchmarks: build and probe cost per key of blockbloom's blocked Bloom
// filter against LevelDB's built-in filter, a textbook Bloom filter and
// absl::flat_hash_set, for filters from 16 KiB (in L1) to 1 GiB (far beyond
// the last-level cache), next to two floors no filter can beat; and FPR
// against bits/key next to the closed-form models. scripts/run_bench.sh runs
// and plots it; bench/RESULTS.md shows its FPR table.
//
// Benchmark names are "<group>/<contender>/<mode>/<keys>/<filter bytes>":
//   build/<c>/whole/all/<B>          build a filter of B bytes from its n keys
//   probe/<c>/<mode>/<present|absent>/<B>
//        mode single       one call per key (KeyMayMatch, MayContain, ...)
//        mode batch_keys   one call per 4096 keys (keys in, hashing included)
//        mode batch_hashes one call per 4096 precomputed hashes
//   floor/hash/single/present/<B>       XXH3 of each key, nothing else
//   floor/line/<single|batch_hashes>/present/<B>   one random cache line read
//        per key from an array of B bytes (batch: prefetched like the probes)
//   floor/hash+line/batch_keys/present/<B>          both, per key
//   window/<c>/w<W>/absent/<B>          batch_hashes with prefetch window W
//   fpr/<structure>/b<bits>/absent/<n>  measured FPR next to the model
// Each probe iteration handles kKeysPerIter keys; counters give ns per key
// (ns_per_key, as an inverted rate) and, for probes, the fraction answered
// "may contain" (positive_rate: the FPR for absent keys).
//
// Contender names: blocked-best / blocked-scalar are blockbloom on the CPU's
// best Highway target and on the portable scalar one (EMU128); blocked is the
// single-key path (target-independent); bbpolicy is blockbloom's LevelDB
// policy; leveldb is leveldb::NewBloomFilterPolicy(10); textbook is
// bench/standard_bloom.h; hashset is absl::flat_hash_set of the 16-byte keys.
//
// Memory: at 1 GiB the suite holds the blocked and built-in filters (1 GiB
// each) and 2 x 8M probe keys, ~3 GiB in all; one filter size is kept alive
// at a time. The textbook filter stops at 256 MiB and the hash set at 16 MiB
// (its 13.4M keys); the LevelDB policies' builds stop at 16 MiB (CreateFilter
// needs every key as a Slice at once).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "bench_common.h"
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/hash.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "blockbloom/math.h"
#include "blocked_bloom_simd.h"
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"
#include "standard_bloom.h"

// LevelDB's key hash (util/hash.h). Not exported by libleveldb.so; the bench
// links it from libleveldb.a (bench/CMakeLists.txt) to write built-in-format
// filters too large for CreateFilter's Slice array (see LevelDbFormatFilter).
namespace leveldb {
uint32_t Hash(const char* data, size_t n, uint32_t seed);
}  // namespace leveldb

namespace blockbloom {
namespace bench {
namespace {

constexpr double kBitsPerKey = 10.0;
constexpr int kLevelDbBitsPerKey = 10;
constexpr size_t kKeysPerIter = 4096;
constexpr size_t kDefaultWindow = simd::kDefaultWindow;
// Keys stored (for CreateFilter and the hash set) only up to this filter
// size: 13.4M keys, ~430 MB of keys and Slices.
constexpr uint64_t kMaxStoredBytes = uint64_t{16} << 20;

// The textbook filter is probed up to this size: building it at 1 GiB costs
// ~6 random cache-line writes per key for 860M keys (minutes on 2 cores), and
// no table depends on it.
constexpr uint64_t kMaxTextbookBytes = uint64_t{256} << 20;

bool g_quick = false;

using Key16 = std::array<char, kKeyBytes>;
using KeySet = absl::flat_hash_set<Key16>;

const leveldb::FilterPolicy& LevelDbPolicy() {
  static const leveldb::FilterPolicy* policy = leveldb::NewBloomFilterPolicy(kLevelDbBitsPerKey);
  return *policy;
}
const leveldb::FilterPolicy& BlockbloomPolicy() {
  static const leveldb::FilterPolicy* policy = NewBlockedBloomFilterPolicy(kBitsPerKey);
  return *policy;
}

int64_t ScalarTarget() { return simd::SupportedTargets().back(); }

// Restricts Highway dispatch to one target for its lifetime (0: no change).
class ScopedTarget {
 public:
  explicit ScopedTarget(int64_t target) : forced_(target != 0) {
    if (forced_) simd::ForceTargetForTesting(target);
  }
  ~ScopedTarget() {
    if (forced_) simd::ForceTargetForTesting(0);
  }
  ScopedTarget(const ScopedTarget&) = delete;
  ScopedTarget& operator=(const ScopedTarget&) = delete;

 private:
  bool forced_;
};

// Calls fn(hashes, count) for the hashes of keys [0, n) in chunks.
template <typename Fn>
void ForEachHashChunk(uint64_t n, Fn&& fn) {
  constexpr size_t kChunk = 1 << 14;
  std::vector<uint64_t> hashes(kChunk);
  char key[kKeyBytes];
  for (uint64_t start = 0; start < n; start += kChunk) {
    const size_t count = static_cast<size_t>(std::min<uint64_t>(kChunk, n - start));
    for (size_t j = 0; j < count; ++j) {
      WriteKey(start + j, key);
      hashes[j] = HashKey(std::string_view(key, kKeyBytes));
    }
    fn(hashes.data(), count);
  }
}

// ---- LevelDB's built-in format without CreateFilter's Slice array ----
//
// leveldb::BloomFilterPolicy::CreateFilter (util/bloom.cc) needs every key as
// a Slice at once: 16 bytes of Slice plus 16 of key for each of the ~860M keys
// of a 1 GiB filter, more memory than this machine can spare. For filters
// above kMaxStoredBytes we therefore write the same bytes here, from the same
// hash (leveldb::Hash, linked from libleveldb), following the layout its
// reader defines: bits = max(64, n * bits_per_key) rounded up to bytes, then
// one byte k = clamp(bits_per_key * 0.69, 1, 30); key h = Hash(key, seed
// 0xbc9f1d34) sets bits h, h + d, h + 2d, ... (mod 2^32) reduced mod bits,
// with d = rotr(h, 17). CheckLevelDbFormatFilter proves the bytes equal to
// CreateFilter's before any benchmark uses them; probing always goes through
// the real KeyMayMatch.
constexpr uint32_t kLevelDbBloomSeed = 0xbc9f1d34;

std::string LevelDbFormatFilter(uint64_t n, int bits_per_key) {
  size_t bits = static_cast<size_t>(n) * static_cast<size_t>(bits_per_key);
  if (bits < 64) bits = 64;
  const size_t bytes = (bits + 7) / 8;
  bits = bytes * 8;
  const int k = std::clamp(static_cast<int>(bits_per_key * 0.69), 1, 30);
  std::string out(bytes, '\0');
  out.push_back(static_cast<char>(k));
  uint8_t* array = reinterpret_cast<uint8_t*>(&out[0]);
  constexpr size_t kChunk = 32;
  std::vector<size_t> pos(kChunk * 30);
  char key[kKeyBytes];
  for (uint64_t start = 0; start < n; start += kChunk) {
    const size_t count = static_cast<size_t>(std::min<uint64_t>(kChunk, n - start));
    for (size_t j = 0; j < count; ++j) {
      WriteKey(start + j, key);
      uint32_t h = leveldb::Hash(key, kKeyBytes, kLevelDbBloomSeed);
      const uint32_t delta = (h >> 17) | (h << 15);
      for (int i = 0; i < k; ++i) {
        const size_t p = h % bits;
        pos[j * k + i] = p;
        __builtin_prefetch(array + p / 8, 1);
        h += delta;
      }
    }
    for (size_t t = 0; t < count * static_cast<size_t>(k); ++t) {
      array[pos[t] / 8] |= static_cast<uint8_t>(1u << (pos[t] % 8));
    }
  }
  return out;
}

void CheckLevelDbFormatFilter() {
  static bool checked = false;
  if (checked) return;
  for (uint64_t n : {0, 1, 7, 1000, 200'000}) {
    std::vector<char> bytes(std::max<uint64_t>(1, n) * kKeyBytes);
    std::vector<leveldb::Slice> slices(n);
    for (uint64_t i = 0; i < n; ++i) {
      WriteKey(i, &bytes[i * kKeyBytes]);
      slices[i] = leveldb::Slice(&bytes[i * kKeyBytes], kKeyBytes);
    }
    std::string real;
    LevelDbPolicy().CreateFilter(slices.data(), static_cast<int>(n), &real);
    if (real != LevelDbFormatFilter(n, kLevelDbBitsPerKey)) {
      std::fprintf(stderr, "LevelDbFormatFilter differs from CreateFilter at n=%llu\n",
                   static_cast<unsigned long long>(n));
      std::abort();
    }
  }
  checked = true;
}

// ---- Everything built for one filter size, built on first use ----
struct SizeFixture {
  uint64_t bytes = 0;  // target filter size
  uint64_t n = 0;      // keys: bytes * 8 / 10

  std::optional<BlockedBloomFilter> blocked;
  std::string blocked_encoded;  // Serialize(): what the LevelDB policy reads
  std::string leveldb;          // built-in filter
  std::unique_ptr<TextbookBloomFilter> textbook;
  std::unique_ptr<KeySet> set;
  std::unique_ptr<ProbeSet> present, absent;
  std::vector<char> key_bytes;  // keys [0, n) when bytes <= kMaxStoredBytes
  std::vector<leveldb::Slice> slices;

  size_t ProbeCount() const {
    if (g_quick) return size_t{1} << 16;
    return bytes >= (uint64_t{16} << 20) ? size_t{1} << 23 : size_t{1} << 16;
  }

  const ProbeSet& Present() {
    if (!present) present = std::make_unique<ProbeSet>(MakeProbeSet(n, true, ProbeCount(), 1));
    return *present;
  }
  const ProbeSet& Absent() {
    if (!absent) absent = std::make_unique<ProbeSet>(MakeProbeSet(n, false, ProbeCount(), 2));
    return *absent;
  }
  const ProbeSet& Probes(bool want_present) { return want_present ? Present() : Absent(); }

  const BlockedBloomFilter& Blocked() {
    if (!blocked) {
      auto f = BlockedBloomFilter::Create(n, kBitsPerKey);
      if (!f.ok()) {
        std::fprintf(stderr, "%s\n", f.status().ToString().c_str());
        std::abort();
      }
      ForEachHashChunk(
          n, [&](const uint64_t* h, size_t c) { f->AddHashes(absl::Span<const uint64_t>(h, c)); });
      blocked.emplace(std::move(*f));
    }
    return *blocked;
  }
  const std::string& BlockedEncoded() {
    if (blocked_encoded.empty()) blocked_encoded = Blocked().Serialize();
    return blocked_encoded;
  }
  void StoreKeys() {
    if (!slices.empty() || n == 0) return;
    key_bytes.resize(n * kKeyBytes);
    slices.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      WriteKey(i, &key_bytes[i * kKeyBytes]);
      slices[i] = leveldb::Slice(&key_bytes[i * kKeyBytes], kKeyBytes);
    }
  }
  const std::string& LevelDb() {
    if (leveldb.empty()) {
      if (bytes <= kMaxStoredBytes) {
        StoreKeys();
        LevelDbPolicy().CreateFilter(slices.data(), static_cast<int>(n), &leveldb);
      } else {
        CheckLevelDbFormatFilter();
        leveldb = LevelDbFormatFilter(n, kLevelDbBitsPerKey);
      }
    }
    return leveldb;
  }
  const TextbookBloomFilter& Textbook() {
    if (!textbook) {
      textbook = std::make_unique<TextbookBloomFilter>(n, kBitsPerKey);
      ForEachHashChunk(n, [&](const uint64_t* h, size_t c) { textbook->AddHashes(h, c); });
    }
    return *textbook;
  }
  const KeySet& Set() {
    if (!set) {
      set = std::make_unique<KeySet>();
      set->reserve(n);
      Key16 k;
      for (uint64_t i = 0; i < n; ++i) {
        WriteKey(i, k.data());
        set->insert(k);
      }
    }
    return *set;
  }
};

// One size alive at a time: switching sizes frees the previous one's memory.
SizeFixture& Fixture(uint64_t bytes) {
  static std::unique_ptr<SizeFixture> fixture;
  if (!fixture || fixture->bytes != bytes) {
    fixture.reset();
    fixture = std::make_unique<SizeFixture>();
    fixture->bytes = bytes;
    fixture->n = KeysForBytes(bytes, kBitsPerKey);
  }
  return *fixture;
}

// ---- Timing harness ----

void SetCommonCounters(benchmark::State& state, uint64_t keys, uint64_t filter_bytes,
                       uint64_t keys_per_iter) {
  state.counters["ns_per_key"] = benchmark::Counter(
      static_cast<double>(keys) * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["keys_per_iter"] = static_cast<double>(keys_per_iter);
  state.counters["filter_bytes"] = static_cast<double>(filter_bytes);
  state.SetItemsProcessed(static_cast<int64_t>(keys));
}

// Runs `probe(begin, count)` (returns how many keys answered "may contain")
// over consecutive slices of the probe set.
// What a probe run must answer; a violation fails the benchmark and makes the
// binary exit non-zero (so the quick run in CI is also a correctness check).
enum class Expect { kAnything, kAllPositive, kNoPositive };
bool g_failed = false;

template <typename Probe>
void RunProbes(benchmark::State& state, size_t probe_count, uint64_t filter_bytes, Probe&& probe,
               Expect expect = Expect::kAnything) {
  size_t cursor = 0;
  uint64_t positives = 0, keys = 0;
  for (auto _ : state) {
    positives += probe(cursor, kKeysPerIter);
    keys += kKeysPerIter;
    cursor += kKeysPerIter;
    if (cursor + kKeysPerIter > probe_count) cursor = 0;
  }
  if ((expect == Expect::kAllPositive && positives != keys) ||
      (expect == Expect::kNoPositive && positives != 0)) {
    g_failed = true;
    state.SkipWithError(expect == Expect::kAllPositive
                            ? "false negative: a present key was missed"
                            : "exact set answered yes for an absent key");
  }
  SetCommonCounters(state, keys, filter_bytes, kKeysPerIter);
  state.counters["positive_rate"] =
      keys == 0 ? 0.0 : static_cast<double>(positives) / static_cast<double>(keys);
}

uint64_t CountTrue(const bool* out, size_t n) {
  uint64_t c = 0;
  for (size_t i = 0; i < n; ++i) c += out[i];
  return c;
}

std::string SizeName(uint64_t bytes) { return std::to_string(bytes); }

// ---- Probe benchmarks ----

enum class Mode { kSingle, kBatchKeys, kBatchHashes };
const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kSingle:
      return "single";
    case Mode::kBatchKeys:
      return "batch_keys";
    case Mode::kBatchHashes:
      return "batch_hashes";
  }
  return "?";
}

void ProbeBlocked(benchmark::State& state, uint64_t bytes, bool present, Mode mode, int64_t target,
                  size_t window) {
  SizeFixture& fx = Fixture(bytes);
  const BlockedBloomFilter& f = fx.Blocked();
  const ProbeSet& ps = fx.Probes(present);
  std::vector<char> out_storage(kKeysPerIter);
  bool* out = reinterpret_cast<bool*>(out_storage.data());
  ScopedTarget scoped(target);
  RunProbes(
      state, ps.size(), bytes,
      [&](size_t begin, size_t count) -> uint64_t {
        switch (mode) {
          case Mode::kSingle: {
            uint64_t c = 0;
            for (size_t i = begin; i < begin + count; ++i) c += f.MayContain(ps.views[i]);
            return c;
          }
          case Mode::kBatchKeys:
            f.MayContainKeys(absl::MakeConstSpan(ps.views.data() + begin, count),
                             absl::MakeSpan(out, count), window);
            return CountTrue(out, count);
          case Mode::kBatchHashes:
            f.MayContainHashes(absl::MakeConstSpan(ps.hashes.data() + begin, count),
                               absl::MakeSpan(out, count), window);
            return CountTrue(out, count);
        }
        return 0;
      },
      present ? Expect::kAllPositive : Expect::kAnything);
}

void ProbePolicy(benchmark::State& state, uint64_t bytes, bool present,
                 const leveldb::FilterPolicy& policy, bool builtin) {
  SizeFixture& fx = Fixture(bytes);
  const std::string& filter = builtin ? fx.LevelDb() : fx.BlockedEncoded();
  const leveldb::Slice filter_slice(filter);
  const ProbeSet& ps = fx.Probes(present);
  RunProbes(
      state, ps.size(), bytes,
      [&](size_t begin, size_t count) -> uint64_t {
        uint64_t c = 0;
        for (size_t i = begin; i < begin + count; ++i) {
          c += policy.KeyMayMatch(leveldb::Slice(ps.key(i), kKeyBytes), filter_slice);
        }
        return c;
      },
      present ? Expect::kAllPositive : Expect::kAnything);
}

void ProbeTextbook(benchmark::State& state, uint64_t bytes, bool present, Mode mode) {
  SizeFixture& fx = Fixture(bytes);
  const TextbookBloomFilter& f = fx.Textbook();
  const ProbeSet& ps = fx.Probes(present);
  std::vector<uint64_t> hashes(kKeysPerIter);
  std::vector<char> out_storage(kKeysPerIter);
  bool* out = reinterpret_cast<bool*>(out_storage.data());
  RunProbes(
      state, ps.size(), bytes,
      [&](size_t begin, size_t count) -> uint64_t {
        if (mode == Mode::kSingle) {
          uint64_t c = 0;
          for (size_t i = begin; i < begin + count; ++i)
            c += f.MayContainHash(HashKey(ps.views[i]));
          return c;
        }
        for (size_t i = 0; i < count; ++i) hashes[i] = HashKey(ps.views[begin + i]);
        f.MayContainHashes(hashes.data(), count, out, kDefaultWindow);
        return CountTrue(out, count);
      },
      present ? Expect::kAllPositive : Expect::kAnything);
}

void ProbeHashSet(benchmark::State& state, uint64_t bytes, bool present, Mode mode) {
  SizeFixture& fx = Fixture(bytes);
  const KeySet& set = fx.Set();
  const ProbeSet& ps = fx.Probes(present);
  auto key_at = [&](size_t i) {
    Key16 k;
    std::memcpy(k.data(), ps.key(i), kKeyBytes);
    return k;
  };
  RunProbes(
      state, ps.size(), bytes,
      [&](size_t begin, size_t count) -> uint64_t {
        uint64_t c = 0;
        if (mode == Mode::kSingle) {
          for (size_t i = begin; i < begin + count; ++i) c += set.contains(key_at(i));
          return c;
        }
        const size_t end = begin + count;
        for (size_t i = begin; i < std::min(end, begin + kDefaultWindow); ++i)
          set.prefetch(key_at(i));
        for (size_t i = begin; i < end; ++i) {
          if (i + kDefaultWindow < end) set.prefetch(key_at(i + kDefaultWindow));
          c += set.contains(key_at(i));
        }
        return c;
      },
      present ? Expect::kAllPositive : Expect::kNoPositive);
}

// ---- Floors ----

// XXH3 of every key: what any probe that hashes its key pays in cache.
void FloorHash(benchmark::State& state, uint64_t bytes) {
  SizeFixture& fx = Fixture(bytes);
  const ProbeSet& ps = fx.Present();
  RunProbes(state, ps.size(), bytes, [&](size_t begin, size_t count) -> uint64_t {
    uint64_t acc = 0;
    for (size_t i = begin; i < begin + count; ++i) acc += HashKey(ps.views[i]);
    benchmark::DoNotOptimize(acc);
    return 0;
  });
}

// One random cache line per key, read from an array of `bytes` bytes (the
// blocked filter's own, so exactly the same size and placement), its line
// chosen from the key's hash the way the blocked filter chooses its block.
// window == 0: no prefetch (the single-probe floor). Otherwise the lines of
// each window of keys are prefetched before any is read, as the batch probe
// does. hash_keys: hash the keys too, as MayContainKeys does (the floor of
// batch_keys).
void FloorLine(benchmark::State& state, uint64_t bytes, size_t window, bool hash_keys) {
  SizeFixture& fx = Fixture(bytes);
  const uint8_t* base = fx.Blocked().data();
  const uint64_t lines = std::max<uint64_t>(1, (fx.Blocked().num_bytes() + 63) / 64);
  const ProbeSet& ps = fx.Present();
  std::vector<const uint8_t*> addr(std::max<size_t>(window, 1));
  auto line_of = [&](uint64_t h) {
    return base + (static_cast<uint64_t>((static_cast<unsigned __int128>(h) * lines) >> 64) << 6) +
           (h & 56);
  };
  // hash_keys: like MayContainKeys, hash a slice of up to 1024 keys into a
  // buffer first, then fetch their lines window by window.
  std::vector<uint64_t> slice_hashes(hash_keys ? 1024 : 0);
  auto fetch = [&](const uint64_t* hashes, size_t n, uint64_t* acc) {
    for (size_t s = 0; s < n; s += window) {
      const size_t c = std::min(window, n - s);
      for (size_t j = 0; j < c; ++j) {
        addr[j] = line_of(hashes[s + j]);
        __builtin_prefetch(addr[j]);
      }
      for (size_t j = 0; j < c; ++j) {
        uint64_t w;
        std::memcpy(&w, addr[j], 8);
        *acc += w;
      }
    }
  };
  RunProbes(state, ps.size(), bytes, [&](size_t begin, size_t count) -> uint64_t {
    uint64_t acc = 0;
    if (window == 0) {
      for (size_t i = begin; i < begin + count; ++i) {
        uint64_t w;
        std::memcpy(&w, line_of(ps.hashes[i]), 8);
        acc += w;
      }
    } else if (!hash_keys) {
      fetch(ps.hashes.data() + begin, count, &acc);
    } else {
      for (size_t s = begin; s < begin + count; s += slice_hashes.size()) {
        const size_t c = std::min(slice_hashes.size(), begin + count - s);
        for (size_t j = 0; j < c; ++j) slice_hashes[j] = HashKey(ps.views[s + j]);
        fetch(slice_hashes.data(), c, &acc);
      }
    }
    benchmark::DoNotOptimize(acc);
    return 0;
  });
}

// ---- Build benchmarks (n keys -> filter, per key) ----

void BuildPolicy(benchmark::State& state, uint64_t bytes, const leveldb::FilterPolicy& policy,
                 int64_t target) {
  SizeFixture& fx = Fixture(bytes);
  fx.StoreKeys();
  std::string dst;
  ScopedTarget scoped(target);
  uint64_t keys = 0;
  for (auto _ : state) {
    dst.clear();
    policy.CreateFilter(fx.slices.data(), static_cast<int>(fx.n), &dst);
    benchmark::DoNotOptimize(dst.data());
    keys += fx.n;
  }
  SetCommonCounters(state, keys, bytes, fx.n);
}

void BuildTextbook(benchmark::State& state, uint64_t bytes) {
  SizeFixture& fx = Fixture(bytes);
  fx.StoreKeys();
  std::vector<uint64_t> hashes(1024);
  uint64_t keys = 0;
  for (auto _ : state) {
    TextbookBloomFilter f(fx.n, kBitsPerKey);
    for (uint64_t s = 0; s < fx.n; s += hashes.size()) {
      const size_t c = static_cast<size_t>(std::min<uint64_t>(hashes.size(), fx.n - s));
      for (size_t j = 0; j < c; ++j) {
        hashes[j] = HashKey(std::string_view(fx.slices[s + j].data(), kKeyBytes));
      }
      f.AddHashes(hashes.data(), c);
    }
    benchmark::DoNotOptimize(&f);
    keys += fx.n;
  }
  SetCommonCounters(state, keys, bytes, fx.n);
}

void BuildHashSet(benchmark::State& state, uint64_t bytes) {
  SizeFixture& fx = Fixture(bytes);
  fx.StoreKeys();
  uint64_t keys = 0;
  for (auto _ : state) {
    KeySet set;
    set.reserve(fx.n);
    Key16 k;
    for (uint64_t i = 0; i < fx.n; ++i) {
      std::memcpy(k.data(), fx.slices[i].data(), kKeyBytes);
      set.insert(k);
    }
    benchmark::DoNotOptimize(set.size());
    keys += fx.n;
  }
  SetCommonCounters(state, keys, bytes, fx.n);
}

// ---- FPR against bits/key ----

struct FprKeys {
  std::vector<char> bytes;
  std::vector<leveldb::Slice> slices;
  std::vector<std::string_view> views;
  ProbeSet absent;
};

const FprKeys& GetFprKeys(uint64_t n) {
  static std::unique_ptr<FprKeys> keys;
  if (!keys || keys->slices.size() != n) {
    keys = std::make_unique<FprKeys>();
    keys->bytes.resize(n * kKeyBytes);
    keys->slices.resize(n);
    keys->views.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      char* k = &keys->bytes[i * kKeyBytes];
      WriteKey(i, k);
      keys->slices[i] = leveldb::Slice(k, kKeyBytes);
      keys->views[i] = std::string_view(k, kKeyBytes);
    }
    keys->absent = MakeProbeSet(n, false, n, 3);
  }
  return *keys;
}

enum class Structure { kBlocked, kLevelDb, kTextbook };

void Fpr(benchmark::State& state, Structure s, int bits_per_key, uint64_t n) {
  const FprKeys& keys = GetFprKeys(n);
  uint64_t positives = 0, probes = 0;
  double model = 0, filter_bytes = 0;
  int k = 0;
  for (auto _ : state) {
    positives = 0;
    probes = keys.absent.size();
    switch (s) {
      case Structure::kBlocked: {
        auto f = BlockedBloomFilter::BuildFromKeys(keys.views, bits_per_key);
        if (!f.ok()) std::abort();
        for (std::string_view key : keys.absent.views) positives += f->MayContain(key);
        k = f->num_probes();
        filter_bytes = static_cast<double>(f->num_bytes());
        model = BlockedBloomFpr(8.0 * filter_bytes / n, k);
        break;
      }
      case Structure::kLevelDb: {
        std::unique_ptr<const leveldb::FilterPolicy> policy(
            leveldb::NewBloomFilterPolicy(bits_per_key));
        std::string filter;
        policy->CreateFilter(keys.slices.data(), static_cast<int>(n), &filter);
        const leveldb::Slice fs(filter);
        for (size_t i = 0; i < keys.absent.size(); ++i) {
          positives += policy->KeyMayMatch(leveldb::Slice(keys.absent.key(i), kKeyBytes), fs);
        }
        k = static_cast<uint8_t>(filter.back());
        filter_bytes = static_cast<double>(filter.size() - 1);
        model = StandardBloomFpr(8.0 * filter_bytes / n, k);
        break;
      }
      case Structure::kTextbook: {
        TextbookBloomFilter f(n, bits_per_key);
        std::vector<uint64_t> hashes(n);
        for (uint64_t i = 0; i < n; ++i) hashes[i] = HashKey(keys.views[i]);
        f.AddHashes(hashes.data(), hashes.size());
        for (uint64_t h : keys.absent.hashes) positives += f.MayContainHash(h);
        k = f.num_probes();
        filter_bytes = static_cast<double>(f.num_bytes());
        model = StandardBloomFpr(8.0 * filter_bytes / n, k);
        break;
      }
    }
  }
  state.counters["fpr"] = static_cast<double>(positives) / static_cast<double>(probes);
  state.counters["model_fpr"] = model;
  state.counters["k"] = k;
  state.counters["bits_per_key"] = 8.0 * filter_bytes / n;
  state.counters["keys"] = static_cast<double>(n);
}

// ---- Registration ----

template <typename Fn>
benchmark::internal::Benchmark* Register(const std::string& name, Fn&& fn) {
  return benchmark::RegisterBenchmark(name.c_str(), std::forward<Fn>(fn))
      ->Unit(benchmark::kNanosecond);
}

void RegisterAll() {
  constexpr uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;
  const std::vector<uint64_t> sizes =
      g_quick ? std::vector<uint64_t>{16 * KiB, 1 * MiB}
              : std::vector<uint64_t>{16 * KiB, 256 * KiB, 1 * MiB, 16 * MiB, 256 * MiB, 1 * GiB};
  const std::vector<size_t> windows =
      g_quick ? std::vector<size_t>{8, 64}
              : std::vector<size_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  const std::vector<uint64_t> window_sizes =
      g_quick ? std::vector<uint64_t>{1 * MiB} : std::vector<uint64_t>{1 * MiB, 1 * GiB};
  const int64_t scalar = ScalarTarget();
  const std::string best_name = simd::ActiveTargetName();

  for (uint64_t bytes : sizes) {
    const std::string sz = SizeName(bytes);
    const bool stored = bytes <= kMaxStoredBytes;
    // Builds first: they need the stored keys, which later benchmarks do not.
    if (stored) {
      Register("build/leveldb/whole/all/" + sz,
               [=](benchmark::State& s) { BuildPolicy(s, bytes, LevelDbPolicy(), 0); });
      Register("build/bbpolicy-best/whole/all/" + sz,
               [=](benchmark::State& s) { BuildPolicy(s, bytes, BlockbloomPolicy(), 0); });
      Register("build/bbpolicy-scalar/whole/all/" + sz,
               [=](benchmark::State& s) { BuildPolicy(s, bytes, BlockbloomPolicy(), scalar); });
      Register("build/textbook/whole/all/" + sz,
               [=](benchmark::State& s) { BuildTextbook(s, bytes); });
      Register("build/hashset/whole/all/" + sz,
               [=](benchmark::State& s) { BuildHashSet(s, bytes); });
    }
    Register("floor/hash/single/present/" + sz, [=](benchmark::State& s) { FloorHash(s, bytes); });
    Register("floor/line/single/present/" + sz,
             [=](benchmark::State& s) { FloorLine(s, bytes, 0, false); });
    Register("floor/line/batch_hashes/present/" + sz,
             [=](benchmark::State& s) { FloorLine(s, bytes, kDefaultWindow, false); });
    Register("floor/hash+line/batch_keys/present/" + sz,
             [=](benchmark::State& s) { FloorLine(s, bytes, kDefaultWindow, true); });
    for (bool present : {true, false}) {
      const std::string pa = present ? "present" : "absent";
      const std::string tail = "/" + pa + "/" + sz;
      Register("probe/blocked/single" + tail, [=](benchmark::State& s) {
        ProbeBlocked(s, bytes, present, Mode::kSingle, 0, kDefaultWindow);
      });
      for (Mode m : {Mode::kBatchKeys, Mode::kBatchHashes}) {
        Register(std::string("probe/blocked-best/") + ModeName(m) + tail, [=](benchmark::State& s) {
          ProbeBlocked(s, bytes, present, m, 0, kDefaultWindow);
        });
        Register(std::string("probe/blocked-scalar/") + ModeName(m) + tail,
                 [=](benchmark::State& s) {
                   ProbeBlocked(s, bytes, present, m, scalar, kDefaultWindow);
                 });
      }
      if (stored) {
        Register("probe/bbpolicy/single" + tail, [=](benchmark::State& s) {
          ProbePolicy(s, bytes, present, BlockbloomPolicy(), false);
        });
      }
      Register("probe/leveldb/single" + tail,
               [=](benchmark::State& s) { ProbePolicy(s, bytes, present, LevelDbPolicy(), true); });
      if (bytes <= kMaxTextbookBytes) {
        Register("probe/textbook/single" + tail,
                 [=](benchmark::State& s) { ProbeTextbook(s, bytes, present, Mode::kSingle); });
        Register("probe/textbook/batch_keys" + tail,
                 [=](benchmark::State& s) { ProbeTextbook(s, bytes, present, Mode::kBatchKeys); });
      }
      if (stored) {
        Register("probe/hashset/single" + tail,
                 [=](benchmark::State& s) { ProbeHashSet(s, bytes, present, Mode::kSingle); });
        Register("probe/hashset/batch_keys" + tail,
                 [=](benchmark::State& s) { ProbeHashSet(s, bytes, present, Mode::kBatchKeys); });
      }
    }
    if (std::find(window_sizes.begin(), window_sizes.end(), bytes) != window_sizes.end()) {
      for (size_t w : windows) {
        const std::string ws = "/w" + std::to_string(w) + "/absent/" + sz;
        Register("window/blocked-best" + ws, [=](benchmark::State& s) {
          ProbeBlocked(s, bytes, false, Mode::kBatchHashes, 0, w);
        });
        Register("window/floor-line" + ws,
                 [=](benchmark::State& s) { FloorLine(s, bytes, w, false); });
      }
    }
  }

  const uint64_t fpr_n = g_quick ? 100'000 : 1'000'000;
  const std::vector<int> bits =
      g_quick ? std::vector<int>{4, 10, 20}
              : std::vector<int>{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  for (const auto& entry :
       {std::pair{Structure::kBlocked, "blocked"}, std::pair{Structure::kLevelDb, "leveldb"},
        std::pair{Structure::kTextbook, "textbook"}}) {
    const Structure s = entry.first;
    const char* name = entry.second;
    for (int b : bits) {
      Register("fpr/" + std::string(name) + "/b" + std::to_string(b) + "/absent/" +
                   std::to_string(fpr_n),
               [=](benchmark::State& st) { Fpr(st, s, b, fpr_n); })
          ->Iterations(1);
    }
  }
  (void)best_name;
}

}  // namespace
}  // namespace bench
}  // namespace blockbloom

int main(int argc, char** argv) {
  using blockbloom::bench::g_quick;
  g_quick = blockbloom::bench::ConsumeQuickFlag(&argc, argv);
  const auto targets = blockbloom::simd::SupportedTargets();
  benchmark::AddCustomContext("blockbloom_mode", g_quick ? "quick" : "full");
  benchmark::AddCustomContext("highway_best_target", blockbloom::simd::ActiveTargetName());
  benchmark::AddCustomContext("highway_scalar_target",
                              blockbloom::simd::TargetName(targets.back()));
  blockbloom::bench::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return blockbloom::bench::g_failed ? 1 : 0;
}
