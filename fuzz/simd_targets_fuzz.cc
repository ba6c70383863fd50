// Builds a filter under every compiled Highway target for the same hashes and
// requires identical bytes, and identical answers for batch probes at any
// window, equal to the scalar kernel's.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "blocked/kernel.h"
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
  }
  simd::ForceTargetForTesting(0);
  return 0;
}
