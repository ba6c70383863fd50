#include "blockbloom/dleft_counting_bloom.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"
#include "blockbloom/hash.h"
#include "common/coding.h"
#include "common/hash_slices.h"
#include "common/large_allocator.h"
#include "dleft_simd.h"

namespace blockbloom {
namespace {

using Filter = DleftCountingBloomFilter;
constexpr int kD = Filter::kSubtables;
constexpr int kW = Filter::kCellsPerBucket;
constexpr int kR = Filter::kRemainderBits;

// The d permutation multipliers: odd, fixed forever (they define which cell a
// key uses; the structure is in-memory only, but tests pin behaviour). The
// first four outputs of SplitMix64(0), with the low bit forced to 1.
constexpr uint64_t kMultipliers[kD] = {0xE220A8397B1DCDAFull | 1, 0x6E789E6AA1B965F4ull | 1,
                                       0x06C45D188009454Full | 1, 0xF88BB8A8724C81ECull | 1};

uint16_t CellCount(uint16_t cell) { return cell & 3; }

// Hash bits that choose the segment: 64 - (kMaxLog2Buckets + kR) = 18 low
// bits, disjoint from every fingerprint.
constexpr int kSegmentBits = 64 - (Filter::kMaxLog2Buckets + kR);
constexpr uint64_t kSegmentMask = (uint64_t{1} << kSegmentBits) - 1;
static_assert(kSegmentBits == 18, "the segment bits lie below the longest fingerprint");

}  // namespace

// Scratch space for a chunk of keys: their candidate buckets' cells, tags and
// the kernel's answers (~5 KiB: for the batch queries only).
struct DleftCountingBloomFilter::Scan {
  static constexpr size_t kMaxKeys = 64;
  alignas(64) uint16_t cells[kMaxKeys * kD * kW];
  uint16_t tags[kMaxKeys * kD];
  int8_t match[kMaxKeys * kD];
  uint8_t load[kMaxKeys * kD];
};

// One key's d candidate buckets, copied out and scanned (a cache line of
// cells and 8 bytes of answers).
struct DleftCountingBloomFilter::KeyScan {
  alignas(64) uint16_t cells[kD * kW];
  int8_t match[kD];  // matching cell in subtable i's bucket, or -1
  uint8_t load[kD];  // occupied cells of subtable i's bucket

  // The first subtable whose bucket holds the key's remainder, or -1.
  int FirstMatch() const {
    for (int i = 0; i < kD; ++i) {
      if (match[i] >= 0) return i;
    }
    return -1;
  }
  // The cell matched in subtable i. REQUIRES: match[i] >= 0.
  uint16_t MatchedCell(int i) const { return cells[i * kW + match[i]]; }
};

void DleftCountingBloomFilter::BucketsFree::operator()(Bucket* buckets) const noexcept {
  internal::FreeLarge(buckets);
}

DleftCountingBloomFilter::DleftCountingBloomFilter(int log2_buckets, int segments)
    : log2_buckets_(log2_buckets), segments_(segments) {}

absl::StatusOr<std::unique_ptr<DleftCountingBloomFilter>>
DleftCountingBloomFilter::CreateWithGeometry(int log2_buckets, int segments) {
  if (log2_buckets < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("d-left: log2_buckets must be >= 0, got ", log2_buckets));
  }
  if (segments < 1 || segments > kMaxSegments) {
    return absl::InvalidArgumentError(
        absl::StrCat("d-left: segments must be in [1, ", kMaxSegments, "], got ", segments));
  }
  if (log2_buckets > kMaxLog2Buckets) {
    return absl::ResourceExhaustedError(
        absl::StrCat("d-left: log2_buckets ", log2_buckets, " above the most, ", kMaxLog2Buckets));
  }
  std::unique_ptr<Filter> filter(new (std::nothrow) Filter(log2_buckets, segments));
  if (filter == nullptr) return absl::ResourceExhaustedError("d-left: out of memory");
  try {
    filter->num_buckets_ = filter->buckets_per_subtable() * kD;
    filter->buckets_.reset(internal::NewLargeArray<Bucket>(filter->num_buckets_));  // empty
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("d-left: out of memory");
  } catch (const std::length_error&) {
    return absl::ResourceExhaustedError("d-left: too large");
  }
  return filter;
}

absl::StatusOr<std::unique_ptr<DleftCountingBloomFilter>> DleftCountingBloomFilter::Create(
    uint64_t expected_keys, double target_fpr) {
  const double p = std::isnan(target_fpr) ? 0.01 : std::clamp(target_fpr, 1e-7, 1.0);
  const double n = static_cast<double>(expected_keys);
  const double buckets =
      std::max({1.0, n / (kDesignKeysPerBucket * kD), n / (p * double(1 << kR))});
  int log2 = 0;
  while (log2 <= kMaxLog2Buckets && std::ldexp(1.0, log2) < buckets) ++log2;
  return CreateWithGeometry(log2);
}

