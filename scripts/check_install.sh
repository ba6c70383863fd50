#!/usr/bin/env bash
# Installs blockbloom into a scratch prefix and builds a consumer project with
# find_package(blockbloom CONFIG), with pkg-config (C++ and C), and with
# add_subdirectory; and builds the blockbloom tool's sources against the
# installed package.
# Also checks that the installed package names no absolute library path and
# that a consumer cannot include an internal header.
#   scripts/check_install.sh [BUILD]   install from an existing build dir
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
lib="${1:-}"
if [[ -z "$lib" ]]; then
  lib="$scratch/lib"
  cmake -S "$here" -B "$lib" -DCMAKE_BUILD_TYPE=Release \
    -DBLOCKBLOOM_BUILD_TESTS=OFF -DBLOCKBLOOM_BUILD_BENCH=OFF >/dev/null
  cmake --build "$lib" -j"$(nproc)" >/dev/null
fi
cmake --install "$lib" --prefix "$scratch/prefix" >/dev/null
cmake -S "$here/tests/install_consumer" -B "$scratch/consumer" \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
"$scratch/consumer/consumer"
# The installed headers are exactly the public ones: what a user calls, and
# the blocked kernel's three headers that blockbloom/blocked_bloom_inline.h
# compiles into its caller. A header added to or moved out of the installed
# set is a decision: update this list (and tests/public_headers_check.cc,
# which compiles each of them).
installed="$(cd "$scratch/prefix/include" && find . -type f | sed 's|^\./||' | sort)"
expected="$(sort <<'HEADERS'
blockbloom/blocked_bloom.h
blockbloom/blocked_bloom_inline.h
blockbloom/c.h
blockbloom/compact_filter.h
blockbloom/compact_filter_policy.h
blockbloom/counting_bloom.h
blockbloom/dleft_counting_bloom.h
blockbloom/filter_file.h
blockbloom/filter_format.h
blockbloom/filter_stats.h
blockbloom/filtered_db.h
blockbloom/hash.h
blockbloom/leveldb_filter_policy.h
blockbloom/math.h
blockbloom/partitioned_bloom.h
blockbloom/scalable_bloom.h
blockbloom/set_ops.h
blockbloom/simd/blocked_bloom-inl.h
blockbloom/simd/blocked_kernel.h
blockbloom/simd/range_reduction.h
blockbloom/standard_bloom.h
HEADERS
)"
if [[ "$installed" != "$expected" ]]; then
  echo "installed headers differ from the public set:" >&2
  diff <(echo "$expected") <(echo "$installed") >&2 || true
  exit 1
fi
for header in $installed; do
  case "$header" in blockbloom/simd/*) continue ;; esac
  if ! grep -q "#include \"$header\"" "$here/tests/public_headers_check.cc"; then
    echo "tests/public_headers_check.cc does not compile $header" >&2; exit 1
  fi
done
# No installed header includes a private one or names the private allocator
# (internal::BitArrayFilter, the documented base of the standard and
# partitioned filters, and the kernel's helpers are the exceptions above).
if grep -rnE 'LargeAllocator|#include "(common|blocked|compact|format|counting|dleft|variants)/' \
    "$scratch/prefix/include"; then
  echo "an installed header names an internal" >&2; exit 1
fi
# The exported targets must not hard-code paths of this machine's libraries.
if grep -nE '"/(usr|opt|home|root|work)[^"]*\.(so|a)' "$scratch"/prefix/lib*/cmake/blockbloom/*.cmake; then
  echo "installed package config names an absolute library path" >&2; exit 1
fi
# pkg-config, as a Makefile user would: blockbloom.pc (LevelDB) and
# blockbloom-core.pc.
export PKG_CONFIG_PATH="$(dirname "$(find "$scratch/prefix" -name blockbloom.pc)")"
# shellcheck disable=SC2046
g++ -std=c++17 -o "$scratch/pc_consumer" "$here/tests/install_consumer/main.cc" \
  $(pkg-config --cflags --libs blockbloom)
"$scratch/pc_consumer"
# A C program with the .pc alone (the archives are C++: the .pc must bring
# the C++ runtime a C link lacks).
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -pedantic-errors -o "$scratch/pc_c_consumer" \
  "$here/tests/install_consumer/main.c" $(pkg-config --cflags --libs blockbloom)
"$scratch/pc_c_consumer" "$scratch/c_consumer_db"
# The blockbloom tool's sources build against the installed package alone:
# it includes only installed headers (plus absl flags and Snappy, which the
# tool itself needs).
# shellcheck disable=SC2046
g++ -std=c++17 -Wall -Wextra -Werror -o "$scratch/blockbloom_tool" "$here"/plugin/tool/*.cc \
  $(pkg-config --cflags --libs blockbloom absl_flags absl_flags_reflection \
    absl_flags_commandlineflag absl_str_format snappy)
"$scratch/blockbloom_tool" --version
"$scratch/blockbloom_tool" calc --keys 100 --bits_per_key 10 >/dev/null
# Internal headers stay internal: installed or vendored, "blocked/...",
# "common/..." and simd/ are not on a consumer's include path (the blocked
# kernel's three headers are public only as <blockbloom/simd/...>, for
# blockbloom/blocked_bloom_inline.h).
printf '#include "blocked/format.h"\nint main() { return 0; }\n' > "$scratch/internal.cc"
if g++ -std=c++17 -fsyntax-only $(pkg-config --cflags blockbloom) "$scratch/internal.cc" 2>/dev/null; then
  echo "an internal header is visible to consumers" >&2; exit 1
fi
# No build type: the consumer's choice stands (blockbloom picks its default
# only as the top-level project), so this compiles unoptimised, which is all
# a check of the build wiring needs and half the time of -O2 -g.
cmake -S "$here/tests/install_consumer" -B "$scratch/sub" -DUSE_SUBDIRECTORY=ON \
  -DBLOCKBLOOM_BUILD_TESTS=OFF -DBLOCKBLOOM_BUILD_BENCH=OFF \
  -DBLOCKBLOOM_SOURCE_DIR="$here" >/dev/null
if ! grep -q '^CMAKE_BUILD_TYPE:STRING=$' "$scratch/sub/CMakeCache.txt"; then
  echo "add_subdirectory(blockbloom) set the including project's build type" >&2; exit 1
fi
cmake --build "$scratch/sub" -j"$(nproc)" --target consumer >/dev/null
"$scratch/sub/consumer"
