// The blocked filter's kernel side by side with its baselines and floors, in
// one run (bench/RESULTS.md, "Probe speed" and "Build speed"). Every figure is
// ns per key.
//
//   kernel_bench [--big] [--quick] [google-benchmark flags]
//
// Sizes: 16 KiB and 1 MiB (in cache), 128 MiB (out of cache); 1 GiB with
// --big (needs ~1.5 GiB of memory). Names are "<what>/<variant>/<keys>/<bytes>":
//   hash/best|scalar-target|scalar-inline   single probe from a precomputed
//        hash: BlockedBloomFilter::MayContainHash (one call through the
//        pointer the filter chose: the best target's in-register probe), the
//        portable target's kernel through a pointer, and the scalar reference
//        kernel inlined into the loop
//   hash/fastlocal-avx2   a clean-room AVX2 implementation of RocksDB's
//        FastLocalBloom probe (util/bloom_impl.h, from its published algorithm)
//        over the SAME filter bits and the same block choice: the best known
//        kernel for these bits, one direct call per probe; -inlined: the
//        same probe inlined into an AVX2 loop (no call at all)
//   hash/best-inlined   our in-register probe inlined into a loop on the
//        best target (bench/inlined_probe_loop.cc): kernel against kernel,
//        beside hash/fastlocal-avx2-inlined
//   hash/inline-api   blockbloom/blocked_bloom_inline.h's InlineMayContainHash
//        in a loop compiled with -march=native, as a user building for this
//        machine would (bench/inline_api_loop.cc); the target is printed as
//        inline_api_target in the run's context
//   hash|batch/target-<T>, policy/target-<T>, build/bbpolicy-target-<T>
//        the single probe, the batch probe (T2, window 64), the policy's
//        KeyMayMatch and its CreateFilter compiled for one target each, from
//        the CPU's best down to AVX2: the figures behind the target each
//        kernel family runs on (simd/targets.h, KernelTarget; printed as
//        kernel_targets in the run's context)
//   key/best                 BlockedBloomFilter::MayContain(key)
//   encoded/best             blocked::EncodedKeyMayMatch(key, filter): the
//        per-target hash + parse + probe, through its dispatched pointer (the
//        blocked policy inlines the same code into its per-target
//        KeyMayMatch: policy/blockbloom is this plus the virtual call and the
//        counters, minus this call)
//   policy/blockbloom|leveldb   FilterPolicy::KeyMayMatch through the
//        interface, ours on our filter, LevelDB's built-in on its own filter
//   policy-small/blockbloom|leveldb/<keys per filter>   the same at LevelDB's
//        own filter sizes: one table's filter block, 1024 filters (a 2 MiB
//        table, one filter per 2 KiB of data) of 20 or 100 keys each (100- or
//        ~10-byte values), stored back to back as LevelDB stores them; ours
//        are flat (format version 2). Each probe goes to a random filter, as
//        Gets spread over a table's blocks
//   policy-small/migrating-on-leveldb/<keys per filter>   the migrating
//        policy (NewMigratingFilterPolicy) on LevelDB's filters of the same
//        table: what each Get of a table written before the switch costs
//   policy-small/floor/<keys per filter>   floor/policy-hash-line on our
//        filters of the same table: LevelDB's virtual call, XXH3 of the key
//        and one byte of the filter
//   floor/hash               XXH3 of the key, nothing else
//   floor/policy-hash-line   the floor of a blocked policy's KeyMayMatch:
//        LevelDB's virtual call, XXH3 of the key and one byte of the line the
//        filter would probe (beside policy/*)
//   floor/policy-call|hash|hash-parse-line|hash-parse-line-count   the
//        policy's path taken apart, one piece more per row (PiecePolicy)
//   floor/policy-uncounted   the policy without its answer counters
//        (bench/uncounted_policy.h): policy/blockbloom less this is what
//        counting costs where the policy counts
//   policy-path/absent/<bytes>   the pieces above, the uncounted policy, ours
//        and LevelDB's timed interleaved, a short batch each per iteration:
//        each one's median (<piece>_ns) and the ratios policy_over_floor,
//        uncounted_over_floor, policy_over_leveldb and the difference
//        counters_ns, medians of per-iteration figures (PolicyPath)
//   policy-small-path/absent/<keys per filter>   the same at LevelDB's own
//        filter sizes (the policy-small filters): the floor, the uncounted
//        policy, ours and LevelDB's (PolicySmallPath)
//   probe-path/<absent|present>/<bytes>   key/best (key), hash/best,
//        hash/fastlocal-avx2, both -inlined, and per target
//        hash/target-<T> (single_<T>), batch/target-<T> (batch_<T>) and, in
//        cache, policy/target-<T> (policy_<T>), timed interleaved (ProbePath): each
//        one's median and the ratios best_over_fastlocal,
//        inlined_over_fastlocal_inlined and, above AVX2, <piece>_over_avx2
//   build-path/<n>           build/bbpolicy-target-<T> for each target, timed
//        interleaved (BuildPath): <T>_ns and, above AVX2, <T>_over_avx2;
//        n up to 1,000,000
//   floor/build-hash-line/<n>   the floor of a blocked build: zeroed bytes,
//        XXH3 of each key and one 64-byte OR into its line, above 256 KiB
//        with the build's rolling prefetch window (beside build/*)
//   floor/line               one unprefetched 8-byte load from a random line
//        of an array of the filter's size, the line picked as the filter does
//   batch/<hint>/w<W>        MayContainHashes, rolling prefetch window W
//   floor/prefetched-<hint>/w<W>   the same prefetch pattern, one load per key
//   build/.../<n>            filter from n keys (hashing included); n = 1-8
//                            are LevelDB's filters with values of a few KiB,
//                            20 and 100 its own per-2 KiB filter sizes;
//                            build/fastlocal: FastLocalBloom's build (k byte
//                            writes per key) of the same bits, blocked sizes
//   create/tiny              the class API on a 10-key filter: Create + AddKeys
//                            + one probe, per call
// The huge-page variants (hash/best-hugepages, batch/...-hugepages) probe a
// copy of the filter allocated with BlockedBloomOptions::huge_pages.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench_common.h"
#include "inline_api_loop.h"
#include "inlined_probe_loop.h"
#include "uncounted_policy.h"
#include "blockbloom/blocked_bloom.h"
#include "blockbloom/leveldb_filter_policy.h"
#include "blocked/format.h"
#include "blocked/key_probe.h"
#include "blocked_bloom_simd.h"
#include "blocked_kernel.h"
#include "common/xxh3_inline.h"
#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"
#include "policy/blocked_policy.h"
#include "policy/policy_base.h"
#include "targets.h"

