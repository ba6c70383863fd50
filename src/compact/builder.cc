#include "compact/builder.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "blockbloom/blocked_bloom.h"  // ClampBitsPerKey
#include "common/coding.h"
#include "compact/banding.h"
#include "compact_solver.h"
#include "targets.h"  // ThisCpu: where PDEP is fast

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>  // _pdep_u64
#endif

namespace blockbloom {
namespace compact {
namespace {

// PredictedFprV1 simulates the builder up to this many keys (see there).
constexpr uint64_t kSimulatedKeys = 16;

// Largest U the model affords for n keys, data_bits bits of Rice stream and
// Rice parameter r; 0 if r does not fit at all.
double ModelRange(double n, double data_bits, int r) {
  const double slack = data_bits / n - r - 1;  // mean unary bits per key
  if (!(slack > 0)) return 0;
  const double t = std::log1p(1.0 / slack);  // 1/(e^t - 1) = slack
  return std::min(n * static_cast<double>(uint64_t{1} << r) / t, static_cast<double>(kMaxRange));
}

struct ModelChoice {
  int rice_bits = 0;
  double range = 0;  // U
};

// The model's (r, U) for n distinct keys within budget_bytes, with B buckets.
ModelChoice ChooseByModel(uint64_t n, uint64_t num_buckets, uint64_t budget_bytes) {
  ModelChoice best;
  if (n == 0) return best;
  // Overhead (trailer, varints, index) depends on S and W, which depend on
  // the choice: guess the stream at the budget less an 8-byte trailer, then
  // redo the choice only if that changed the overhead.
  uint64_t s_guess = 8 * budget_bytes > 64 ? 8 * budget_bytes - 64 : 1;
  uint64_t w_guess = 1;
  double overhead_bits = -1;
  for (int round = 0; round < 3; ++round) {
    const Params guess{num_buckets, w_guess, s_guess, 0};
    const double overhead = 8.0 * (EncodedSize(guess) - (s_guess + 7) / 8);
    if (overhead == overhead_bits) break;  // the choice stands
    overhead_bits = overhead;
    const double data_bits = 8.0 * budget_bytes - overhead_bits;
    best = ModelChoice();
    if (!(data_bits > 0)) return best;
    // With s = c - r - 1 unary bits per key (c = data bits per key),
    // U(r+1) > U(r) iff (1 + 1/s)^2 > 1 + 1/(s - 1), i.e. s^2 - s - 1 > 0,
    // i.e. s > phi = 1.618...: the best r leaves s in (phi - 1, phi].
    const double c = data_bits / static_cast<double>(n);
    const int r = static_cast<int>(
        std::clamp(std::ceil(c - 1 - 1.6180339887498949), 0.0, static_cast<double>(kMaxRiceBits)));
    best.range = ModelRange(static_cast<double>(n), data_bits, r);
    best.rice_bits = r;
    if (best.range <= 0) return ModelChoice();
    // Saturating: a model asked about absurd key counts (a hostile file's
    // claim) must not convert an out-of-range double (undefined behaviour).
    s_guess = internal::SaturatingBytes(data_bits);
    w_guess = internal::SaturatingBytes(std::max(1.0, best.range / num_buckets));
  }
  return best;
}

// Exact stream length in bits for sorted distinct `hashes` whose buckets are
// `buckets`, with bucket width W and Rice parameter r. Also counts entries.
// `buckets` is null when there is one bucket (every key in bucket 0).
uint64_t StreamBits(const std::vector<uint64_t>& hashes, const uint64_t* buckets,
                    uint64_t num_buckets, uint64_t width, int r, uint64_t* entries) {
  const uint64_t range = num_buckets * width;
  uint64_t bits = 0, count = 0;
  uint64_t prev_bucket = UINT64_MAX, prev_value = 0;
  for (size_t i = 0; i < hashes.size(); ++i) {
    const uint64_t bucket = buckets == nullptr ? 0 : buckets[i];
    const uint64_t value = FastRange64(hashes[i], range) - bucket * width;
    uint64_t gap;
    if (bucket != prev_bucket) {
      gap = value;
      prev_bucket = bucket;
    } else {
      if (value == prev_value) continue;  // same fingerprint
      gap = value - prev_value;
    }
    prev_value = value;
    bits += (gap >> r) + 1 + static_cast<uint64_t>(r);
    ++count;
  }
  if (entries != nullptr) *entries = count;
  return bits;
}

// Least-significant-bit-first bit appender.
class BitWriter {
 public:
  explicit BitWriter(std::string* dst) : dst_(dst) {}
  // REQUIRES: bits <= 56.
  void Put(uint64_t value, int bits) {
    acc_ |= value << fill_;
    fill_ += bits;
    bits_ += static_cast<uint64_t>(bits);
    while (fill_ >= 8) {
      dst_->push_back(static_cast<char>(acc_ & 0xFF));
      acc_ >>= 8;
      fill_ -= 8;
    }
  }
  void PutWide(uint64_t value, int bits) {  // bits <= 64
    if (bits > 32) {
      Put(value & 0xFFFFFFFFu, 32);
      Put(value >> 32, bits - 32);
    } else {
      Put(value & ((uint64_t{1} << bits) - 1), bits);
    }
  }
  void Flush() {
    if (fill_ > 0) dst_->push_back(static_cast<char>(acc_ & 0xFF));
    acc_ = 0;
    fill_ = 0;
  }
  uint64_t bits() const { return bits_; }