DleftCountingBloomFilter::Candidates DleftCountingBloomFilter::Locate(uint64_t hash) const {
  const int fingerprint_bits = log2_buckets_ + kR;  // F <= 46
  const uint64_t mask = (uint64_t{1} << fingerprint_bits) - 1;
  const uint64_t f = hash >> (64 - fingerprint_bits);
  const uint64_t per_table = buckets_per_subtable();
  // The segment: the low 18 bits (never in f, F <= 46), multiply-shift
  // reduced to [0, segments).
  const uint64_t segment_base = (((hash & kSegmentMask) * uint64_t(segments_)) >> kSegmentBits)
                                << log2_buckets_;
  Candidates c;
  for (int i = 0; i < kD; ++i) {
    const uint64_t p = (kMultipliers[i] * f) & mask;  // bijection on F bits
    c.bucket[i] = i * per_table + segment_base + (p >> kR);
    c.tag[i] = static_cast<uint16_t>((p & ((1u << kR) - 1)) << 2);
  }
  return c;
}

void DleftCountingBloomFilter::Copy(const Candidates& c, uint16_t* cells) const {
  for (int i = 0; i < kD; ++i) {
    const Bucket& b = buckets_[c.bucket[i]];
    for (int half = 0; half < 2; ++half) {
      const uint64_t word = b.words[half].load(std::memory_order_relaxed);
      for (int j = 0; j < 4; ++j) {
        cells[i * kW + half * 4 + j] = static_cast<uint16_t>(word >> (16 * j));
      }
    }
  }
}

// keys_ + delta (+1 or -1), saturating at 0 and 2^64 - 1: FromTables takes
// any stored count, so it may disagree with the cells (an erase that finds a
// cell may meet a count of 0). REQUIRES: write_mu_ held (the only writer of
// keys_ once the filter is shared).
void DleftCountingBloomFilter::AddToKeysLocked(int delta) {
  const uint64_t keys = keys_.load(std::memory_order_relaxed);
  if (delta > 0 ? keys == UINT64_MAX : keys == 0) return;
  keys_.store(delta > 0 ? keys + 1 : keys - 1, std::memory_order_relaxed);
}

// REQUIRES: write_mu_ held (the only writer of any word).
void DleftCountingBloomFilter::SetCell(uint64_t bucket, int cell, uint16_t value) {
  std::atomic<uint64_t>& word = buckets_[bucket].words[cell / 4];
  const int shift = 16 * (cell % 4);
  const uint64_t old_word = word.load(std::memory_order_relaxed);
  word.store((old_word & ~(uint64_t{0xFFFF} << shift)) | (uint64_t{value} << shift),
             std::memory_order_relaxed);
}

DleftCountingBloomFilter::KeyScan DleftCountingBloomFilter::ScanKey(const Candidates& c) const {
  KeyScan scan;
  Copy(c, scan.cells);
  dleft_simd::ScanBuckets(scan.cells, c.tag, kD, scan.match, scan.load);
  return scan;
}

absl::Status DleftCountingBloomFilter::InsertHash(uint64_t hash) {
  const Candidates c = Locate(hash);
  std::lock_guard<std::mutex> lock(write_mu_);
  const KeyScan scan = ScanKey(c);
  if (const int i = scan.FirstMatch(); i >= 0) {
    const uint16_t cell = scan.MatchedCell(i);
    if (CellCount(cell) == kMaxCount) {
      overflows_.fetch_add(1, std::memory_order_relaxed);
      return absl::ResourceExhaustedError(
          "d-left: counter overflow (3 keys share this fingerprint)");
    }
    SetCell(c.bucket[i], scan.match[i], static_cast<uint16_t>(cell + 1));
    AddToKeysLocked(+1);
    return absl::OkStatus();
  }
  int best = 0;  // least loaded, leftmost on ties
  for (int i = 1; i < kD; ++i) {
    if (scan.load[i] < scan.load[best]) best = i;
  }
  if (scan.load[best] >= kW) {
    full_failures_.fetch_add(1, std::memory_order_relaxed);
    return absl::ResourceExhaustedError("d-left: all candidate buckets are full");
  }
  int empty = 0;
  while (CellCount(scan.cells[best * kW + empty]) != 0) ++empty;
  SetCell(c.bucket[best], empty, static_cast<uint16_t>(c.tag[best] | 1));
  occupied_.fetch_add(1, std::memory_order_relaxed);
  AddToKeysLocked(+1);
  return absl::OkStatus();
}

absl::Status DleftCountingBloomFilter::Insert(std::string_view key) {
  return InsertHash(HashKey(key));
}

absl::Status DleftCountingBloomFilter::EraseHash(uint64_t hash) {
  const Candidates c = Locate(hash);
  std::lock_guard<std::mutex> lock(write_mu_);
  const KeyScan scan = ScanKey(c);
  const int i = scan.FirstMatch();
  if (i < 0) return absl::NotFoundError("d-left: erase of a key whose fingerprint is absent");
  const uint16_t cell = scan.MatchedCell(i);
  if (CellCount(cell) == 1) {
    SetCell(c.bucket[i], scan.match[i], 0);
    occupied_.fetch_sub(1, std::memory_order_relaxed);
  } else {
    SetCell(c.bucket[i], scan.match[i], static_cast<uint16_t>(cell - 1));
  }
  AddToKeysLocked(-1);
  return absl::OkStatus();
}