namespace blockbloom {
namespace bench {
namespace {

constexpr double kBitsPerKey = 10.0;
constexpr size_t kKeysPerIter = 4096;
bool g_quick = false;
bool g_big = false;
bool g_failed = false;

const leveldb::FilterPolicy& LevelDbPolicy() {
  static const leveldb::FilterPolicy* p = leveldb::NewBloomFilterPolicy(10);
  return *p;
}
const leveldb::FilterPolicy& OurPolicy() {
  static const leveldb::FilterPolicy* p = NewBlockedBloomFilterPolicy(kBitsPerKey);
  return *p;
}
const leveldb::FilterPolicy& MigratingPolicy() {
  static const leveldb::FilterPolicy* p = NewMigratingFilterPolicy(kBitsPerKey);
  return *p;
}
// The blocked policy compiled for one target (a bit of simd::SupportedTargets()).
const leveldb::FilterPolicy& TargetPolicy(int64_t target) {
  static std::map<int64_t, std::unique_ptr<const leveldb::FilterPolicy>> policies;
  std::unique_ptr<const leveldb::FilterPolicy>& p = policies[target];
  if (!p) {
    p.reset(internal::NewBlockedPolicyForTarget(target, kBitsPerKey, "blockbloom.bench", false));
  }
  return *p;
}

// The floor of any blocked filter policy that hashes with XXH3 (the stable
// hash the format requires): LevelDB's virtual KeyMayMatch call, XXH3 of the
// key, and one byte loaded from the 64-byte line the filter would probe.
// Reads our encoded filter (bits, then a 3-byte trailer); answers nothing
// useful. CreateFilter is never called.
class FloorPolicy final : public leveldb::FilterPolicy {
 public:
  const char* Name() const override { return "blockbloom.bench.floor"; }
  void CreateFilter(const leveldb::Slice*, int, std::string*) const override { std::abort(); }
  // Never inlined into the bench loop (the policies' calls are virtual).
  __attribute__((noinline)) bool KeyMayMatch(const leveldb::Slice& key,
                                             const leveldb::Slice& filter) const override {
    const uint64_t h = internal::InlineHashBytes(key.data(), key.size());
    const uint64_t bits = (filter.size() - blocked::kTrailerSize) * 8;
    const uint64_t byte = blocked::LocateBlock(h, bits).first_bit / 8 + (h & 63);
    return (filter.data()[std::min<uint64_t>(byte, filter.size() - 1)] & 1) != 0;
  }
};
const leveldb::FilterPolicy& TheFloorPolicy() {
  static const leveldb::FilterPolicy* p = new FloorPolicy();
  return *p;
}

// The blocked policy's KeyMayMatch taken apart (floor/policy-<pieces>): each
// row one more piece of the path than the one before, so that the
// differences between rows are the pieces' costs:
//   call                 the virtual call, answering from the filter's last byte
//   hash                 + XXH3 of the key
//   hash-line            + one byte of the line (floor/policy-hash-line)
//   hash-parse-line      + the trailer parse (blocked::ParseFilter), the
//                        line's byte read through the parsed view
//   hash-parse-line-count  + the policy's answer counters (ProbeCounters)
// policy/blockbloom is hash-parse-line-count with the in-register probe in
// place of the one byte: their difference is the probe's cost.
enum class Piece { kCall, kHash, kHashParseLine, kHashParseLineCount };
template <Piece kPiece>
class PiecePolicy final : public leveldb::FilterPolicy {
 public:
  const char* Name() const override { return "blockbloom.bench.piece"; }
  void CreateFilter(const leveldb::Slice*, int, std::string*) const override { std::abort(); }
  __attribute__((noinline)) bool KeyMayMatch(const leveldb::Slice& key,
                                             const leveldb::Slice& filter) const override {
    if (kPiece == Piece::kCall) {
      return ((filter.data()[filter.size() - 1] ^ key.data()[0]) & 1) != 0;
    }
    const uint64_t h = internal::InlineHashBytes(key.data(), key.size());
    if (kPiece == Piece::kHash) return (h & 1) != 0;
    blocked::FilterView view;
    if (!blocked::ParseFilter(std::string_view(filter.data(), filter.size()), &view)) return true;
    const uint64_t byte = blocked::LocateBlock(h, view.num_bytes * 8).first_bit / 8 + (h & 63);
    const bool match = (view.bits[std::min<uint64_t>(byte, view.num_bytes - 1)] & 1) != 0;
    if (kPiece == Piece::kHashParseLineCount) counters_.Count(match);
    return match;
  }

 private:
  mutable internal::ProbeCounters counters_;
};
template <Piece kPiece>
const leveldb::FilterPolicy& ThePiecePolicy() {
  static const leveldb::FilterPolicy* p = new PiecePolicy<kPiece>();
  return *p;
}

// ---- Clean-room FastLocalBloom probe (RocksDB util/bloom_impl.h) ----
// The published algorithm: the 32-bit h2 times golden-ratio powers gives
// eight probe values at once; the top 9 bits of each address a bit of the
// 512-bit line; the line's two 256-bit halves are permuted by word address
// (vpermd), the half chosen by word-address bit 3 (blendv on the sign bit
// after shifting it up), each bit isolated with a variable shift, lanes at or
// above k masked off, and one testc answers. Written here for k <= 8 (every
// k this bench uses), from the description, not from RocksDB's code.
__attribute__((target("avx2"))) bool FastLocalProbe(const uint8_t* line, uint32_t h2,
                                                    int num_probes) {
  const __m256i powers = _mm256_setr_epi32(
      static_cast<int>(blocked::kProbePowers.of[0]), static_cast<int>(blocked::kProbePowers.of[1]),
      static_cast<int>(blocked::kProbePowers.of[2]), static_cast<int>(blocked::kProbePowers.of[3]),
      static_cast<int>(blocked::kProbePowers.of[4]), static_cast<int>(blocked::kProbePowers.of[5]),
      static_cast<int>(blocked::kProbePowers.of[6]), static_cast<int>(blocked::kProbePowers.of[7]));
  const __m256i product = _mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(h2)), powers);
  const __m256i bit_address = _mm256_srli_epi32(product, 23);
  const __m256i word_address = _mm256_srli_epi32(bit_address, 5);
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line + 32));
  const __m256i from_lo = _mm256_permutevar8x32_epi32(lo, word_address);
  const __m256i from_hi = _mm256_permutevar8x32_epi32(hi, word_address);
  const __m256 pick_hi = _mm256_castsi256_ps(_mm256_slli_epi32(word_address, 28));
  const __m256i words = _mm256_castps_si256(
      _mm256_blendv_ps(_mm256_castsi256_ps(from_lo), _mm256_castsi256_ps(from_hi), pick_hi));
  const __m256i bits =
      _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_and_si256(bit_address, _mm256_set1_epi32(31)));
  const __m256i lane_in_k =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(num_probes), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  return _mm256_testc_si256(words, _mm256_and_si256(bits, lane_in_k)) != 0;
}

// Full blocks through FastLocalProbe, the short last block through the scalar
// kernel (as our probe does): the same answers as blocked::MayContainHash.
inline bool FastLocalMayContain(uint64_t hash, uint64_t total_bits, int k, const uint8_t* data) {
  const blocked::Block b = blocked::LocateBlock(hash, total_bits);
  if (b.num_bits == blocked::kBlockBits) {
    return FastLocalProbe(data + b.first_bit / 8, blocked::ProbeSeed(hash), k);
  }
  return blocked::MayContainHash(hash, total_bits, k, data);
}