 private:
  std::string* dst_;
  uint64_t acc_ = 0;
  int fill_ = 0;
  uint64_t bits_ = 0;
};

}  // namespace

uint64_t SortHashes(std::vector<uint64_t>* hashes) {
  const size_t n = hashes->size();
  if (n < 32 || n > (size_t{1} << 22)) {
    std::sort(hashes->begin(), hashes->end());
    return 0;
  }
  const int digit_bits = BitWidth(n);
  const int shift = 64 - digit_bits;
  std::vector<uint32_t> counts((size_t{1} << digit_bits) + 1, 0);
  for (uint64_t h : *hashes) ++counts[(h >> shift) + 1];
  for (size_t d = 1; d < counts.size(); ++d) counts[d] += counts[d - 1];
  std::vector<uint64_t> out(n);
  for (uint64_t h : *hashes) out[counts[h >> shift]++] = h;
  // counts[d] is now the end of digit d's hashes (in input order).
  uint64_t moves = 0;
  size_t begin = 0;
  for (size_t d = 0; d + 1 < counts.size(); ++d) {
    const size_t end = counts[d];
    if (end - begin > kInsertionSortMax) {
      std::sort(out.begin() + begin, out.begin() + end);
    } else {
      for (size_t i = begin + 1; i < end; ++i) {
        const uint64_t h = out[i];
        size_t k = i;
        while (k > begin && out[k - 1] > h) {
          out[k] = out[k - 1];
          --k;
        }
        out[k] = h;
        moves += i - k;
      }
    }
    begin = end;
  }
  hashes->swap(out);
  return moves;
}

uint64_t MaxEncodedSize(uint64_t num_keys, double bits_per_key) {
  const double bytes =
      std::ceil(static_cast<double>(num_keys) * ClampBitsPerKey(bits_per_key) / 8.0) + 8;
  return internal::SaturatingBytes(bytes);
}

double PredictedFpr(uint64_t num_keys, double bits_per_key) {
  const V2Choice v2 = ChooseV2(num_keys, bits_per_key);
  if (v2.fingerprint_bits > 0) return std::ldexp(1.0, -v2.fingerprint_bits);
  return PredictedFprV1(num_keys, bits_per_key);
}

double PredictedFprV1(uint64_t num_keys, double bits_per_key) {
  if (num_keys == 0) return 0.0;
  if (num_keys <= kSimulatedKeys) {
    // A budget of a few bytes, mostly trailer: the encoding's size moves in
    // whole bytes with the exact gaps, which the model below does not follow
    // (it answered 1 for one key, where filters measure 2-3%). The mean E/U
    // of the builder's own filters for fixed pseudo-random sets instead:
    // deterministic, a few microseconds.
    constexpr int kSets = 64;
    std::vector<uint64_t> hashes(num_keys);
    std::string bytes;
    double sum = 0;
    for (int set = 0; set < kSets; ++set) {
      uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(set + 1);
      for (uint64_t& h : hashes) h = Mix64(state += 0x9E3779B97F4A7C15ull);
      bytes.clear();
      const BuildInfo info = AppendFilterV1Consuming(&hashes, bits_per_key, &bytes);
      const double range = static_cast<double>(info.params.num_buckets) *
                           static_cast<double>(info.params.bucket_width);
      sum += range > 0 ? static_cast<double>(info.num_entries) / range : 0.0;
      hashes.resize(num_keys);
    }
    return sum / kSets;
  }
  const uint64_t budget = MaxEncodedSize(num_keys, bits_per_key);
  // ceil(n / K) without the overflow of n + K - 1 (n may be a hostile claim).
  const uint64_t buckets = num_keys / kKeysPerBucket + (num_keys % kKeysPerBucket != 0);
  const ModelChoice start = ChooseByModel(num_keys, buckets, budget);
  if (start.range < 1) return 1.0;
  // Refine the builder's closed-form start for what the builder then does
  // exactly: at low bits/key fingerprints collide, so only
  // E = U (1 - (1 - 1/U)^n) distinct entries are coded, and gaps are
  // discrete geometric with p ~ E/U, so E[q] = 1/((1-p)^-(2^r) - 1). Solve
  // E * (r + 1 + E[q]) = data bits for U (bisection in log U) with the
  // start's r, as the builder does.
  const double n = static_cast<double>(num_keys);
  double data_bits = 8.0 * budget;
  for (int round = 0; round < 2; ++round) {  // S's varint depends on S
    const Params guess{
        buckets, std::min(internal::SaturatingBytes(start.range / buckets), UINT64_MAX - 1) + 1,
        internal::SaturatingBytes(data_bits), start.rice_bits};
    data_bits = 8.0 * budget - 8.0 * (EncodedSize(guess) - (guess.stream_bits + 7) / 8);
  }
  const auto stream_bits = [&](double u, int r) {
    const double entries = -u * std::expm1(n * std::log1p(-1.0 / u));
    // A bucket's E_b entries cut W into E_b + 1 spacings of which the last
    // is not coded, so coded gaps have mean U / (E + B).
    const double p = std::min((entries + static_cast<double>(buckets)) / u, 1.0 - 1e-12);
    const double t = -std::ldexp(1.0, r) * std::log1p(-p);
    // Gaps after the first are >= 1 (duplicates are dropped):
    // E[q] = sum_k (1-p)^(k 2^r - 1).
    return entries * (r + 1 + 1.0 / ((1 - p) * std::expm1(t)));
  };
  double best_u = 0;
  {
    const int r = start.rice_bits;  // the builder keeps the start's r
    double lo = 0, hi = std::log(static_cast<double>(kMaxRange));
    if (stream_bits(std::exp(lo) + 1, r) > data_bits) return 1.0;
    for (int iter = 0; iter < 60; ++iter) {
      const double mid = 0.5 * (lo + hi);
      (stream_bits(std::exp(mid), r) <= data_bits ? lo : hi) = mid;
    }
    best_u = std::max(best_u, std::exp(lo));
  }
  if (best_u < 1) best_u = start.range;
  // W is an integer: the builder's range is a multiple of B.
  const double range = std::max(1.0, std::floor(best_u / buckets)) * buckets;
  return -std::expm1(n * std::log1p(-1.0 / range));
}

V2Choice ChooseV2(uint64_t num_keys, double bits_per_key) {
  V2Choice c;
  if (num_keys == 0 || num_keys > kV2MaxKeys) return c;
  const double bytes =
      std::ceil(static_cast<double>(num_keys) * ClampBitsPerKey(bits_per_key) / 8.0);
  const uint64_t total = static_cast<uint64_t>(bytes);
  if (total <= kV2TrailerSize) return c;
  const uint64_t r =
      std::min<uint64_t>(kV2MaxFingerprintBits, 8 * (total - kV2TrailerSize) / num_keys);
  if (r < 1) return c;
  c.fingerprint_bits = static_cast<int>(r);
  c.total_bytes = total;
  return c;
}

namespace {
// Seeds tried before giving up on a fingerprint width (then R - 1, then
// version 1). A dense system (m <= 64 slots, m = n) is solvable for a random
// seed with probability ~0.29 (a random square GF(2) matrix is invertible
// w.p. prod (1 - 2^-i) = 0.289), so 16 seeds fail w.p. 0.4%; a banded one
// with ~10% spare slots succeeds at the first seed almost always
// (measured: 1.00 tries per filter at 164 keys, 10 bits/key).
constexpr int kDenseSeeds = 16;
constexpr int kBandedSeeds = 16;

// Either system has one solution with every free slot 0 (the pivot slots,
// each the lowest slot of some combination of rows, depend only on the
// space the rows span, not on the order of elimination), so any elimination
// writes the same bytes (tests/compact_filter_test.cc checks the builder
// against a plain reference solver). Up to kDenseSlots slots: subset sums
// (AppendNibbleV2) up to 4 slots, simd::SolveTiny
// up to 8 and simd::SolveDense up to 16 (AppendSeedSearchV2: seeds side by
// side in vectors); above,
// AppendSmallV2 (measured at 2-16 keys, 4-20 bits/key, BM_BuildGrid, against
// a vector elimination of every row at every slot, which SolveSmall beats
// from 17 slots: it took 1.3-1.4x the time at 2-8 keys, 1.0x at 16).
constexpr uint64_t kDenseSlots = 16;
static_assert(kDenseSlots <= kDenseBodySlots, "WriteDenseBody covers the dense systems");
// From this many keys (in more than 64 slots) AppendBandingV2, one row at a
// time, replaces the elimination by columns. Below, the rows' walks over the
// band's last 64 slots (no row starts there, so they fill by walks: 13 slots
// visited per row at 160 keys, 5 at 5,000) and the few stripes to walk at
// once make it slower. Measured at 10 bits/key (bench/compact_bench,
// BM_Build, CPU time), one row at a time against by columns: 2.3x the time
// at 100 keys, 1.7x at 300, 1.06x at 1,000; BM_BuildVs at 10,000 keys:
// 0.77x (0.67x at 4 bits/key).
constexpr size_t kBandingKeys = 600;
// Below kBandingKeys, AppendBandingV2 too where the spare slots are many,
// both in all (m - n >= kBandingSpareSlots) and per key (m >= 11/9 n): the
// walks over the band's end are short, and one row at a time beats the
// elimination by columns. Measured through the LevelDB policy (CreateFilter
// over 64 sets of random keys, CPU time per key, medians of alternated
// runs), one row at a time against by columns: at 4 bits/key (1.33 slots
// per key) 1.04-1.07x the time at 180-200 keys (60-66 spare slots),
// 0.74-0.89x at 220-250 (73-83 spare), 0.69x at 400; at 5 bits/key (1.25)
// 1.16-1.23x at 250-280 keys (62-70 spare), 0.69-0.87x at 300-500 (76-126
// spare). Not below 1.22 slots per key: at 6 bits/key (1.2) 0.81-1.12x at
// 280-500 keys, at 7 (1.17) 1.10-1.17x at 360-420, at 8 (1.14) 0.92-1.07x
// at 420-500, at 16 (1.14) 1.17-1.22x at 450-550 (these against the
// elimination by columns before it kept rows in place, which takes
// 0.74-1.0x that time now: one row at a time would lose more).
constexpr uint64_t kBandingSpareSlots = 80;
// AppendBandV2 (simd::SolveBand) solves the systems of more than 64 slots
// (at most simd::kSolverBandSlots) of up to 64 keys; the elimination by
// columns takes 1.16-1.69x its time there (AppendFilter at 50-64 keys in
// 65-80 slots, 2-30 bits/key; CPU time per key over 64 sets of random
// keys, medians of alternated runs). With two words per column (up to 128
// keys) SolveBand took 1.02-1.20x the time of the elimination by columns
// at 70-128 keys, 8-30 bits/key (through the LevelDB policy), with three
// and four 1.15x and 1.3x at 160 and 200 keys.

// Gauss-Jordan elimination over GF(2) for at most kDenseSlots (16) slots,
// a row and its right-hand side in one word: coefficients in bits 0-15, the
// fingerprint (R <= 32 bits) in bits 16-47, so one xor updates both. Rows
// are kept fully reduced (row p has its pivot bit p and no other pivot bit),
// so reducing a new row is a fixed loop of independent masked xors, and with
// every free slot 0 the solution of slot p is the result of row p: no back
// substitution. Both loops run over all kRows rows, free ones 0, without a
// branch per row (the compiler's vectors do several rows at once).
class DenseSystem {
 public:
  static constexpr int kRows = static_cast<int>(kDenseSlots);
  static constexpr int kResultShift = 16;
  static_assert(kRows <= kResultShift, "coefficients below the result");
  void Clear() {
    pivots_ = 0;
    for (int p = 0; p < kRows; ++p) rows_[p] = 0;
  }
  // row: coefficients | fingerprint << kResultShift. False if the system
  // with this row has no solution.
  bool Add(uint64_t row) {
    for (uint64_t t = row & pivots_; t != 0; t &= t - 1) row ^= rows_[__builtin_ctzll(t)];
    const uint64_t c = row & ((uint64_t{1} << kResultShift) - 1);
    if (c == 0) return row == 0;  // dependent: solvable iff the results agree
    const int q = __builtin_ctzll(c);
    for (uint64_t t = pivots_; t != 0; t &= t - 1) {  // clear bit q elsewhere
      uint64_t& other = rows_[__builtin_ctzll(t)];
      other ^= row & (0 - ((other >> q) & 1));
    }
    rows_[q] = row;
    pivots_ |= uint64_t{1} << q;
    return true;
  }
  // The solution of slot p: 0 for a free slot.
  uint32_t Solution(int p) const { return static_cast<uint32_t>(rows_[p] >> kResultShift); }

