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
constexpr int kR = Filter::kRemainderBits;  // the widest remainder
constexpr int kStride = 16;                 // the widest scan stride (dleft_simd::kWideStride)

// The d permutation multipliers: odd, fixed forever (they define which cell a
// key uses; the structure is in-memory only, but tests pin behaviour). The
// first four outputs of SplitMix64(0), with the low bit forced to 1.
constexpr uint64_t kMultipliers[kD] = {0xE220A8397B1DCDAFull | 1, 0x6E789E6AA1B965F4ull | 1,
                                       0x06C45D188009454Full | 1, 0xF88BB8A8724C81ECull | 1};

uint16_t CellCount(uint16_t cell) { return cell & 3; }
bool CellHolds(uint16_t cell, uint16_t tag) {
  return CellCount(cell) != 0 && (cell >> 2) == (tag >> 2);
}

// Hash bits that choose the segment: 64 - (kMaxLog2Buckets + kR) = 18 low
// bits, disjoint from every fingerprint (narrower remainders make shorter
// ones).
constexpr int kSegmentBits = 64 - (Filter::kMaxLog2Buckets + kR);
constexpr uint64_t kSegmentMask = (uint64_t{1} << kSegmentBits) - 1;
static_assert(kSegmentBits == 18, "the segment bits lie below the longest fingerprint");

}  // namespace

// Scratch space for a chunk of keys: their candidate buckets' cells, tags and
// the kernel's answers (~5 KiB: for the batch queries only).
struct DleftCountingBloomFilter::Scan {
  static constexpr size_t kMaxKeys = 64;
  alignas(64) uint16_t cells[kMaxKeys * kD * kStride];
  uint16_t tags[kMaxKeys * kD];
  int8_t match[kMaxKeys * kD];
  uint8_t load[kMaxKeys * kD];
};

// One key's d candidate buckets, copied out and scanned (a cache line of
// cells and 8 bytes of answers).
struct DleftCountingBloomFilter::KeyScan {
  int stride;  // cells per bucket in `cells`
  alignas(64) uint16_t cells[kD * kStride];
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
  uint16_t MatchedCell(int i) const { return cells[i * stride + match[i]]; }
};

void DleftCountingBloomFilter::BucketsFree::operator()(Bucket* buckets) const noexcept {
  internal::FreeLarge(buckets);
}

DleftCountingBloomFilter::DleftCountingBloomFilter(int log2_buckets, int segments, int cell_bits)
    : log2_buckets_(log2_buckets),
      segments_(segments),
      cell_bits_(cell_bits),
      cells_(cell_bits == kNarrowCellBits ? kNarrowCellsPerBucket : kCellsPerBucket),
      remainder_bits_(RemainderBitsOf(cell_bits)),
      stride_(cell_bits == kNarrowCellBits ? 16 : 8) {}

absl::StatusOr<std::unique_ptr<DleftCountingBloomFilter>>
DleftCountingBloomFilter::CreateWithGeometry(int log2_buckets, int segments, int cell_bits) {
  if (log2_buckets < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("d-left: log2_buckets must be >= 0, got ", log2_buckets));
  }
  if (segments < 1 || segments > kMaxSegments) {
    return absl::InvalidArgumentError(
        absl::StrCat("d-left: segments must be in [1, ", kMaxSegments, "], got ", segments));
  }
  if (cell_bits != kCellBits && cell_bits != kNarrowCellBits) {
    return absl::InvalidArgumentError(
        absl::StrCat("d-left: cells are 16 or 12 bits, got ", cell_bits));
  }
  if (log2_buckets > kMaxLog2Buckets) {
    return absl::ResourceExhaustedError(
        absl::StrCat("d-left: log2_buckets ", log2_buckets, " above the most, ", kMaxLog2Buckets));
  }
  std::unique_ptr<Filter> filter(new (std::nothrow) Filter(log2_buckets, segments, cell_bits));
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
  const int r = remainder_bits_;
  const int fingerprint_bits = log2_buckets_ + r;  // F <= 46
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
    c.bucket[i] = i * per_table + segment_base + (p >> r);
    c.tag[i] = static_cast<uint16_t>((p & ((1u << r) - 1)) << 2);
  }
  return c;
}