// FastLocalBloom's build of one key (RocksDB util/bloom_impl.h, AddHash, from
// its published algorithm): the 32-bit h2 multiplied by the golden ratio
// once per probe, the top 9 bits of each product addressing a bit of the
// line, each set with one byte read-modify-write. The same bits as ours
// (x_i = h2 * phi^i); the short last block through the scalar kernel, as
// ours.
inline void FastLocalAdd(uint64_t hash, uint64_t total_bits, int k, uint8_t* data) {
  const blocked::Block b = blocked::LocateBlock(hash, total_bits);
  if (b.num_bits != blocked::kBlockBits) return blocked::AddHash(hash, total_bits, k, data);
  uint8_t* line = data + b.first_bit / 8;
  uint32_t h = blocked::ProbeSeed(hash);
  for (int i = 0; i < k; ++i) {
    const uint32_t bit = h >> (32 - blocked::kLogBlockBits);
    line[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
    h *= blocked::kProbeMultiplier;
  }
}

// The same probe inlined into an AVX2 loop: what a probe costs with no call
// at all (the bound for the per-call overhead of the dispatched pointer).
__attribute__((target("avx2"))) uint64_t FastLocalInlinedLoop(const uint64_t* hashes, size_t n,
                                                              uint64_t total_bits, int k,
                                                              const uint8_t* data) {
  uint64_t c = 0;
  for (size_t i = 0; i < n; ++i) {
    const blocked::Block b = blocked::LocateBlock(hashes[i], total_bits);
    c += b.num_bits == blocked::kBlockBits
             ? FastLocalProbe(data + b.first_bit / 8, blocked::ProbeSeed(hashes[i]), k)
             : blocked::MayContainHash(hashes[i], total_bits, k, data);
  }
  return c;
}

// ---- Fixture: one size alive at a time ----
struct Fixture {
  uint64_t bytes = 0, n = 0;
  std::optional<BlockedBloomFilter> filter, huge;
  std::string encoded, leveldb;
  ProbeSet present, absent;
  const ProbeSet& Get(bool p) const { return p ? present : absent; }
};

Fixture& GetFixture(uint64_t bytes) {
  static std::unique_ptr<Fixture> fx;
  if (fx && fx->bytes == bytes) return *fx;
  fx.reset();
  fx = std::make_unique<Fixture>();
  fx->bytes = bytes;
  fx->n = KeysForBytes(bytes, kBitsPerKey);
  auto build = [&](bool huge) {
    BlockedBloomOptions options;
    options.huge_pages = huge;
    auto f = BlockedBloomFilter::Create(fx->n, kBitsPerKey, options);
    if (!f.ok()) std::abort();
    std::vector<uint64_t> h(1 << 14);
    char key[kKeyBytes];
    for (uint64_t s = 0; s < fx->n; s += h.size()) {
      const size_t c = static_cast<size_t>(std::min<uint64_t>(h.size(), fx->n - s));
      for (size_t j = 0; j < c; ++j) {
        WriteKey(s + j, key);
        h[j] = internal::InlineHashKey(std::string_view(key, kKeyBytes));
      }
      f->AddHashes(absl::MakeConstSpan(h.data(), c));
    }
    return std::move(*f);
  };
  fx->filter.emplace(build(false));
  if (bytes >= kHugePageMinBytes) fx->huge.emplace(build(true));
  const size_t count =
      bytes >= (uint64_t{64} << 20) && !g_quick ? size_t{1} << 22 : size_t{1} << 16;
  fx->present = MakeProbeSet(fx->n, true, count, 1);
  fx->absent = MakeProbeSet(fx->n, false, count, 2);
  if (bytes <= (uint64_t{1} << 20)) {
    fx->encoded = fx->filter->Serialize();
    std::vector<std::string> keys(fx->n);
    std::vector<leveldb::Slice> slices(fx->n);
    for (uint64_t i = 0; i < fx->n; ++i) {
      keys[i] = Key(i);
      slices[i] = leveldb::Slice(keys[i]);
    }
    LevelDbPolicy().CreateFilter(slices.data(), static_cast<int>(fx->n), &fx->leveldb);
  }
  return *fx;
}

void SetNsPerKey(benchmark::State& state, uint64_t keys) {
  state.counters["ns_per_key"] = benchmark::Counter(
      static_cast<double>(keys) * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Runs probe(begin, count) -> positives over slices of the probe set; a
// present key answered "no" fails the run (and the binary's exit status).
template <typename Probe>
void Run(benchmark::State& state, const ProbeSet& ps, bool present, Probe&& probe) {
  size_t cursor = 0;
  uint64_t keys = 0, positives = 0;
  for (auto _ : state) {
    positives += probe(cursor, kKeysPerIter);
    keys += kKeysPerIter;
    cursor += kKeysPerIter;
    if (cursor + kKeysPerIter > ps.hashes.size()) cursor = 0;
  }
  if (present && positives != keys) {
    g_failed = true;
    state.SkipWithError("false negative");
  }
  SetNsPerKey(state, keys);
  state.counters["positive_rate"] = keys ? static_cast<double>(positives) / keys : 0.0;
}

enum class Single {
  kTarget,
  kBest,
  kScalarTarget,
  kScalarInline,
  kFastLocal,
  kFastLocalInlined,
  kBestInlined,
  kInlineApi,
  kBestHuge
};

// How many of the `count` hashes at h the single probe `which` answers "may
// match" on f (on_target: the kernel of Single::kTarget). Out of line, so
// that every caller times the same loops: inlined into ProbePath's
// many-piece lambda, the class's loop kept its count in memory and reloaded
// the filter's address from the stack at each probe, and measured 1.08-1.10x
// FastLocalBloom's call there, against 0.98-1.01x out of line (AMD EPYC Zen
// 3, probe-path/*).
__attribute__((noinline)) uint64_t CountSingle(Single which, const BlockedBloomFilter& f,
                                               const uint64_t* h, size_t count,
                                               simd::MayContainHashFn on_target) {
  static const simd::MayContainHashFn scalar =
      simd::MayContainHashForTarget(simd::SupportedTargets().back());
  const uint64_t bits = f.num_bits();
  const int k = f.num_probes();
  const uint8_t* data = f.data();
  uint64_t c = 0;
  switch (which) {
    case Single::kTarget:
      for (size_t i = 0; i < count; ++i) c += on_target(h[i], bits, k, data);
      break;
    case Single::kBest:
    case Single::kBestHuge:
      for (size_t i = 0; i < count; ++i) c += f.MayContainHash(h[i]);
      break;
    case Single::kScalarTarget:
      for (size_t i = 0; i < count; ++i) c += scalar(h[i], bits, k, data);
      break;
    case Single::kScalarInline:
      for (size_t i = 0; i < count; ++i) c += blocked::MayContainHash(h[i], bits, k, data);
      break;
    case Single::kFastLocal:
      for (size_t i = 0; i < count; ++i) c += FastLocalMayContain(h[i], bits, k, data);
      break;
    case Single::kFastLocalInlined:
      c = FastLocalInlinedLoop(h, count, bits, k, data);
      break;
    case Single::kBestInlined:
      c = CountMayContainInlined(h, count, bits, k, data);
      break;
    case Single::kInlineApi:
      c = CountInlineApi(f, h, count);
      break;
  }
  return c;
}

// How many of keys [begin, begin + count) of `ps` f.MayContain answers "may
// match" (out of line, as CountSingle).
__attribute__((noinline)) uint64_t CountKeys(const BlockedBloomFilter& f, const ProbeSet& ps,
                                             size_t begin, size_t count) {
  uint64_t c = 0;
  for (size_t i = begin; i < begin + count; ++i) c += f.MayContain(ps.views[i]);
  return c;
}

void ProbeHash(benchmark::State& state, uint64_t bytes, bool present, Single which,
               int64_t target = 0) {
  Fixture& fx = GetFixture(bytes);
  const BlockedBloomFilter& f = (which == Single::kBestHuge && fx.huge) ? *fx.huge : *fx.filter;
  const ProbeSet& ps = fx.Get(present);
  const simd::MayContainHashFn on_target =
      target != 0 ? simd::MayContainHashForTarget(target) : nullptr;
  Run(state, ps, present, [&](size_t begin, size_t count) -> uint64_t {
    return CountSingle(which, f, ps.hashes.data() + begin, count, on_target);
  });
}

void ProbeKey(benchmark::State& state, uint64_t bytes, bool present) {
  Fixture& fx = GetFixture(bytes);
  const ProbeSet& ps = fx.Get(present);
  Run(state, ps, present, [&](size_t begin, size_t count) -> uint64_t {
    uint64_t c = 0;
    for (size_t i = begin; i < begin + count; ++i) c += fx.filter->MayContain(ps.views[i]);
    return c;
  });
}

enum class Policy {
  kOurs,
  kTarget,
  kLevelDb,
  kFloor,
  kCall,
  kHash,
  kHashParseLine,
  kHashParseLineCount,
  kUncounted
};

// How many of keys [begin, begin + count) of `ps` `policy` answers "may
// match" on `filter`. Out of line, as CountSingle: every caller times the
// same loop.
__attribute__((noinline)) uint64_t ProbeKeys(const ProbeSet& ps,
                                             const leveldb::FilterPolicy& policy,
                                             const leveldb::Slice& filter, size_t begin,
                                             size_t count) {
  uint64_t c = 0;
  for (size_t i = begin; i < begin + count; ++i) {
    c += policy.KeyMayMatch(leveldb::Slice(ps.views[i].data(), kKeyBytes), filter);
  }
  return c;
}

void ProbePolicy(benchmark::State& state, uint64_t bytes, bool present, Policy which,
                 int64_t target = 0) {
  Fixture& fx = GetFixture(bytes);
  const ProbeSet& ps = fx.Get(present);
  const leveldb::FilterPolicy& policy =
      which == Policy::kOurs                 ? OurPolicy()
      : which == Policy::kTarget             ? TargetPolicy(target)
      : which == Policy::kLevelDb            ? LevelDbPolicy()
      : which == Policy::kCall               ? ThePiecePolicy<Piece::kCall>()
      : which == Policy::kHash               ? ThePiecePolicy<Piece::kHash>()
      : which == Policy::kHashParseLine      ? ThePiecePolicy<Piece::kHashParseLine>()
      : which == Policy::kHashParseLineCount ? ThePiecePolicy<Piece::kHashParseLineCount>()
      : which == Policy::kUncounted          ? UncountedPolicy()
                                             : TheFloorPolicy();
  const leveldb::Slice filter(which == Policy::kLevelDb ? fx.leveldb : fx.encoded);
  // The floors answer nothing: every key counts as found.
  if (which != Policy::kOurs && which != Policy::kTarget && which != Policy::kLevelDb &&
      which != Policy::kUncounted) {
    present = false;
  }
  Run(state, ps, present, [&](size_t begin, size_t count) -> uint64_t {
    return ProbeKeys(ps, policy, filter, begin, count);
  });
}

// Pieces of a policy's path timed interleaved: each iteration runs
// batch(p, cursor) (kPathBatch probes of the keys from `cursor`, or
// keys_per_batch keys of some other work) for every
// piece p, in a shuffled order, so that the pieces' batches are
// microseconds apart. A shared host's speed drifts within a run; batches
// that close see the same speed, rows timed one after the other do not.
// Counters: each piece's median ns per key over the iterations
// (<name>_ns), and `ratios`: {counter, a, b, is_ratio}, the median over the
// iterations of a's time over b's (or a's less b's).
constexpr size_t kPathBatch = 1024;
struct PathRatio {
  const char* counter;
  const char* a;
  const char* b;
  bool ratio;
};
// What the policy-path rows report beside each piece's time.
const std::vector<PathRatio> kPolicyPathRatios = {
    {"policy_over_floor", "policy", "floor", true},
    {"uncounted_over_floor", "uncounted", "floor", true},
    {"counters_ns", "policy", "uncounted", false},
    {"policy_over_leveldb", "policy", "leveldb", true}};
// Appends to *ratios <name>_over_avx2 for every piece i on a target other
// than AVX2: its time over that of the AVX2 piece of the same kind
// (target[i] 0: no target; kind[i]: pieces of one kind compare). The
// counters' names live in *names_kept, which must outlive the ratios.
void AppendOverAvx2(const std::vector<const char*>& names, const std::vector<int64_t>& target,
                    const std::vector<int>& kind, std::deque<std::string>* names_kept,
                    std::vector<PathRatio>* ratios) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (target[i] == 0 || simd::TargetName(target[i]) == "AVX2") continue;
    for (size_t j = 0; j < names.size(); ++j) {
      if (kind[j] == kind[i] && target[j] != 0 && simd::TargetName(target[j]) == "AVX2") {
        names_kept->push_back(std::string(names[i]) + "_over_avx2");
        ratios->push_back({names_kept->back().c_str(), names[i], names[j], true});
      }
    }
  }
}

template <typename Batch>
void TimeInterleaved(benchmark::State& state, const std::vector<const char*>& names, size_t probes,
                     const std::vector<PathRatio>& ratios, Batch&& batch,
                     size_t keys_per_batch = kPathBatch) {
  const size_t pieces = names.size();
  std::vector<std::vector<double>> ns(pieces);
  std::vector<size_t> order(pieces);
  for (size_t i = 0; i < pieces; ++i) order[i] = i;
  uint64_t rng = 0x9E3779B97F4A7C15ull;
  size_t cursor = 0;
  uint64_t answers = 0;
  for (auto _ : state) {
    for (size_t i = pieces - 1; i > 0; --i) {  // Fisher-Yates, SplitMix64 draws
      rng = SplitMix64Of(rng);
      std::swap(order[i], order[rng % (i + 1)]);
    }
    for (size_t p : order) {
      const auto begin = std::chrono::steady_clock::now();
      answers += batch(p, cursor);
      const auto end = std::chrono::steady_clock::now();
      ns[p].push_back(std::chrono::duration<double, std::nano>(end - begin).count() /
                      static_cast<double>(keys_per_batch));
    }
    cursor += kPathBatch;
    if (cursor + kPathBatch > probes) cursor = 0;
  }
  benchmark::DoNotOptimize(answers);
  if (ns[0].empty()) return;
  const auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  const auto at = [&](std::string_view name) {
    size_t p = 0;
    while (names[p] != name) ++p;  // every name asked for is a piece's
    return p;
  };
  for (size_t p = 0; p < pieces; ++p) state.counters[std::string(names[p]) + "_ns"] = median(ns[p]);
  for (const PathRatio& r : ratios) {
    const std::vector<double>& a = ns[at(r.a)];
    const std::vector<double>& b = ns[at(r.b)];
    std::vector<double> v(a.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = r.ratio ? a[i] / b[i] : a[i] - b[i];
    state.counters[r.counter] = median(v);
  }
}

// The policy's path taken apart (policy-path/absent/<bytes>), timed
// interleaved (TimeInterleaved) on the same absent keys: the floor/policy-*
// rows (call, hash, hash-line = the floor, hash-parse-line,
// hash-parse-line-count), the policy without its counters
// (bench/uncounted_policy.h), ours and LevelDB's.
void PolicyPath(benchmark::State& state, uint64_t bytes) {
  Fixture& fx = GetFixture(bytes);
  const ProbeSet& ps = fx.absent;
  const std::vector<const char*> names = {"call",  "hash",      "floor",  "parse",
                                          "count", "uncounted", "policy", "leveldb"};
  const leveldb::FilterPolicy* const policies[] = {&ThePiecePolicy<Piece::kCall>(),
                                                   &ThePiecePolicy<Piece::kHash>(),
                                                   &TheFloorPolicy(),
                                                   &ThePiecePolicy<Piece::kHashParseLine>(),
                                                   &ThePiecePolicy<Piece::kHashParseLineCount>(),
                                                   &UncountedPolicy(),
                                                   &OurPolicy(),
                                                   &LevelDbPolicy()};
  const leveldb::Slice ours(fx.encoded), theirs(fx.leveldb);
  TimeInterleaved(state, names, ps.size(), kPolicyPathRatios, [&](size_t p, size_t cursor) {
    return ProbeKeys(ps, *policies[p], policies[p] == &LevelDbPolicy() ? theirs : ours, cursor,
                     kPathBatch);
  });
}

// The single probe from a hash and the batch probe timed interleaved
// (probe-path/<kind>/<bytes>, TimeInterleaved) on the same keys: the class's
// MayContain(key) (key) and MayContainHash (best), FastLocalBloom behind one
// call (fastlocal), both kernels inlined into loops (best_inlined,
// fastlocal_inlined), and on each target of `targets` (the CPU's best down to
// AVX2) the single probe through that target's kernel (single_<T>), the
// batch probe (batch_<T>: T2, window 64, simd::MayContainHashesForTarget)
// and, in cache, the blocked policy's KeyMayMatch compiled for it
// (policy_<T>).
// Ratios: best_over_fastlocal, inlined_over_fastlocal_inlined and, for each
// target above AVX2, single_<T>_over_avx2, batch_<T>_over_avx2 and
// policy_<T>_over_avx2: the figures of the rows key/best, hash/*,
// hash/target-<T>, batch/target-<T> and policy/target-<T> with no drift of
// the host between them.
void ProbePath(benchmark::State& state, uint64_t bytes, bool present,
               const std::vector<int64_t>& targets) {
  Fixture& fx = GetFixture(bytes);
  const ProbeSet& ps = fx.Get(present);
  const BlockedBloomFilter& f = *fx.filter;
  enum class Kind { kKey, kSingle, kBatch, kPolicy };
  struct Piece {
    std::string name;
    Kind kind;
    Single single;   // kSingle
    int64_t target;  // the target of a per-target piece, else 0
  };
  std::vector<Piece> pieces = {{"key", Kind::kKey, Single::kBest, 0},
                               {"best", Kind::kSingle, Single::kBest, 0},
                               {"fastlocal", Kind::kSingle, Single::kFastLocal, 0},
                               {"best_inlined", Kind::kSingle, Single::kBestInlined, 0},
                               {"fastlocal_inlined", Kind::kSingle, Single::kFastLocalInlined, 0}};
  const bool encoded = !fx.encoded.empty();  // in-cache sizes: the policy's filter
  for (int64_t t : targets) {
    const std::string name = simd::TargetName(t);
    pieces.push_back({"single_" + name, Kind::kSingle, Single::kTarget, t});
    pieces.push_back({"batch_" + name, Kind::kBatch, Single::kTarget, t});
    if (encoded) pieces.push_back({"policy_" + name, Kind::kPolicy, Single::kTarget, t});
  }
  std::vector<const char*> names;
  std::vector<int64_t> target;
  std::vector<int> kind;
  for (const Piece& p : pieces) {
    names.push_back(p.name.c_str());
    target.push_back(p.target);
    kind.push_back(static_cast<int>(p.kind));
  }
  std::vector<PathRatio> ratios = {
      {"best_over_fastlocal", "best", "fastlocal", true},
      {"inlined_over_fastlocal_inlined", "best_inlined", "fastlocal_inlined", true}};
  std::deque<std::string> ratio_names;
  AppendOverAvx2(names, target, kind, &ratio_names, &ratios);
  std::vector<simd::MayContainHashFn> kernels;
  std::vector<simd::MayContainHashesFn> batches;
  for (const Piece& p : pieces) {
    kernels.push_back(p.target != 0 ? simd::MayContainHashForTarget(p.target) : nullptr);
    batches.push_back(p.target != 0 ? simd::MayContainHashesForTarget(p.target) : nullptr);
  }
  const leveldb::Slice filter(fx.encoded);
  auto out = std::make_unique<bool[]>(kPathBatch);
  bool false_negative = false;
  TimeInterleaved(state, names, ps.size(), ratios, [&](size_t p, size_t cursor) {
    const Piece& piece = pieces[p];
    const uint64_t* h = ps.hashes.data() + cursor;
    uint64_t c = 0;
    switch (piece.kind) {
      case Kind::kKey:
        c = CountKeys(f, ps, cursor, kPathBatch);
        break;
      case Kind::kSingle:
        c = CountSingle(piece.single, f, h, kPathBatch, kernels[p]);
        break;
      case Kind::kBatch:
        batches[p](h, kPathBatch, f.num_bits(), f.num_probes(), f.data(), 64,
                   static_cast<int>(simd::PrefetchHint::kT2), out.get());
        for (size_t i = 0; i < kPathBatch; ++i) c += out[i];
        break;
      case Kind::kPolicy:
        c = ProbeKeys(ps, TargetPolicy(piece.target), filter, cursor, kPathBatch);
        break;
    }
    if (present && c != kPathBatch) false_negative = true;
    return c;
  });
  if (false_negative) {
    g_failed = true;
    state.SkipWithError("false negative");
  }
}

void ProbeEncoded(benchmark::State& state, uint64_t bytes, bool present) {
  Fixture& fx = GetFixture(bytes);
  const ProbeSet& ps = fx.Get(present);
  const std::string& filter = fx.encoded;
  Run(state, ps, present, [&](size_t begin, size_t count) -> uint64_t {
    uint64_t c = 0;
    for (size_t i = begin; i < begin + count; ++i) {
      c += blocked::EncodedKeyMayMatch(ps.key(i), kKeyBytes, filter.data(), filter.size()) == 1;
    }
    return c;
  });
}

// ---- LevelDB-sized filters: many small ones, each probe a random one ----
struct SmallFilters {
  static constexpr size_t kFilters = 1024;
  // Each policy's filter block: the filters back to back, and their offsets
  // (kFilters + 1 of them).
  std::string ours, leveldb;
  std::vector<uint32_t> ours_at, leveldb_at;
  std::vector<uint32_t> which;  // filter of probe i
  ProbeSet probes;              // key i: present in filter which[i], or absent
};

// Filter f holds keys f * keys_per_filter + [0, keys_per_filter).
const SmallFilters& GetSmallFilters(size_t keys_per_filter, bool present) {
  static std::unique_ptr<SmallFilters> sf;
  static size_t built_keys = 0;
  static bool built_present = false;
  if (sf && built_keys == keys_per_filter && built_present == present) return *sf;
  sf = std::make_unique<SmallFilters>();
  built_keys = keys_per_filter;
  built_present = present;
  std::vector<std::string> keys(keys_per_filter);
  std::vector<leveldb::Slice> slices(keys_per_filter);
  for (size_t f = 0; f < SmallFilters::kFilters; ++f) {
    for (size_t i = 0; i < keys_per_filter; ++i) {
      keys[i] = Key(f * keys_per_filter + i);
      slices[i] = leveldb::Slice(keys[i]);
    }
    sf->ours_at.push_back(static_cast<uint32_t>(sf->ours.size()));
    sf->leveldb_at.push_back(static_cast<uint32_t>(sf->leveldb.size()));
    OurPolicy().CreateFilter(slices.data(), static_cast<int>(keys_per_filter), &sf->ours);
    LevelDbPolicy().CreateFilter(slices.data(), static_cast<int>(keys_per_filter), &sf->leveldb);
  }
  sf->ours_at.push_back(static_cast<uint32_t>(sf->ours.size()));
  sf->leveldb_at.push_back(static_cast<uint32_t>(sf->leveldb.size()));
  const size_t count = size_t{1} << 16;
  sf->probes = MakeProbeSet(SmallFilters::kFilters * keys_per_filter, present, count, 3);
  sf->which.resize(count);
  for (size_t i = 0; i < count; ++i) {
    uint64_t id;
    std::memcpy(&id, sf->probes.key(i) + 8, 8);  // WriteKey's second half is the id
    sf->which[i] = present ? static_cast<uint32_t>(id / keys_per_filter)
                           : static_cast<uint32_t>(SplitMix64Of(i) % SmallFilters::kFilters);
  }
  return *sf;
}

// How many of probes [begin, begin + count) `policy` answers "may match",
// each against its filter in our filter block (ours) or LevelDB's. Out of
// line, as CountSingle.
__attribute__((noinline)) uint64_t ProbeSmall(const SmallFilters& sf,
                                              const leveldb::FilterPolicy& policy, bool ours,
                                              size_t begin, size_t count) {
  const char* block = ours ? sf.ours.data() : sf.leveldb.data();
  const uint32_t* at = ours ? sf.ours_at.data() : sf.leveldb_at.data();
  uint64_t c = 0;
  for (size_t i = begin; i < begin + count; ++i) {
    const uint32_t f = sf.which[i];
    c += policy.KeyMayMatch(leveldb::Slice(sf.probes.key(i), kKeyBytes),
                            leveldb::Slice(block + at[f], at[f + 1] - at[f]));
  }
  return c;
}

// reader: LevelDB's policy, or the migrating one (both on LevelDB's filters).
void ProbePolicySmall(benchmark::State& state, size_t keys_per_filter, bool present, bool ours,
                      const leveldb::FilterPolicy* reader = nullptr) {
  const SmallFilters& sf = GetSmallFilters(keys_per_filter, present);
  const leveldb::FilterPolicy& policy = reader != nullptr ? *reader
                                        : ours            ? OurPolicy()
                                                          : LevelDbPolicy();
  // The floor answers nothing: every key counts as found.
  if (reader == &TheFloorPolicy()) present = false;
  Run(state, sf.probes, present, [&](size_t begin, size_t count) -> uint64_t {
    return ProbeSmall(sf, policy, ours, begin, count);
  });
}

// The same at LevelDB's own filter sizes (policy-small-path/absent/<keys per
// filter>): absent keys, each against a random filter of one table's filter
// block (GetSmallFilters), timed interleaved: the floor
// (floor/policy-hash-line), the policy without its counters, ours and
// LevelDB's, each on its own policy's filters.
void PolicySmallPath(benchmark::State& state, size_t keys_per_filter) {
  const SmallFilters& sf = GetSmallFilters(keys_per_filter, false);
  const std::vector<const char*> names = {"floor", "uncounted", "policy", "leveldb"};
  const leveldb::FilterPolicy* const policies[] = {&TheFloorPolicy(), &UncountedPolicy(),
                                                   &OurPolicy(), &LevelDbPolicy()};
  TimeInterleaved(state, names, sf.probes.size(), kPolicyPathRatios, [&](size_t p, size_t cursor) {
    return ProbeSmall(sf, *policies[p], policies[p] != &LevelDbPolicy(), cursor, kPathBatch);
  });
}

void FloorHash(benchmark::State& state, uint64_t bytes) {
  Fixture& fx = GetFixture(bytes);
  const ProbeSet& ps = fx.absent;
  Run(state, ps, false, [&](size_t begin, size_t count) -> uint64_t {
    uint64_t acc = 0;
    for (size_t i = begin; i < begin + count; ++i) acc += internal::InlineHashKey(ps.views[i]);
    benchmark::DoNotOptimize(acc);
    return 0;
  });
}

// One 8-byte load per key from the line the filter would probe (window 0:
// no prefetch; else a rolling prefetch `window` keys ahead with `locality`).
template <int kLocality>
void FloorLine(benchmark::State& state, uint64_t bytes, size_t window, bool huge) {
  Fixture& fx = GetFixture(bytes);
  const BlockedBloomFilter& f = huge && fx.huge ? *fx.huge : *fx.filter;
  const uint8_t* base = f.data();
  const uint64_t bits = f.num_bits();
  const ProbeSet& ps = fx.absent;
  auto line_of = [&](uint64_t h) {
    return base + blocked::LocateBlock(h, bits).first_bit / 8 + (h & 56);
  };
  Run(state, ps, false, [&](size_t begin, size_t count) -> uint64_t {
    const uint64_t* h = ps.hashes.data() + begin;
    uint64_t acc = 0;
    size_t i = 0;
    if (window > 0) {
      for (size_t j = 0; j < std::min(window, count); ++j)
        __builtin_prefetch(line_of(h[j]), 0, kLocality);
      for (; i + window < count; ++i) {
        __builtin_prefetch(line_of(h[i + window]), 0, kLocality);
        uint64_t w;
        std::memcpy(&w, line_of(h[i]), 8);
        acc += w;
      }
    }
    for (; i < count; ++i) {
      uint64_t w;
      std::memcpy(&w, line_of(h[i]), 8);
      acc += w;
    }
    benchmark::DoNotOptimize(acc);
    return 0;
  });
}

// target != 0: dispatch restricted to that target for the run.
void Batch(benchmark::State& state, uint64_t bytes, bool present, size_t window,
           simd::PrefetchHint hint, bool huge, int64_t target = 0) {
  Fixture& fx = GetFixture(bytes);
  if (target != 0) simd::ForceTargetForTesting(target);
  const BlockedBloomFilter& f = huge && fx.huge ? *fx.huge : *fx.filter;
  const ProbeSet& ps = fx.Get(present);
  auto out = std::make_unique<bool[]>(kKeysPerIter);
  Run(state, ps, present, [&](size_t begin, size_t count) -> uint64_t {
    simd::MayContainHashes(ps.hashes.data() + begin, count, f.num_bits(), f.num_probes(), f.data(),
                           0, out.get(), window, hint);
    uint64_t c = 0;
    for (size_t i = 0; i < count; ++i) c += out[i];
    return c;
  });
  if (target != 0) simd::ForceTargetForTesting(0);
}

// ---- Builds ----
struct BuildKeys {
  std::vector<std::string> keys;
  std::vector<leveldb::Slice> slices;
  std::vector<std::string_view> views;
};
const BuildKeys& GetBuildKeys(uint64_t n) {
  static std::unique_ptr<BuildKeys> bk;
  if (!bk || bk->keys.size() != n) {
    bk = std::make_unique<BuildKeys>();
    bk->keys.resize(n);
    bk->slices.resize(n);
    bk->views.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      bk->keys[i] = Key(i);
      bk->slices[i] = leveldb::Slice(bk->keys[i]);
      bk->views[i] = bk->keys[i];
    }
  }
  return *bk;
}

enum class Builder {
  kLevelDb,
  kOurPolicy,
  kOurPolicyScalar,
  kOurPolicyTarget,
  kClass,
  kFloor,
  kFastLocal
};

// FastLocalBloom's build of the same filter bits as our policy's blocked
// (version 1) filters, the way RocksDB's builder adds its entries: each
// key's XXH3 goes into a ring of 8 with its line prefetched, and the key 8
// behind is added with FastLocalAdd; into the policy's zeroed bytes.
void FastLocalBuild(const BuildKeys& bk, uint64_t n, std::string* dst) {
  const uint64_t num_bytes = BlockedBloomBytes(n, kBitsPerKey);
  dst->assign(static_cast<size_t>(num_bytes), '\0');
  uint8_t* bits = reinterpret_cast<uint8_t*>(&(*dst)[0]);
  const uint64_t total_bits = num_bytes * 8;
  const int k = BlockedBloomProbes(kBitsPerKey);
  constexpr uint64_t kRing = 8;
  uint64_t ring[kRing];
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t h = internal::InlineHashKey(bk.views[i]);
    __builtin_prefetch(bits + blocked::LocateBlock(h, total_bits).first_bit / 8, 1, 3);
    if (i >= kRing) FastLocalAdd(ring[i % kRing], total_bits, k, bits);
    ring[i % kRing] = h;
  }
  for (uint64_t i = n > kRing ? n - kRing : 0; i < n; ++i) {
    FastLocalAdd(ring[i % kRing], total_bits, k, bits);
  }
}