absl::Status DleftCountingBloomFilter::Erase(std::string_view key) {
  return EraseHash(HashKey(key));
}

bool DleftCountingBloomFilter::MayContainHash(uint64_t hash) const {
  return ScanKey(Locate(hash)).FirstMatch() >= 0;
}

void DleftCountingBloomFilter::PrefetchHash(uint64_t hash) const {
  const Candidates c = Locate(hash);
  for (int i = 0; i < kD; ++i) __builtin_prefetch(&buckets_[c.bucket[i]]);
}

bool DleftCountingBloomFilter::MayContain(std::string_view key) const {
  return MayContainHash(HashKey(key));
}

uint32_t DleftCountingBloomFilter::Count(std::string_view key) const {
  const KeyScan scan = ScanKey(Locate(HashKey(key)));
  const int i = scan.FirstMatch();
  return i < 0 ? 0 : CellCount(scan.MatchedCell(i));
}

void DleftCountingBloomFilter::MayContainHashes(absl::Span<const uint64_t> hashes,
                                                absl::Span<bool> out) const {
  Scan scan;
  const size_t n = std::min(hashes.size(), out.size());
  for (size_t start = 0; start < n; start += Scan::kMaxKeys) {
    const size_t count = std::min(Scan::kMaxKeys, n - start);
    Candidates c[Scan::kMaxKeys];
    for (size_t j = 0; j < count; ++j) {
      c[j] = Locate(hashes[start + j]);
      for (int i = 0; i < kD; ++i) __builtin_prefetch(&buckets_[c[j].bucket[i]]);
    }
    for (size_t j = 0; j < count; ++j) {
      Copy(c[j], scan.cells + j * kD * kW);
      std::copy(c[j].tag, c[j].tag + kD, scan.tags + j * kD);
    }
    dleft_simd::ScanBuckets(scan.cells, scan.tags, count * kD, scan.match, scan.load);
    for (size_t j = 0; j < count; ++j) {
      bool any = false;
      for (int i = 0; i < kD; ++i) any |= scan.match[j * kD + i] >= 0;
      out[start + j] = any;
    }
  }
}

void DleftCountingBloomFilter::MayContainKeys(absl::Span<const std::string_view> keys,
                                              absl::Span<bool> out) const {
  internal::ForEachHashSlice(keys, [&](absl::Span<const uint64_t> hashes, size_t first) {
    MayContainHashes(hashes, out.subspan(first, hashes.size()));
  });
}

DleftStats DleftCountingBloomFilter::stats() const {
  DleftStats s;
  s.keys = keys_.load(std::memory_order_relaxed);
  s.occupied_cells = occupied_.load(std::memory_order_relaxed);
  s.full_bucket_failures = full_failures_.load(std::memory_order_relaxed);
  s.counter_overflows = overflows_.load(std::memory_order_relaxed);
  s.memory_bytes = memory_bytes();
  const double cells = static_cast<double>(num_buckets_) * kW;
  s.load = s.occupied_cells / cells;
  // Each subtable's candidate bucket holds occupied/(d*B) cells on average,
  // each matching with probability 2^-r; summed over d subtables.
  s.estimated_fpr =
      std::min(1.0, s.occupied_cells / (static_cast<double>(buckets_per_subtable()) * (1 << kR)));
  return s;
}

void DleftCountingBloomFilter::AppendTables(std::string* out) const {
  internal::AppendAtomicWords(absl::MakeConstSpan(buckets_.get(), num_buckets_), out);
}

absl::StatusOr<std::unique_ptr<DleftCountingBloomFilter>> DleftCountingBloomFilter::FromTables(
    int log2_buckets, uint64_t num_keys, std::string_view tables, int segments) {
  if (log2_buckets < 0 || log2_buckets > kMaxLog2Buckets || segments < 1 ||
      segments > kMaxSegments ||
      tables.size() / sizeof(Bucket) / kD / uint64_t(segments) != (uint64_t{1} << log2_buckets) ||
      tables.size() % (sizeof(Bucket) * kD * uint64_t(segments)) != 0) {
    return absl::InvalidArgumentError("d-left: tables do not match the geometry");
  }
  auto filter = CreateWithGeometry(log2_buckets, segments);
  if (!filter.ok()) return filter.status();
  uint64_t occupied = 0;
  absl::Span<Bucket> buckets = absl::MakeSpan((*filter)->buckets_.get(), (*filter)->num_buckets_);
  internal::LoadAtomicWords(tables.data(), &buckets, [&](uint64_t w) {
    // A cell is occupied when its 2-bit counter (bits 0-1 of each 16) is not 0.
    const uint64_t counters = w & 0x0003000300030003ull;
    occupied += static_cast<uint64_t>(
        __builtin_popcountll((counters | (counters >> 1)) & 0x0001000100010001ull));
  });
  (*filter)->occupied_.store(occupied, std::memory_order_relaxed);
  (*filter)->keys_.store(num_keys, std::memory_order_relaxed);
  return filter;
}

}  // namespace blockbloom