void DleftCountingBloomFilter::Copy(const Candidates& c, uint16_t* cells) const {
  if (cell_bits_ == kNarrowCellBits) {
    // 10 cells of 12 bits, 5 per word; scan slots 10-15 stay empty.
    for (int i = 0; i < kD; ++i) {
      const Bucket& b = buckets_[c.bucket[i]];
      uint16_t* out = cells + i * 16;
      for (int half = 0; half < 2; ++half) {
        const uint64_t word = b.words[half].load(std::memory_order_relaxed);
        for (int j = 0; j < 5; ++j) {
          out[half * 5 + j] = static_cast<uint16_t>((word >> (12 * j)) & 0xFFF);
        }
      }
      for (int j = 10; j < 16; ++j) out[j] = 0;
    }
    return;
  }
  for (int i = 0; i < kD; ++i) {
    const Bucket& b = buckets_[c.bucket[i]];
    for (int half = 0; half < 2; ++half) {
      const uint64_t word = b.words[half].load(std::memory_order_relaxed);
      for (int j = 0; j < 4; ++j) {
        cells[i * 8 + half * 4 + j] = static_cast<uint16_t>(word >> (16 * j));
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
  const bool narrow = cell_bits_ == kNarrowCellBits;
  const int per_word = narrow ? 5 : 4;
  const uint64_t field = narrow ? 0xFFF : 0xFFFF;
  std::atomic<uint64_t>& word = buckets_[bucket].words[cell / per_word];
  const int shift = cell_bits_ * (cell % per_word);
  const uint64_t old_word = word.load(std::memory_order_relaxed);
  word.store((old_word & ~(field << shift)) | (uint64_t{value} << shift),
             std::memory_order_relaxed);
}

DleftCountingBloomFilter::KeyScan DleftCountingBloomFilter::ScanKey(const Candidates& c) const {
  KeyScan scan;
  scan.stride = stride_;
  Copy(c, scan.cells);
  dleft_simd::ScanBuckets(scan.cells, stride_, c.tag, kD, scan.match, scan.load);
  return scan;
}

absl::Status DleftCountingBloomFilter::InsertHash(uint64_t hash) {
  const Candidates c = Locate(hash);
  std::lock_guard<std::mutex> lock(write_mu_);
  const KeyScan scan = ScanKey(c);
  if (const int i = scan.FirstMatch(); i >= 0) {
    const uint16_t cell = scan.MatchedCell(i);
    if (CellCount(cell) < kMaxCount) {
      SetCell(c.bucket[i], scan.match[i], static_cast<uint16_t>(cell + 1));
      AddToKeysLocked(+1);
      return absl::OkStatus();
    }
    if (cell_bits_ != kNarrowCellBits) {
      overflows_.fetch_add(1, std::memory_order_relaxed);
      return absl::ResourceExhaustedError(
          "d-left: counter overflow (3 keys share this fingerprint)");
    }
    // 12-bit cells: another cell of this fingerprint below 3, else a new cell.
    for (int k = 0; k < kD; ++k) {
      for (int j = 0; j < cells_; ++j) {
        const uint16_t other = scan.cells[k * stride_ + j];
        if (CellHolds(other, c.tag[k]) && CellCount(other) < kMaxCount) {
          SetCell(c.bucket[k], j, static_cast<uint16_t>(other + 1));
          AddToKeysLocked(+1);
          return absl::OkStatus();
        }
      }
    }
  }
  int best = 0;  // least loaded, leftmost on ties
  for (int i = 1; i < kD; ++i) {
    if (scan.load[i] < scan.load[best]) best = i;
  }
  if (scan.load[best] >= cells_) {
    full_failures_.fetch_add(1, std::memory_order_relaxed);
    return absl::ResourceExhaustedError("d-left: all candidate buckets are full");
  }
  int empty = 0;
  while (CellCount(scan.cells[best * stride_ + empty]) != 0) ++empty;
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
  const Candidates c = Locate(HashKey(key));
  const KeyScan scan = ScanKey(c);
  uint32_t count = 0;
  for (int i = 0; i < kD; ++i) {
    for (int j = 0; j < cells_; ++j) {
      const uint16_t cell = scan.cells[i * stride_ + j];
      if (CellHolds(cell, c.tag[i])) count += CellCount(cell);
    }
  }
  return count;
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
      Copy(c[j], scan.cells + j * kD * stride_);
      std::copy(c[j].tag, c[j].tag + kD, scan.tags + j * kD);
    }
    dleft_simd::ScanBuckets(scan.cells, stride_, scan.tags, count * kD, scan.match, scan.load);
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
  const double cells = static_cast<double>(num_buckets_) * cells_;
  s.load = s.occupied_cells / cells;
  // Each subtable's candidate bucket holds occupied/(d*B) cells on average,
  // each matching with probability 2^-r; summed over d subtables.
  s.estimated_fpr = std::min(1.0, s.occupied_cells / (static_cast<double>(buckets_per_subtable()) *
                                                      (1 << remainder_bits_)));
  return s;
}

void DleftCountingBloomFilter::AppendTables(std::string* out) const {
  internal::AppendAtomicWords(absl::MakeConstSpan(buckets_.get(), num_buckets_), out);
}

absl::StatusOr<std::unique_ptr<DleftCountingBloomFilter>> DleftCountingBloomFilter::FromTables(
    int log2_buckets, uint64_t num_keys, std::string_view tables, int segments, int cell_bits) {
  if (log2_buckets < 0 || log2_buckets > kMaxLog2Buckets || segments < 1 ||
      segments > kMaxSegments ||
      tables.size() / sizeof(Bucket) / kD / uint64_t(segments) != (uint64_t{1} << log2_buckets) ||
      tables.size() % (sizeof(Bucket) * kD * uint64_t(segments)) != 0) {
    return absl::InvalidArgumentError("d-left: tables do not match the geometry");
  }
  auto filter = CreateWithGeometry(log2_buckets, segments, cell_bits);
  if (!filter.ok()) return filter.status();
  uint64_t occupied = 0;
  // Bits 0-1 of each cell: its counter (bit 0 of each cell in `lows`).
  const bool narrow = cell_bits == kNarrowCellBits;
  const uint64_t lows = narrow ? 0x0001001001001001ull : 0x0001000100010001ull;
  const uint64_t counter_bits = lows * 3;
  absl::Span<Bucket> buckets = absl::MakeSpan((*filter)->buckets_.get(), (*filter)->num_buckets_);
  internal::LoadAtomicWords(tables.data(), &buckets, [&](uint64_t w) {
    // A cell is occupied when its 2-bit counter is not 0.
    const uint64_t counters = w & counter_bits;
    occupied += static_cast<uint64_t>(__builtin_popcountll((counters | (counters >> 1)) & lows));
  });
  (*filter)->occupied_.store(occupied, std::memory_order_relaxed);
  (*filter)->keys_.store(num_keys, std::memory_order_relaxed);
  return filter;
}

}  // namespace blockbloom