// The floor of any blocked filter built from keys with XXH3: the policy's
// zeroed bytes, XXH3 of every key, and the hash ORed into the line the key's
// block would be with two AVX2 read-modify-writes (what setting its bits
// touches), no probe positions computed.
__attribute__((target("avx2"))) void FloorBuild(const BuildKeys& bk, uint64_t n, std::string* dst) {
  const uint64_t num_bytes = std::max<uint64_t>(64, BlockedBloomBytes(n, kBitsPerKey));
  dst->assign(static_cast<size_t>(num_bytes), '\0');
  uint8_t* bits = reinterpret_cast<uint8_t*>(&(*dst)[0]);
  const uint64_t whole_lines_bits = num_bytes / 64 * 512;
  const auto line_of = [&](uint64_t h) {
    return bits + blocked::LocateBlock(h, whole_lines_bits).first_bit / 8;
  };
  const auto hash_of = [&](uint64_t i) {
    return internal::InlineHashBytes(bk.slices[i].data(), bk.slices[i].size());
  };
  // Two 32-byte read-modify-writes: what the AVX2 build's final OR costs.
  const auto or_into = [](uint8_t * line, uint64_t h) __attribute__((target("avx2"))) {
    const __m256i v = _mm256_set1_epi64x(static_cast<long long>(h));
    for (int half = 0; half < 2; ++half) {
      __m256i* at = reinterpret_cast<__m256i*>(line + 32 * half);
      _mm256_storeu_si256(at, _mm256_or_si256(_mm256_loadu_si256(at), v));
    }
  };
  if (num_bytes <= simd::kPrefetchMinBytes) {
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t h = hash_of(i);
      or_into(line_of(h), h);
    }
    return;
  }
  // Above the prefetch threshold, the same rolling window of hashes ahead as
  // the blocked build (key_probe-inl.h, AddKeys), each line prefetched for
  // writing when its key is hashed.
  constexpr uint64_t kWindow = simd::kDefaultWindow;
  uint64_t ring[kWindow];
  const auto hash_ahead = [&](uint64_t i) {
    const uint64_t h = hash_of(i);
    __builtin_prefetch(line_of(h), 1, 3);
    ring[i % kWindow] = h;
  };
  for (uint64_t i = 0; i < std::min(kWindow, n); ++i) hash_ahead(i);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t h = ring[i % kWindow];
    if (i + kWindow < n) hash_ahead(i + kWindow);
    or_into(line_of(h), h);
  }
}