 private:
  uint64_t pivots_ = 0;
  uint64_t rows_[kRows];
};

// The end of every solved version-2 build: the trailer at the end of the
// filter's total_bytes starting at `filter`, and what the build info reports.
void FinishV2(uint64_t total_bytes, int r, uint8_t seed, uint64_t m, uint8_t* filter,
              BuildInfo* info) {
  WriteV2Trailer(total_bytes, r, seed, filter + total_bytes - kV2TrailerSize);
  info->version = 2;
  info->num_entries = m;
  info->fingerprint_bits = r;
  info->seed = seed;
}

// The end of a solved banded build: appends the body (simd::SolveColumns of
// the echelon form in coef / result) and FinishV2.
void WriteSolution(const uint64_t* coef, const uint32_t* result, uint64_t m, int r,
                   uint64_t total_bytes, uint8_t seed, std::string* dst, BuildInfo* info) {
  const size_t at = dst->size();
  const size_t bytes = static_cast<size_t>(total_bytes);
  dst->resize(at + bytes, '\0');
  uint8_t* out = reinterpret_cast<uint8_t*>(&(*dst)[at]);
  simd::SolveColumns(coef, result, m, r, out);
  FinishV2(total_bytes, r, seed, m, out, info);
}

}  // namespace

// Column b is gathered 8 slots per multiply: with byte k of slots 0..7 in
// the bytes of lo[k], ((lo[k] >> (b % 8)) & 0x0101..01) * 0x0102040810204080
// >> 56 has bit p = bit b of slot p (the 8 products land on distinct bits,
// no carries). About 10 operations per column.
void WriteDenseBodyByColumns(const uint32_t* value, uint64_t m, int r, uint8_t* out) {
  assert(m >= 1 && m <= kDenseBodySlots && r >= 1 && r <= kV2MaxFingerprintBits);
  uint64_t lo[4] = {0, 0, 0, 0};
  uint64_t hi[4] = {0, 0, 0, 0};
  for (uint64_t p = 0; p < m; ++p) {
    uint64_t* half = p < 8 ? lo : hi;
    const int shift = static_cast<int>(8 * (p & 7));
    const uint64_t v = value[p];
    for (int k = 0; k < 4; ++k) half[k] |= ((v >> (8 * k)) & 0xFF) << shift;
  }
  constexpr uint64_t kLowBits = 0x0101010101010101ull;
  constexpr uint64_t kGather = 0x0102040810204080ull;
  const int width = static_cast<int>(m);
  uint64_t acc = 0;  // bits not yet written, the first at bit 0
  int fill = 0;      // < 64
  for (int b = 0; b < r; ++b) {
    const int k = b >> 3, s = b & 7;
    uint64_t column = (((lo[k] >> s) & kLowBits) * kGather) >> 56;
    if (width > 8) column |= ((((hi[k] >> s) & kLowBits) * kGather) >> 56) << 8;
    acc |= column << fill;
    fill += width;
    if (fill >= 64) {
      internal::EncodeFixed64(reinterpret_cast<char*>(out), acc);
      out += 8;
      fill -= 64;
      acc = column >> (width - fill);  // column < 2^width: 0 when fill is 0
    }
  }
  for (; fill > 0; fill -= 8, acc >>= 8) *out++ = static_cast<uint8_t>(acc);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
namespace {

// kComb[m][w]: word w of the bit string with bits at the multiples of m.
struct CombTable {
  uint64_t words[kDenseBodySlots + 1][8];
};
constexpr CombTable MakeCombTable() {
  CombTable t{};
  for (uint64_t m = 1; m <= kDenseBodySlots; ++m) {
    for (uint64_t bit = 0; bit < 512; bit += m) t.words[m][bit / 64] |= uint64_t{1} << (bit % 64);
  }
  return t;
}
constexpr CombTable kComb = MakeCombTable();

}  // namespace

// Slot p's bits deposited (pdep) into each word's positions b * m + p:
// m * ceil(r * m / 64) deposits.
__attribute__((target("bmi2,popcnt"))) void WriteDenseBodyBySlots(const uint32_t* value, uint64_t m,
                                                                  int r, uint8_t* out) {
  assert(m >= 1 && m <= kDenseBodySlots && r >= 1 && r <= kV2MaxFingerprintBits);
  const uint64_t bits = static_cast<uint64_t>(r) * m;
  const uint64_t* comb = kComb.words[m];
  if (bits <= 64) {  // one word: every filter of 1-8 keys in 8 bytes (up to 8 bits/key)
    uint64_t word = 0;
    for (uint64_t p = 0; p < m; ++p) word |= _pdep_u64(value[p], comb[0] << p);
    if (bits == 64) {
      internal::EncodeFixed64(reinterpret_cast<char*>(out), word);
      return;
    }
    for (uint64_t byte = 0; 8 * byte < bits; ++byte)
      out[byte] = static_cast<uint8_t>(word >> (8 * byte));
    return;
  }
  const size_t num_words = static_cast<size_t>((bits + 63) / 64);
  uint64_t words[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (uint64_t p = 0; p < m; ++p) {
    uint64_t v = value[p];  // < 2^r: deposits past bit r * m are 0
    uint64_t carry = 0;     // comb bits shifted out of the previous word
    for (size_t w = 0; w < num_words; ++w) {
      const uint64_t mask = comb[w] << p | carry;
      carry = (comb[w] >> 1) >> (63 - p);
      words[w] |= _pdep_u64(v, mask);
      const int used = __builtin_popcountll(mask);  // >= 4 (m <= 16)
      v = (v >> (used - 1)) >> 1;
    }
  }
  const size_t bytes = static_cast<size_t>((bits + 7) / 8);
  if (internal::kLittleEndianHost) {
    // One copy: GCC made the loop below a rep movsq, whose start-up was a
    // third of a 4-key build at 30 bits/key (perf annotate).
    std::memcpy(out, words, bytes);
    return;
  }
  size_t w = 0;
  for (; 8 * w + 8 <= bytes; ++w)
    internal::EncodeFixed64(reinterpret_cast<char*>(out + 8 * w), words[w]);
  for (size_t byte = 8 * w; byte < bytes; ++byte) {
    out[byte] = static_cast<uint8_t>(words[w] >> (8 * (byte % 8)));
  }
}

namespace {
// Whether PDEP is a fast instruction here: AMD before Zen 3 (family 0x19)
// and Hygon run it in microcode, at tens to hundreds of cycles depending
// on the mask's bits (AMD's Software Optimization Guides for family 17h
// and 19h), which would make the by-slots body far slower than the
// by-columns one.
bool FastPdep() {
  const simd::internal::CpuIdentity cpu = simd::internal::ThisCpu();
  switch (cpu.vendor) {
    case simd::internal::CpuVendor::kHygon:
      return false;
    case simd::internal::CpuVendor::kAmd:
      return cpu.family >= 0x19;
    case simd::internal::CpuVendor::kOther:
      return true;
  }
  return true;
}
}  // namespace

bool HasDenseBodyBySlots() {
  static const bool has = [] {
    __builtin_cpu_init();  // in case the first filter is built by a static constructor
    return __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt") && FastPdep();
  }();
  return has;
}
#else
void WriteDenseBodyBySlots(const uint32_t* value, uint64_t m, int r, uint8_t* out) {
  WriteDenseBodyByColumns(value, m, r, out);
}
bool HasDenseBodyBySlots() { return false; }
#endif

void WriteDenseBody(const uint32_t* value, uint64_t m, int r, uint8_t* out) {
  const uint64_t deposits = m * ((static_cast<uint64_t>(r) * m + 63) / 64);
  if (deposits <= static_cast<uint64_t>(r) && HasDenseBodyBySlots()) {
    WriteDenseBodyBySlots(value, m, r, out);
  } else {
    WriteDenseBodyByColumns(value, m, r, out);
  }
}

namespace {

// Bytes of a dense filter: m = floor(8 * body / R) <= 16 slots means a body
// under 17 * R / 8 <= 68 bytes, plus the trailer.
constexpr size_t kDenseFilterBytes = 17 * kV2MaxFingerprintBits / 8 + kV2TrailerSize;

// Appends the filter of a solved dense system: slot p's solution is
// value[p]. The filter, at most kDenseFilterBytes, is built on the stack and
// appended at once: std::string::resize (zero fill, then written over) was a
// tenth of a 2-key build (perf record, compact_bench BM_BuildVs).
void AppendDense(const uint32_t* value, uint64_t m, int r, uint64_t total_bytes, uint8_t seed,
                 std::string* dst, BuildInfo* info) {
  const size_t bytes = static_cast<size_t>(total_bytes);
  uint8_t filter[kDenseFilterBytes] = {};
  uint8_t* out = filter;
  std::string::size_type at = 0;
  if (bytes > sizeof(filter)) {  // not with m <= 16; kept for any caller
    at = dst->size();
    dst->resize(at + bytes, '\0');
    out = reinterpret_cast<uint8_t*>(&(*dst)[at]);
  }
  WriteDenseBody(value, m, r, out);
  FinishV2(total_bytes, r, seed, m, out, info);
  if (out == filter) dst->append(reinterpret_cast<const char*>(filter), bytes);
}

// AppendFilterV2 for m <= kDenseSlots slots (DenseSystem), where
// simd::SolveDense does not run.
bool AppendDenseV2(absl::Span<const uint64_t> hashes, int r, uint64_t total_bytes, uint64_t m,
                   std::string* dst, BuildInfo* info) {
  uint64_t x[kDenseSlots];            // m >= n
  uint64_t fingerprint[kDenseSlots];  // shifted into place
  const size_t n = hashes.size();
  for (size_t i = 0; i < n; ++i) {
    const V2KeyBase k = V2KeyBaseFor(hashes[i], m, r);
    x[i] = k.x;
    fingerprint[i] = uint64_t{k.fingerprint} << DenseSystem::kResultShift;
  }
  DenseSystem system;
  for (int s = 0; s < kDenseSeeds; ++s) {
    const uint8_t seed = static_cast<uint8_t>(s);
    system.Clear();
    bool ok = true;
    for (size_t i = 0; i < n && ok; ++i) {
      ok = system.Add(V2Coefficients(x[i], seed, m) | fingerprint[i]);
    }
    if (!ok) continue;
    uint32_t value[kDenseSlots];
    for (uint64_t j = 0; j < m; ++j) value[j] = system.Solution(static_cast<int>(j));
    AppendDense(value, m, r, total_bytes, seed, dst, info);
    return true;
  }
  return false;
}

// The seed-independent part of each key of a system of at most 64 slots,
// where every key starts at slot 0 (V2KeyBaseFor): its coefficient material
// x[i] and its fingerprint[i].
inline void SplitKeys(absl::Span<const uint64_t> hashes, uint64_t m, int r, uint64_t* x,
                      uint32_t* fingerprint) {
  for (size_t i = 0; i < hashes.size(); ++i) {
    const V2KeyBase k = V2KeyBaseFor(hashes[i], m, r);
    x[i] = k.x;
    fingerprint[i] = k.fingerprint;
  }
}

// AppendFilterV2 for at most kNibbleSlots slots (n <= m <= 4: the filters of
// 3-4 keys in LevelDB's 64-bit floor), by subset sums instead of an
// elimination. A subset l of the rows (bit i: row i) has its coefficient sum
// in nibble l of one word: the 16 sums of a seed are c_0 P_0 ^ c_1 P_1 ^
// c_2 P_2 ^ c_3 P_3, P_i with a 1 in every nibble whose subset holds row i
// (c_i < 16, so no product carries). Then, from that word alone:
//   * solvable iff every subset whose coefficients cancel (a zero nibble)
//     has fingerprints that cancel too (only dependent rows: a 4 x 4 system
//     is singular for 2 seeds in 3, and duplicate keys cancel in full);
//   * the pivot slots are the lowest bits of the row space's vectors (see
//     "Either system has one solution" above): slot j is one iff some nibble
//     has bit j as its lowest;
//   * pivot slot j's solution is the fingerprint sum of a subset whose
//     coefficients, on the pivot slots, are slot j alone (that vector is the
//     reduced form's row j); free slots are 0.
// The fingerprint sums do not depend on the seed: all 16 are formed once.
// Against DenseSystem (Gauss-Jordan, one word per row, what these systems
// used before), AppendFilterV2 alone over 1,024 random sets in turn, on an
// Intel Xeon (AVX-512): 4 keys in 4 slots 94 -> 59 ns, 3 keys in 3 slots
// 69 -> 54, 3 keys in 4 slots 49 -> 46;
// through the LevelDB policy (compact_bench BM_BuildVs, 4 keys, medians of
// 3 alternated runs) 37.6 -> 21.0 ns per key at 4 bits/key, 31.5 -> 20.9 at
// 10.
constexpr uint64_t kNibbleSlots = 4;
bool AppendNibbleV2(absl::Span<const uint64_t> hashes, int r, uint64_t total_bytes, uint64_t m,
                    std::string* dst, BuildInfo* info) {
  constexpr uint64_t kNibbles = 0x1111111111111111ull;  // bit 0 of every nibble
  // P_i: nibble l is 1 iff bit i of l is set.
  constexpr uint64_t kRowInSubset[4] = {0x1010101010101010ull, 0x1100110011001100ull,
                                        0x1111000011110000ull, 0x1111111100000000ull};
  // Bit 0 of each nibble of `word`: 1 iff the nibble is 0.
  const auto zero_nibbles = [](uint64_t word) {
    return ~(word | word >> 1 | word >> 2 | word >> 3) & kNibbles;
  };
  const size_t n = hashes.size();
  assert(n <= m && m <= kNibbleSlots);
  uint64_t x[kNibbleSlots] = {0, 0, 0, 0};
  uint32_t f[kNibbleSlots] = {0, 0, 0, 0};  // keys past n: 0
  SplitKeys(hashes, m, r, x, f);
  // fingerprint[l]: the fingerprint sum of subset l (keys past n have 0),
  // each from registers (entries built from earlier stored entries would be
  // loaded back before their stores complete).
  const uint32_t f01 = f[0] ^ f[1], f23 = f[2] ^ f[3];
  const uint32_t fingerprint[16] = {
      0,    f[0],        f[1],        f01,        f[2], f[2] ^ f[0], f[2] ^ f[1], f[2] ^ f01,
      f[3], f[3] ^ f[0], f[3] ^ f[1], f[3] ^ f01, f23,  f23 ^ f[0],  f23 ^ f[1],  f23 ^ f01};
  // Nibbles of the subsets of the n keys (l < 2^n); the others repeat them.
  const uint64_t subsets = n >= kNibbleSlots ? ~uint64_t{0} : (uint64_t{1} << (4 << n)) - 1;
  for (int s = 0; s < kDenseSeeds; ++s) {
    const uint8_t seed = static_cast<uint8_t>(s);
    uint64_t sums = 0;
    for (size_t i = 0; i < n; ++i) sums ^= V2Coefficients(x[i], seed, m) * kRowInSubset[i];
    bool solvable = true;
    for (uint64_t t = zero_nibbles(sums) & subsets & ~uint64_t{1}; t != 0; t &= t - 1) {
      solvable &= fingerprint[__builtin_ctzll(t) / 4] == 0;
    }
    if (!solvable) continue;
    // Bit j of a nibble is its lowest iff bits 0..j-1 are clear.
    const uint64_t b0 = sums, b1 = sums >> 1, b2 = sums >> 2, b3 = sums >> 3;
    const uint64_t pivots = uint64_t{(b0 & kNibbles) != 0} |
                            uint64_t{(b1 & ~b0 & kNibbles) != 0} << 1 |
                            uint64_t{(b2 & ~b1 & ~b0 & kNibbles) != 0} << 2 |
                            uint64_t{(b3 & ~b2 & ~b1 & ~b0 & kNibbles) != 0} << 3;
    const uint64_t on_pivots = sums & (pivots * kNibbles);
    uint32_t value[kNibbleSlots] = {0, 0, 0, 0};
    for (uint64_t left = pivots; left != 0; left &= left - 1) {
      const int j = __builtin_ctzll(left);
      const uint64_t hits = zero_nibbles(on_pivots ^ ((uint64_t{1} << j) * kNibbles)) & subsets;
      assert(hits != 0);  // the reduced form's row j
      value[j] = fingerprint[__builtin_ctzll(hits) / 4];
    }
    AppendDense(value, m, r, total_bytes, seed, dst, info);
    return true;
  }
  return false;
}

// From kTinyMinSlots simd::SolveTiny; below, AppendNibbleV2's subset sums
// (whose nibbles hold at most 4 slots). The whole append with the subset
// sums took 60 ns at 4 keys in 4 slots and 62 at 3 in 3, SolveTiny's solve
// alone 82 and 59 ns (AppendFilterV2 and simd::SolveTiny over 1,024 random
// sets in turn, Intel Xeon, AVX3); with DenseSystem (Gauss-Jordan, a seed at
// a time), what these systems had before, the append took 94 and 69 ns.
constexpr uint64_t kTinyMinSlots = 5;
static_assert(kNibbleSlots + 1 == kTinyMinSlots, "every dense system has its solver");
static_assert(simd::kSolverSeedStep == kV2SeedStep &&
                  simd::kSolverCoefMultiplier == kV2CoefficientMultiplier,
              "SolveTiny and SolveDense compute V2Coefficients");
static_assert(kDenseSeeds <= simd::kSolverTinySeeds, "the kernels try every seed");
static_assert(kDenseSlots <= simd::kSolverDenseSlots, "SolveDense takes every dense system");

// AppendFilterV2 for kTinyMinSlots <= m <= kDenseSlots slots: simd::SolveTiny
// (up to 8 slots) or simd::SolveDense, seeds side by side in vectors, each
// the first solvable seed and its solution; DenseSystem where SolveDense
// does not run (targets with vectors of fewer than sixteen 16-bit lanes).
bool AppendSeedSearchV2(absl::Span<const uint64_t> hashes, int r, uint64_t total_bytes, uint64_t m,
                        std::string* dst, BuildInfo* info) {
  uint64_t x[kDenseSlots];  // the kernels read the first n
  uint32_t fingerprint[kDenseSlots];
  const size_t n = hashes.size();
  SplitKeys(hashes, m, r, x, fingerprint);
  uint32_t value[kDenseSlots];
  const int seed = m <= simd::kSolverTinySlots
                       ? simd::SolveTiny(x, fingerprint, n, m, kDenseSeeds, value)
                       : simd::SolveDense(x, fingerprint, n, m, kDenseSeeds, value);
  if (seed == -2) return AppendDenseV2(hashes, r, total_bytes, m, dst, info);
  if (seed < 0) return false;
  AppendDense(value, m, r, total_bytes, static_cast<uint8_t>(seed), dst, info);
  return true;
}

// AppendFilterV2 for a system of kDenseSlots to 64 slots (every row starts
// at slot 0, n <= m <= simd::kSolverSmallRows): simd::SolveSmall,
// Gauss-Jordan elimination on the transposed system, which writes the body
// itself. Measured against a vector elimination of every row at every slot
// followed by SolveColumns, at 64 keys
// (compact_bench --benchmark_filter='BM_BuildVs/bpk:(4|10|30)/n:64/', medians
// of 3, CPU time per key): 0.55x at 4 bits/key, 0.60x at 10, 0.68x at 30.
bool AppendSmallV2(absl::Span<const uint64_t> hashes, int r, uint64_t total_bytes, uint64_t m,
                   std::string* dst, BuildInfo* info) {
  constexpr size_t kSmallKeys = simd::kSolverSmallRows;
  uint64_t x[kSmallKeys], row_coef[kSmallKeys];
  uint32_t fingerprint[kSmallKeys];
  const size_t n = hashes.size();
  SplitKeys(hashes, m, r, x, fingerprint);
  uint64_t planes[32];  // the right-hand sides' bit planes, the same for every seed
  simd::ResultPlanes(fingerprint, n, planes);
  uint8_t body[32 * kV2WindowBits / 8];  // r * m bits
  for (int s = 0; s < kDenseSeeds; ++s) {
    const uint8_t seed = static_cast<uint8_t>(s);
    for (size_t i = 0; i < n; ++i) row_coef[i] = V2Coefficients(x[i], seed, m);
    if (!simd::SolveSmall(row_coef, planes, n, m, r, body)) continue;
    const size_t at = dst->size();
    const size_t bytes = static_cast<size_t>(total_bytes);
    dst->resize(at + bytes, '\0');
    uint8_t* out = reinterpret_cast<uint8_t*>(&(*dst)[at]);
    std::memcpy(out, body, (static_cast<uint64_t>(r) * m + 7) / 8);
    FinishV2(total_bytes, r, seed, m, out, info);
    return true;
  }
  return false;
}

// The seed-independent part of every key (V2KeyBaseFor) in start order, by
// a counting sort over the m slots: emit(at, key) for each key, `at` its
// place. cursor: m counters (scratch; Count holds n). first, unless null:
// m + 1 entries, first[j] = keys starting before slot j. The prefix sum is
// kept in a register, not reloaded from the entry just stored.
template <typename Count, typename Emit>
inline void KeysInStartOrder(absl::Span<const uint64_t> hashes, uint64_t m, int r, V2KeyBase* keys,
                             Count* cursor, uint32_t* first, Emit&& emit) {
  const size_t n = hashes.size();
  std::fill(cursor, cursor + m, Count{0});
  for (size_t i = 0; i < n; ++i) {
    keys[i] = V2KeyBaseFor(hashes[i], m, r);
    ++cursor[keys[i].start];
  }
  Count sum = 0;
  for (uint64_t j = 0; j < m; ++j) {
    const Count count = cursor[j];
    cursor[j] = sum;
    if (first != nullptr) first[j] = sum;
    sum = static_cast<Count>(sum + count);
  }
  if (first != nullptr) first[m] = sum;
  for (size_t i = 0; i < n; ++i) emit(cursor[keys[i].start]++, keys[i]);
}

// AppendFilterV2 for a banded system (m > 64 slots) of at most
// simd::kSolverBandRows (64) keys in at most simd::kSolverBandSlots slots:
// simd::SolveBand, Gauss-Jordan elimination on the transposed system, which
// writes the body itself.
bool AppendBandV2(absl::Span<const uint64_t> hashes, int r, uint64_t total_bytes, uint64_t m,
                  int seeds, std::string* dst, BuildInfo* info) {
  constexpr size_t kRows = simd::kSolverBandRows;
  constexpr size_t kSlots = simd::kSolverBandSlots;
  const size_t n = hashes.size();
  V2KeyBase keys[kRows];
  uint64_t x[kRows], row_coef[kRows];
  uint32_t start[kRows], fingerprint[kRows];
  uint16_t cursor[kSlots];
  KeysInStartOrder(hashes, m, r, keys, cursor, nullptr, [&](uint32_t at, const V2KeyBase& k) {
    x[at] = k.x;
    start[at] = static_cast<uint32_t>(k.start);
    fingerprint[at] = k.fingerprint;
  });
  uint64_t planes[32];  // the same for every seed
  simd::ResultPlanes(fingerprint, n, planes);
  const size_t at = dst->size();
  const size_t bytes = static_cast<size_t>(total_bytes);
  dst->resize(at + bytes, '\0');
  uint8_t* out = reinterpret_cast<uint8_t*>(&(*dst)[at]);
  for (int s = 0; s < seeds; ++s) {
    const uint8_t seed = static_cast<uint8_t>(s);
    for (size_t i = 0; i < n; ++i) row_coef[i] = V2Coefficients(x[i], seed, m);
    if (!simd::SolveBand(row_coef, start, planes, n, m, r, out)) continue;  // out untouched
    FinishV2(total_bytes, r, seed, m, out, info);
    return true;
  }
  dst->resize(at);
  return false;
}

// AppendFilterV2 for a banded system (m > 64) of at least kBandingKeys
// keys, or with many spare slots (kBandingSpareSlots): BandingAddLanes
// (compact/banding.h). A row starting in stripe t (slots [64t, 64t + 64))
// touches slots of stripes t and t + 1 only, so the rows of stripes t and
// t + 2 never meet: the even stripes are added first, kBandingLanes runs of
// them at once, then the odd ones.
bool AppendBandingV2(absl::Span<const uint64_t> hashes, int r, uint64_t total_bytes, uint64_t m,
                     int seeds, std::string* dst, BuildInfo* info) {
  const size_t n = hashes.size();
  const size_t stripes = static_cast<size_t>((m - kV2WindowBits) / 64 + 1);
  const size_t even = (stripes + 1) / 2;
  // Stripe t's place: the even ones in order, then the odd ones.
  const auto place = [even](uint64_t start) {
    const size_t t = static_cast<size_t>(start >> 6);
    return (t & 1) != 0 ? even + (t >> 1) : t >> 1;
  };
  // Scratch kept by the thread up to kKeptBytes: a fresh block each time
  // came from a new mapping (malloc's threshold), and its page faults made a
  // 5,000-key build 1.5x slower.
  constexpr size_t kKeptBytes = size_t{2} << 20;
  struct Scratch {
    std::vector<V2KeyBase> keys;
    std::vector<uint64_t> x, coef;
    std::vector<uint32_t> start, f, result, first;
  };
  thread_local Scratch kept;
  Scratch once;
  const size_t bytes = n * (sizeof(V2KeyBase) + 8 + 4 + 4) + m * (8 + 4) + (stripes + 1) * 4;
  Scratch& scratch = bytes <= kKeptBytes ? kept : once;
  const auto grow = [](auto* v, size_t size) {
    if (v->size() < size) v->resize(size);
    return v->data();
  };
  V2KeyBase* const keys = grow(&scratch.keys, n);
  uint64_t* const x = grow(&scratch.x, n);
  uint32_t* const start = grow(&scratch.start, n);
  uint32_t* const f = grow(&scratch.f, n);
  uint64_t* const coef = grow(&scratch.coef, m);
  uint32_t* const result = grow(&scratch.result, m);
  uint32_t* const first = grow(&scratch.first, stripes + 1);  // by place
  // The seed-independent part of every key, once, grouped by place (a
  // counting sort).
  std::fill(first, first + stripes + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    keys[i] = V2KeyBaseFor(hashes[i], m, r);
    ++first[place(keys[i].start) + 1];
  }
  for (size_t t = 0; t < stripes; ++t) first[t + 1] += first[t];
  for (size_t i = 0; i < n; ++i) {
    const V2KeyBase& k = keys[i];
    const uint32_t at = first[place(k.start)]++;
    x[at] = k.x;
    start[at] = static_cast<uint32_t>(k.start);
    f[at] = k.fingerprint;
  }
  for (size_t t = stripes; t > 0; --t) first[t] = first[t - 1];  // back to the starts
  first[0] = 0;
  // Each half (even, odd) cut into kBandingLanes runs of whole stripes.
  BandingLane lanes[2][kBandingLanes];
  for (int half = 0; half < 2; ++half) {
    const size_t lo = half == 0 ? 0 : even, count = (half == 0 ? even : stripes) - lo;
    for (int l = 0; l < kBandingLanes; ++l) {
      lanes[half][l].next = first[lo + count * l / kBandingLanes];
      lanes[half][l].end = first[lo + count * (l + 1) / kBandingLanes];
    }
  }
  for (int s = 0; s < seeds; ++s) {
    const uint8_t seed = static_cast<uint8_t>(s);
    std::memset(coef, 0, m * sizeof(uint64_t));
    std::memset(result, 0, m * sizeof(uint32_t));
    if (!BandingAddLanes(lanes[0], x, start, f, seed, m, coef, result) ||
        !BandingAddLanes(lanes[1], x, start, f, seed, m, coef, result)) {
      continue;
    }
    WriteSolution(coef, result, m, r, total_bytes, seed, dst, info);
    return true;
  }
  return false;
}

}  // namespace

bool AppendFilterV2(absl::Span<const uint64_t> hashes, int r, uint64_t total_bytes,
                    std::string* dst, BuildInfo* info, int max_seeds) {
  const uint64_t body = total_bytes - kV2TrailerSize;
  const uint64_t m = V2Slots(body, r);
  assert(r >= 1 && r <= kV2MaxFingerprintBits && m >= hashes.size());
  static_assert(simd::kSolverSmallRows >= kV2WindowBits, "n <= m <= 64 rows");
  if (m > kDenseSlots && m <= kV2WindowBits) {
    return AppendSmallV2(hashes, r, total_bytes, m, dst, info);
  }
  if (m <= kDenseSlots) {
    if (m <= kNibbleSlots) return AppendNibbleV2(hashes, r, total_bytes, m, dst, info);
    return AppendSeedSearchV2(hashes, r, total_bytes, m, dst, info);
  }
  static_assert(kDenseSeeds <= kV2Seeds && kBandedSeeds <= kV2Seeds, "4-bit seed");
  const size_t n = hashes.size();
  if (m > kV2WindowBits && m <= simd::kSolverBandSlots && n <= simd::kSolverBandRows) {
    return AppendBandV2(hashes, r, total_bytes, m, std::min(max_seeds, kBandedSeeds), dst, info);
  }
  if (m > kV2WindowBits &&
      (n >= kBandingKeys || (9 * m >= 11 * n && m - n >= kBandingSpareSlots))) {
    return AppendBandingV2(hashes, r, total_bytes, m, std::min(max_seeds, kBandedSeeds), dst, info);
  }
  // The seed-independent part of every key, once, in start order (a
  // counting sort); first[j] = keys starting before slot j. Scratch on the
  // stack up to kSmall keys and slots (about 22 KiB), else on the heap.
  constexpr size_t kSmall = 256;
  constexpr size_t kPad = simd::kSolverRowPad;  // rows read or written past n
  const bool small = n <= kSmall && m <= kSmall;
  const size_t stride = small ? kSmall + kPad : n + kPad;  // of each row array
  const size_t slots = small ? kSmall + 2 : m + 2;         // of each slot array
  V2KeyBase small_keys[kSmall];
  uint32_t small_words32[3 * (kSmall + 2)];
  alignas(64) uint64_t small_words64[5 * (kSmall + kPad) + kSmall + 2];
  // Larger builds use heap scratch, kept by the thread up to kKeptBytes: a
  // fresh block each time came from a new mapping (malloc's threshold), and
  // its page faults made a 5,000-key build 1.5x slower than before.
  constexpr size_t kKeptBytes = size_t{2} << 20;
  struct HeapScratch {
    std::vector<V2KeyBase> keys;
    std::vector<uint32_t> words32;
    std::vector<uint64_t> words64;
  };
  thread_local HeapScratch kept;
  HeapScratch once;
  const size_t heap_bytes =
      small ? 0 : n * sizeof(V2KeyBase) + 3 * slots * 4 + (5 * stride + slots) * 8;
  HeapScratch& heap = heap_bytes <= kKeptBytes ? kept : once;
  if (!small) {
    heap.keys.resize(n);
    heap.words32.resize(3 * slots);
    heap.words64.resize(5 * stride + slots);
  }
  V2KeyBase* keys = small ? small_keys : heap.keys.data();  // in hash order
  uint32_t* const words32 = small ? small_words32 : heap.words32.data();
  uint64_t* const words64 = small ? small_words64 : heap.words64.data();
  uint32_t* const first = words32;
  uint32_t* const cursor = words32 + slots;
  uint32_t* const result = words32 + 2 * slots;
  uint64_t* const sorted_x = words64;  // coefficient material in start order
  uint64_t* const join_coef = words64 + stride;
  uint64_t* const join_result = words64 + 2 * stride;
  uint64_t* const coef = words64 + 5 * stride;
  const simd::SolverRows rows{first, join_coef, join_result, words64 + 3 * stride,
                              words64 + 4 * stride};
  KeysInStartOrder(hashes, m, r, keys, cursor, first, [&](uint32_t at, const V2KeyBase& k) {
    sorted_x[at] = k.x;
    join_result[at] = k.fingerprint;
  });
  std::fill(rows.coef, rows.coef + n + kPad, 0);  // lanes past the rows: defined
  std::fill(rows.result, rows.result + n + kPad, 0);
  const int seeds = std::min(max_seeds, m <= kV2WindowBits ? kDenseSeeds : kBandedSeeds);
  for (int s = 0; s < seeds; ++s) {
    const uint8_t seed = static_cast<uint8_t>(s);
    for (size_t i = 0; i < n; ++i) join_coef[i] = V2Coefficients(sorted_x[i], seed, m);
    if (!simd::EliminateByColumns(m, coef, result, rows)) continue;
    WriteSolution(coef, result, m, r, total_bytes, seed, dst, info);
    return true;
  }
  return false;
}

BuildInfo AppendFilter(absl::Span<const uint64_t> input, double bits_per_key, std::string* dst) {
  const V2Choice v2 = ChooseV2(input.size(), bits_per_key);
  BuildInfo info;
  for (int r = v2.fingerprint_bits; r >= 1 && r + 1 >= v2.fingerprint_bits; --r) {
    if (AppendFilterV2(input, r, v2.total_bytes, dst, &info)) return info;
  }
  return AppendFilterV1(input, bits_per_key, dst);
}

BuildInfo AppendFilterConsuming(std::vector<uint64_t>* hashes, double bits_per_key,
                                std::string* dst) {
  const V2Choice v2 = ChooseV2(hashes->size(), bits_per_key);
  BuildInfo info;
  for (int r = v2.fingerprint_bits; r >= 1 && r + 1 >= v2.fingerprint_bits; --r) {
    if (AppendFilterV2(*hashes, r, v2.total_bytes, dst, &info)) return info;
  }
  return AppendFilterV1Consuming(hashes, bits_per_key, dst);
}

BuildInfo AppendFilterV1(absl::Span<const uint64_t> input, double bits_per_key, std::string* dst) {
  std::vector<uint64_t> hashes(input.begin(), input.end());
  return AppendFilterV1Consuming(&hashes, bits_per_key, dst);
}

BuildInfo AppendFilterV1Consuming(std::vector<uint64_t>* hashes_in, double bits_per_key,
                                  std::string* dst) {
  std::vector<uint64_t>& hashes = *hashes_in;
  const uint64_t budget = MaxEncodedSize(hashes.size(), bits_per_key);
  SortHashes(&hashes);
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  const uint64_t n = hashes.size();

  BuildInfo info;
  if (n == 0) {
    AppendIndexAndTrailer(info.params, nullptr, dst);
    return info;
  }
  const uint64_t num_buckets = (n + kKeysPerBucket - 1) / kKeysPerBucket;
  std::vector<uint64_t> bucket_of(num_buckets > 1 ? n : 0);  // empty: all in 0
  for (size_t i = 0; i < bucket_of.size(); ++i) {
    bucket_of[i] = FastRange64(hashes[i], num_buckets);
  }
  const uint64_t* buckets = bucket_of.empty() ? nullptr : bucket_of.data();

  struct Size {
    uint64_t bytes;
    uint64_t spare_bits;  // padding in the stream's last byte
  };
  const auto size_for = [&](uint64_t width, int r) {
    const Params p{num_buckets, width, StreamBits(hashes, buckets, num_buckets, width, r, nullptr),
                   r};
    return Size{EncodedSize(p), (8 - p.stream_bits % 8) % 8};
  };
  const uint64_t max_width = kMaxRange / num_buckets;
  // Search for the largest W whose exact size fits: fits <= answer < fails.
  // The bits needed grow about linearly in W (each bucket's unary total grows
  // by 1 per 2^r of W), so: secant steps on (W, bits needed) starting from
  // the model's slope, then bisection once both ends are known, until the
  // bracket is within 1/128 of W (FPR left on the table < 0.8% of itself,
  // 0.002 percentage points at 10 bits/key).
  const ModelChoice model = ChooseByModel(n, num_buckets, budget);
  int r = model.rice_bits;
  uint64_t fits = 0, fails = max_width + 1;
  uint64_t width = std::clamp<uint64_t>(
      internal::SaturatingBytes(model.range / static_cast<double>(num_buckets)), 1, max_width);
  const double target_bits = 8.0 * static_cast<double>(budget);
  double slope = std::ldexp(1.0, r) / static_cast<double>(num_buckets);  // W per bit
  double last_w = -1, last_bits = 0, outward = 0.005;
  for (int iter = 0; iter < 24 && fails - fits > 1 && (fails - fits) > fits / 128; ++iter) {
    const Size size = size_for(width, r);
    const double bits = 8.0 * static_cast<double>(size.bytes) - size.spare_bits;
    (size.bytes <= budget ? fits : fails) = width;
    if (last_w >= 0 && bits != last_bits) {
      const double secant = (static_cast<double>(width) - last_w) / (bits - last_bits);
      if (secant > 0) slope = secant;
    }
    last_w = static_cast<double>(width);
    last_bits = bits;
    double proposal = static_cast<double>(width) + (target_bits - bits) * slope;
    // Until both ends are known, step outwards by at least 0.5%, doubling
    // each time (the bits needed are a noisy step function of W).
    if (fails > max_width) {
      proposal = std::max(proposal, (1 + outward) * static_cast<double>(fits) + 1);
      outward *= 2;
    } else if (fits == 0) {
      proposal = std::min(proposal, (1 - std::min(outward, 0.5)) * static_cast<double>(fails));
      outward *= 2;
    }
    uint64_t next;
    const bool bracketed = fits != 0 && fails <= max_width;
    if ((!bracketed || iter < 3) && proposal > static_cast<double>(fits) &&
        proposal < static_cast<double>(fails)) {
      next = static_cast<uint64_t>(proposal);
    } else {
      next = fits + (fails - fits) / 2;
    }
    if (next <= fits || next >= fails || next == 0) break;
    width = next;
  }
  if (fits == 0) {
    // The model overshot badly (tiny budgets): walk down to the smallest
    // encoding, W = 1 with r = 0, which always fits (docs/FORMAT.md).
    for (r = std::min(r, kMaxRiceBits); fits == 0; --r) {
      for (width = std::min<uint64_t>(max_width, 64); width >= 1; width /= 2) {
        if (size_for(width, r).bytes <= budget) {
          fits = width;
          break;
        }
      }
      if (fits != 0 || r == 0) break;
    }
    if (fits == 0) fits = 1;  // unreachable for bits_per_key >= 1; still valid
  }
  width = fits;

  // Encode.
  info.params.num_buckets = num_buckets;
  info.params.bucket_width = width;
  info.params.rice_bits = r;
  const uint64_t range = num_buckets * width;
  std::vector<uint64_t> offsets(num_buckets > 1 ? num_buckets - 1 : 0);
  const size_t start = dst->size();
  BitWriter out(dst);
  const uint64_t rmask = r >= 64 ? ~uint64_t{0} : (uint64_t{1} << r) - 1;
  std::vector<uint64_t> remainders;  // of the current bucket
  const auto finish_bucket = [&] {
    // Remainders run backwards from the bucket's end: the last entry's
    // first, right after the unary codes.
    for (size_t k = remainders.size(); k-- > 0;) out.PutWide(remainders[k], r);
    remainders.clear();
  };
  uint64_t current = 0, prev_value = 0, entries = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t bucket = buckets == nullptr ? 0 : buckets[i];
    const uint64_t value = FastRange64(hashes[i], range) - bucket * width;
    while (current < bucket) {  // buckets up to this one start here
      finish_bucket();
      ++current;
      offsets[current - 1] = out.bits();
    }
    uint64_t gap = value;
    if (!remainders.empty()) {
      if (value == prev_value) continue;
      gap = value - prev_value;
    }
    uint64_t q = gap >> r;
    while (q >= 56) {
      out.Put(0, 56);
      q -= 56;
    }
    out.Put(uint64_t{1} << q, static_cast<int>(q) + 1);
    remainders.push_back(gap & rmask);
    prev_value = value;
    ++entries;
  }
  finish_bucket();
  while (current + 1 < num_buckets) offsets[current++] = out.bits();
  info.params.stream_bits = out.bits();
  out.Flush();
  AppendIndexAndTrailer(info.params, offsets.data(), dst);
  info.num_entries = entries;
  assert(dst->size() - start == EncodedSize(info.params));
  assert(dst->size() - start <= budget);
  (void)start;
  return info;
}

}  // namespace compact
}  // namespace blockbloom
