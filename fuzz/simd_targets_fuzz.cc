// Builds a filter under every compiled Highway target for the same hashes and
// requires identical bytes, and identical answers for batch probes at any
// window, for the single-key probe and for the key-level probe of an encoded
// filter (hash + parse + probe, blocked/key_probe.h), equal to the scalar
// kernel's; and the key-level build (hash and set in one loop,
// blocked::AddKeysForTarget) writes the scalar composition's bytes, flat and
// blocked, sometimes over simd::kPrefetchMinBytes (its prefetched path).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "blockbloom/hash.h"
#include "blocked/format.h"
#include "blocked/kernel.h"
#include "blocked/key_probe.h"
#include "blocked_bloom_simd.h"
#include "fuzz_input.h"

using blockbloom::fuzz::Fail;
using blockbloom::fuzz::FuzzInput;
namespace simd = blockbloom::simd;
namespace blocked = blockbloom::blocked;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  const uint64_t bytes = 1 + in.U16() % 3000;
  const int k = 1 + in.Byte() % 16;
  const size_t window = 1 + in.U16() % 1100;
  std::vector<uint64_t> hashes;
  while (!in.empty() && hashes.size() < 5000) {
    hashes.push_back(static_cast<uint64_t>(in.U32()) << 32 | in.U32());
  }
  std::vector<uint8_t> expected(bytes);
  for (uint64_t h : hashes) blocked::AddHash(h, bytes * 8, k, expected.data());

  // Aligned, padded to whole blocks: the gather path.
  const uint64_t padded = (bytes + 63) / 64 * 64;
  std::vector<uint32_t> words(padded / 4);
  uint8_t* filter = reinterpret_cast<uint8_t*>(words.data());
  std::vector<uint64_t> probes = hashes;
  for (size_t i = 0; i < hashes.size(); ++i)
    probes.push_back(hashes[i] * 0x9E3779B97F4A7C15ull + i);
  auto out = std::make_unique<bool[]>(probes.size() + 1);
  // The reference bits as a version-1 encoding, at the end of an exact-size
  // allocation.
  std::string encoding(expected.begin(), expected.end());
  blocked::AppendTrailer(k, &encoding);
  std::unique_ptr<char[]> exact_encoding(new char[encoding.size()]);
  std::memcpy(exact_encoding.get(), encoding.data(), encoding.size());
  // Keys for the key-level build: each hash's 8 bytes. Flat geometry when
  // the hash count is odd (of any size one input in three, with up to 30
  // probes one in five, as the LevelDB policies write); one input in four
  // builds a blocked filter over the prefetch threshold.
  std::vector<std::string_view> keys(hashes.size());
  for (size_t i = 0; i < hashes.size(); ++i) {
    keys[i] = std::string_view(reinterpret_cast<const char*>(&hashes[i]), 8);
  }
  const bool flat = hashes.size() % 2 == 1 && (bytes <= blocked::kFlatMaxBytes || window % 3 == 0);
  const int key_k = flat && window % 5 == 0 ? std::min(blocked::kMaxFlatProbes, k + 14) : k;
  const uint64_t key_bytes = !flat && window % 4 == 0 ? bytes + simd::kPrefetchMinBytes : bytes;
  std::vector<uint8_t> key_expected(key_bytes);
  for (std::string_view key : keys) {
    const uint64_t h = blockbloom::HashBytes(key.data(), key.size());
    if (flat) {
      blocked::flat::AddHash(h, key_bytes * 8, key_k, key_expected.data());
    } else {
      blocked::AddHash(h, key_bytes * 8, key_k, key_expected.data());
    }
  }
  std::unique_ptr<uint8_t[]> key_built(new uint8_t[key_bytes]);
  for (int64_t target : simd::SupportedTargets()) {
    simd::ForceTargetForTesting(target);
    std::memset(filter, 0, padded);
    simd::AddHashes(hashes.data(), hashes.size(), bytes * 8, k, filter);
    if (std::memcmp(filter, expected.data(), bytes) != 0) Fail("target built different bytes", "");
    simd::MayContainHashes(probes.data(), probes.size(), bytes * 8, k, filter, padded, out.get(),
                           window);
    for (size_t i = 0; i < probes.size(); ++i) {
      if (out[i] != blocked::MayContainHash(probes[i], bytes * 8, k, expected.data())) {
        Fail("target answered differently", "");
      }
      if (i < hashes.size() && !out[i]) Fail("false negative", "");
    }
    // The key-level build of this target, into an exact-size allocation.
    const blocked::AddKeysFn add_keys = blocked::AddKeysForTarget(target);
    if (add_keys == nullptr) Fail("target without a key-level build", "");
    std::memset(key_built.get(), 0, key_bytes);
    add_keys(keys.data(), keys.size(), key_bytes * 8, key_k, key_built.get(), flat);
    if (std::memcmp(key_built.get(), key_expected.data(), key_bytes) != 0) {
      Fail("target's key-level build wrote different bytes", "");
    }
    // The single-key probes of this target, over the exact-size reference
    // bytes (ASan flags any read past them) and over the encoded filter.
    const simd::MayContainHashFn single = simd::MayContainHashForTarget(target);
    const blocked::EncodedKeyMayMatchFn encoded = blocked::EncodedKeyMayMatchForTarget(target);
    if (single == nullptr || encoded == nullptr) Fail("target without a kernel", "");
    for (size_t i = 0; i < probes.size(); ++i) {
      if (single(probes[i], bytes * 8, k, expected.data()) !=
          blocked::MayContainHash(probes[i], bytes * 8, k, expected.data())) {
        Fail("single-key probe answered differently", "");
      }
      char key[8];
      std::memcpy(key, &probes[i], 8);
      const int want =
          blocked::MayContainHash(blockbloom::HashBytes(key, 8), bytes * 8, k, expected.data()) ? 1
                                                                                                : 0;
      if (encoded(key, 8, exact_encoding.get(), encoding.size()) != want) {
        Fail("key-level probe answered differently", "");
      }
    }
  }
  simd::ForceTargetForTesting(0);
  return 0;
}