void Build(benchmark::State& state, uint64_t n, Builder b, int64_t target = 0) {
  const BuildKeys& bk = GetBuildKeys(n);
  if (b == Builder::kFastLocal) {  // the same bits as our blocked layout's, or no figure
    std::string ours, theirs;
    blocked::AppendFilter(
        n, BlockedBloomBytes(n, kBitsPerKey), BlockedBloomProbes(kBitsPerKey),
        blocked::Geometry::kBlocked512,
        [&](size_t i) { return std::string_view(bk.slices[i].data(), bk.slices[i].size()); },
        &ours);
    FastLocalBuild(bk, n, &theirs);
    if (ours.size() != theirs.size() + blocked::kTrailerSize ||
        ours.compare(0, theirs.size(), theirs) != 0) {
      g_failed = true;
      state.SkipWithError("FastLocalBloom's build differs from ours");
      return;
    }
  }
  if (b == Builder::kOurPolicyScalar) simd::ForceTargetForTesting(simd::SupportedTargets().back());
  uint64_t keys = 0;
  std::string dst;
  for (auto _ : state) {
    switch (b) {
      case Builder::kLevelDb:
        dst.clear();
        LevelDbPolicy().CreateFilter(bk.slices.data(), static_cast<int>(n), &dst);
        benchmark::DoNotOptimize(dst.data());
        break;
      case Builder::kOurPolicy:
      case Builder::kOurPolicyScalar:
        dst.clear();
        OurPolicy().CreateFilter(bk.slices.data(), static_cast<int>(n), &dst);
        benchmark::DoNotOptimize(dst.data());
        break;
      case Builder::kOurPolicyTarget:
        dst.clear();
        TargetPolicy(target).CreateFilter(bk.slices.data(), static_cast<int>(n), &dst);
        benchmark::DoNotOptimize(dst.data());
        break;
      case Builder::kFloor:
        FloorBuild(bk, n, &dst);
        benchmark::DoNotOptimize(dst.data());
        break;
      case Builder::kFastLocal:
        FastLocalBuild(bk, n, &dst);
        benchmark::DoNotOptimize(dst.data());
        break;
      case Builder::kClass: {
        auto f = BlockedBloomFilter::BuildFromKeys(bk.views, kBitsPerKey);
        benchmark::DoNotOptimize(f->data());
        break;
      }
    }
    keys += n;
  }
  if (b == Builder::kOurPolicyScalar) simd::ForceTargetForTesting(0);
  SetNsPerKey(state, keys);
}

// The blocked policy's CreateFilter of n keys compiled for each target of
// `targets` (the CPU's best down to AVX2), timed interleaved
// (build-path/<n>, TimeInterleaved): each batch builds the same keys
// max(1, 1024 / n) times. Counters: each target's median ns per key
// (<T>_ns) and, above AVX2, the median of per-iteration ratios
// <T>_over_avx2: build/bbpolicy-target-<T> with no drift of the host
// between the targets.
void BuildPath(benchmark::State& state, uint64_t n, const std::vector<int64_t>& targets) {
  const BuildKeys& bk = GetBuildKeys(n);
  std::vector<std::string> name_of;
  for (int64_t t : targets) name_of.push_back(simd::TargetName(t));
  std::vector<const char*> names;
  for (const std::string& name : name_of) names.push_back(name.c_str());
  std::vector<PathRatio> ratios;
  std::deque<std::string> ratio_names;
  AppendOverAvx2(names, targets, std::vector<int>(targets.size(), 0), &ratio_names, &ratios);
  const size_t reps = static_cast<size_t>(std::max<uint64_t>(1, 1024 / n));
  std::string dst;
  TimeInterleaved(
      state, names, SIZE_MAX, ratios,
      [&](size_t p, size_t) -> uint64_t {
        const leveldb::FilterPolicy& policy = TargetPolicy(targets[p]);
        for (size_t r = 0; r < reps; ++r) {
          dst.clear();
          policy.CreateFilter(bk.slices.data(), static_cast<int>(n), &dst);
          benchmark::DoNotOptimize(dst.data());
        }
        return dst.size();
      },
      reps* n);
}

// Per-call cost of the class API on a tiny filter: Create (k from the cache),
// AddKeys of 10 keys, one probe. Reported per call, not per key.
void CreateTiny(benchmark::State& state) {
  const BuildKeys& bk = GetBuildKeys(10);
  for (auto _ : state) {
    auto f = BlockedBloomFilter::BuildFromKeys(bk.views, kBitsPerKey);
    benchmark::DoNotOptimize(f->MayContain(bk.views[3]));
  }
}

template <typename Fn>
void Reg(const std::string& name, Fn&& fn) {
  benchmark::RegisterBenchmark(name.c_str(), std::forward<Fn>(fn))->Unit(benchmark::kNanosecond);
}

void RegisterAll() {
  constexpr uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;
  // The targets this CPU runs from the best down to AVX2 (at most three; on
  // other CPUs the best two): the figures behind simd::internal::TargetFor.
  std::vector<int64_t> targets;
  for (int64_t t : simd::SupportedTargets()) {
    if (targets.size() == 3 || (targets.size() == 2 && simd::TargetName(targets[1]) != "AVX3"))
      break;
    targets.push_back(t);
    if (simd::TargetName(t) == "AVX2") break;
  }
  std::vector<uint64_t> sizes = {16 * KiB, 1 * MiB};
  if (!g_quick) sizes.push_back(128 * MiB);
  if (g_big) sizes.push_back(1 * GiB);
  for (uint64_t bytes : sizes) {
    const std::string sz = std::to_string(bytes);
    const bool in_cache = bytes <= MiB;
    for (bool present : {false, true}) {
      const std::string tail = std::string(present ? "/present/" : "/absent/") + sz;
      Reg("hash/best" + tail,
          [=](benchmark::State& s) { ProbeHash(s, bytes, present, Single::kBest); });
      Reg("hash/scalar-target" + tail,
          [=](benchmark::State& s) { ProbeHash(s, bytes, present, Single::kScalarTarget); });
      Reg("hash/scalar-inline" + tail,
          [=](benchmark::State& s) { ProbeHash(s, bytes, present, Single::kScalarInline); });
      Reg("hash/fastlocal-avx2" + tail,
          [=](benchmark::State& s) { ProbeHash(s, bytes, present, Single::kFastLocal); });
      Reg("hash/fastlocal-avx2-inlined" + tail,
          [=](benchmark::State& s) { ProbeHash(s, bytes, present, Single::kFastLocalInlined); });
      Reg("hash/best-inlined" + tail,
          [=](benchmark::State& s) { ProbeHash(s, bytes, present, Single::kBestInlined); });
      Reg("hash/inline-api" + tail,
          [=](benchmark::State& s) { ProbeHash(s, bytes, present, Single::kInlineApi); });
      if (bytes >= kHugePageMinBytes) {
        Reg("hash/best-hugepages" + tail,
            [=](benchmark::State& s) { ProbeHash(s, bytes, present, Single::kBestHuge); });
      }
      for (int64_t t : targets) {
        Reg("hash/target-" + simd::TargetName(t) + tail,
            [=](benchmark::State& s) { ProbeHash(s, bytes, present, Single::kTarget, t); });
        Reg("batch/target-" + simd::TargetName(t) + "/T2/w64" + tail, [=](benchmark::State& s) {
          Batch(s, bytes, present, 64, simd::PrefetchHint::kT2, false, t);
        });
        if (in_cache) {
          Reg("policy/target-" + simd::TargetName(t) + tail,
              [=](benchmark::State& s) { ProbePolicy(s, bytes, present, Policy::kTarget, t); });
        }
      }
      Reg("key/best" + tail, [=](benchmark::State& s) { ProbeKey(s, bytes, present); });
      Reg("probe-path" + tail, [=](benchmark::State& s) { ProbePath(s, bytes, present, targets); });
      if (in_cache) {
        // The batch API in cache: the same in-register probe inlined into one
        // per-target loop (no call per key), against hash/fastlocal-avx2-inlined.
        Reg("batch/T2/w64" + tail, [=](benchmark::State& s) {
          Batch(s, bytes, present, 64, simd::PrefetchHint::kT2, false);
        });
        Reg("encoded/best" + tail, [=](benchmark::State& s) { ProbeEncoded(s, bytes, present); });
        Reg("policy/blockbloom" + tail,
            [=](benchmark::State& s) { ProbePolicy(s, bytes, present, Policy::kOurs); });
        Reg("policy/leveldb" + tail,
            [=](benchmark::State& s) { ProbePolicy(s, bytes, present, Policy::kLevelDb); });
        Reg("floor/policy-hash-line" + tail,
            [=](benchmark::State& s) { ProbePolicy(s, bytes, present, Policy::kFloor); });
        Reg("floor/policy-call" + tail,
            [=](benchmark::State& s) { ProbePolicy(s, bytes, present, Policy::kCall); });
        Reg("floor/policy-hash" + tail,
            [=](benchmark::State& s) { ProbePolicy(s, bytes, present, Policy::kHash); });
        Reg("floor/policy-hash-parse-line" + tail,
            [=](benchmark::State& s) { ProbePolicy(s, bytes, present, Policy::kHashParseLine); });
        Reg("floor/policy-hash-parse-line-count" + tail, [=](benchmark::State& s) {
          ProbePolicy(s, bytes, present, Policy::kHashParseLineCount);
        });
        Reg("floor/policy-uncounted" + tail,
            [=](benchmark::State& s) { ProbePolicy(s, bytes, present, Policy::kUncounted); });
        if (!present) {
          Reg("policy-path/absent/" + sz, [=](benchmark::State& s) { PolicyPath(s, bytes); });
        }
      }
    }
    Reg("floor/hash/absent/" + sz, [=](benchmark::State& s) { FloorHash(s, bytes); });
    Reg("floor/line/absent/" + sz, [=](benchmark::State& s) { FloorLine<3>(s, bytes, 0, false); });
    if (!in_cache) {
      const std::vector<size_t> windows = {16, 32, 64, 128, 256};
      for (size_t w : windows) {
        const std::string ws = "/w" + std::to_string(w) + "/absent/" + sz;
        Reg("floor/prefetched-T0" + ws,
            [=](benchmark::State& s) { FloorLine<3>(s, bytes, w, false); });
        Reg("floor/prefetched-T1" + ws,
            [=](benchmark::State& s) { FloorLine<2>(s, bytes, w, false); });
        Reg("floor/prefetched-T2" + ws,
            [=](benchmark::State& s) { FloorLine<1>(s, bytes, w, false); });
        Reg("floor/prefetched-NTA" + ws,
            [=](benchmark::State& s) { FloorLine<0>(s, bytes, w, false); });
        for (auto hint : {simd::PrefetchHint::kT0, simd::PrefetchHint::kT1, simd::PrefetchHint::kT2,
                          simd::PrefetchHint::kNta}) {
          const char* hn = hint == simd::PrefetchHint::kT0   ? "T0"
                           : hint == simd::PrefetchHint::kT1 ? "T1"
                           : hint == simd::PrefetchHint::kT2 ? "T2"
                                                             : "NTA";
          Reg(std::string("batch/") + hn + ws,
              [=](benchmark::State& s) { Batch(s, bytes, false, w, hint, false); });
        }
      }
      if (bytes >= kHugePageMinBytes) {
        Reg("floor/line-hugepages/absent/" + sz,
            [=](benchmark::State& s) { FloorLine<3>(s, bytes, 0, true); });
        Reg("floor/prefetched-T2-hugepages/w64/absent/" + sz,
            [=](benchmark::State& s) { FloorLine<1>(s, bytes, 64, true); });
        Reg("batch/T2-hugepages/w64/absent/" + sz, [=](benchmark::State& s) {
          Batch(s, bytes, false, 64, simd::PrefetchHint::kT2, true);
        });
      }
      Reg("batch/T2/w64/present/" + sz,
          [=](benchmark::State& s) { Batch(s, bytes, true, 64, simd::PrefetchHint::kT2, false); });
    }
  }
  for (size_t per : {20, 100}) {
    for (bool present : {false, true}) {
      const std::string tail =
          std::string(present ? "/present/" : "/absent/") + std::to_string(per);
      Reg("policy-small/blockbloom" + tail,
          [=](benchmark::State& s) { ProbePolicySmall(s, per, present, true); });
      Reg("policy-small/leveldb" + tail,
          [=](benchmark::State& s) { ProbePolicySmall(s, per, present, false); });
      Reg("policy-small/migrating-on-leveldb" + tail, [=](benchmark::State& s) {
        ProbePolicySmall(s, per, present, false, &MigratingPolicy());
      });
      Reg("policy-small/floor" + tail,
          [=](benchmark::State& s) { ProbePolicySmall(s, per, present, true, &TheFloorPolicy()); });
    }
    Reg("policy-small-path/absent/" + std::to_string(per),
        [=](benchmark::State& s) { PolicySmallPath(s, per); });
  }
  // 1-8: LevelDB's filters of tables with values of a few KiB (one or two
  // keys per 2 KiB of data), where a build's fixed cost shows; 20 and 100:
  // LevelDB's own filter sizes (one filter per 2 KiB of table data: 100- and
  // ~10-byte values), flat.
  std::vector<uint64_t> build_ns = {1, 2, 4, 8, 20, 100, 10'000, 1'000'000};
  if (!g_quick) build_ns.push_back(13'421'773);  // 16 MiB at 10 bits/key
  for (uint64_t n : build_ns) {
    const std::string ns = "/" + std::to_string(n);
    Reg("build/leveldb" + ns, [=](benchmark::State& s) { Build(s, n, Builder::kLevelDb); });
    Reg("build/bbpolicy-best" + ns, [=](benchmark::State& s) { Build(s, n, Builder::kOurPolicy); });
    Reg("build/bbpolicy-scalar" + ns,
        [=](benchmark::State& s) { Build(s, n, Builder::kOurPolicyScalar); });
    for (int64_t t : targets) {
      Reg("build/bbpolicy-target-" + simd::TargetName(t) + ns,
          [=](benchmark::State& s) { Build(s, n, Builder::kOurPolicyTarget, t); });
    }
    if (n <= 1'000'000) {
      Reg("build-path" + ns, [=](benchmark::State& s) { BuildPath(s, n, targets); });
    }
    Reg("build/class-best" + ns, [=](benchmark::State& s) { Build(s, n, Builder::kClass); });
    Reg("floor/build-hash-line" + ns, [=](benchmark::State& s) { Build(s, n, Builder::kFloor); });
    if (n >= 1000) {  // blocked (version 1) filters: FastLocalBloom's bits
      Reg("build/fastlocal" + ns, [=](benchmark::State& s) { Build(s, n, Builder::kFastLocal); });
    }
  }
  Reg("create/tiny/10", [](benchmark::State& s) { CreateTiny(s); });
}

}  // namespace
}  // namespace bench
}  // namespace blockbloom

int main(int argc, char** argv) {
  using namespace blockbloom::bench;
  g_quick = ConsumeQuickFlag(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--big") {
      g_big = true;
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      break;
    }
  }
  benchmark::AddCustomContext("highway_best_target", blockbloom::simd::ActiveTargetName());
  benchmark::AddCustomContext(
      "highway_scalar_target",
      blockbloom::simd::TargetName(blockbloom::simd::SupportedTargets().back()));
  benchmark::AddCustomContext("inline_api_target", blockbloom::bench::InlineApiTarget());
  using blockbloom::simd::KernelFamily;
  benchmark::AddCustomContext(
      "kernel_targets",
      "single probe " + blockbloom::simd::KernelTargetName(KernelFamily::kSingleProbe) +
          ", batch probe in cache " +
          blockbloom::simd::KernelTargetName(KernelFamily::kBatchProbeInCache) + ", out of cache " +
          blockbloom::simd::KernelTargetName(KernelFamily::kBatchProbe) + ", build " +
          blockbloom::simd::KernelTargetName(KernelFamily::kBuild));
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return g_failed ? 1 : 0;
}
