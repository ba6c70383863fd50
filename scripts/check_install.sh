#!/usr/bin/env bash
# Installs blockbloom into a scratch prefix and builds a consumer project with
# find_package(blockbloom CONFIG) (and one of COMPONENTS core, without
# LevelDB) and with pkg-config (C++ and C); and builds
# the blockbloom tool's sources against the installed package.
# Also checks that the installed package names no absolute library path,
# that the static libraries link into a shared object (position-independent),
# that a consumer cannot include an internal header; and, where Debian's
# python3-plyvel is installed, that the installed libblockbloom_preload.so
# gives a plyvel program blockbloom's filters.
#   scripts/check_install.sh [BUILD]   install from an existing build dir
#                                      (else a static build made here)
#   scripts/check_install.sh --shared  shared libraries (-DBUILD_SHARED_LIBS=ON)
#                                      built the way a project vendoring
#                                      blockbloom builds them (add_subdirectory,
#                                      a unity build; that project's program
#                                      is run), then installed from that build
#                                      and checked
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
lib="${1:-}"
shared=OFF
if [[ "$lib" == "--shared" ]]; then
  lib=""
  shared=ON
fi
if [[ "$shared" == ON ]]; then
  # The consumer project with blockbloom's source tree vendored, as a user's
  # project: no build type, so the consumer's choice (none: unoptimised)
  # stands, which is all a check of the build wiring needs. The tool and the
  # preload library are asked for (a subproject builds neither by default):
  # the installed ones are checked below. A unity build (CMAKE_UNITY_BUILD),
  # as large projects set for all they build: blockbloom's sources must
  # compile batched together (no two of a target's sources may define the
  # same internal name; the Highway per-target sources are left out of the
  # batches, see bb_highway_per_target). The project's strict warnings
  # (-Wpedantic -Werror) apply to blockbloom's sources too.
  lib="$scratch/sub"
  cmake -S "$here/tests/install_consumer" -B "$lib" -DUSE_SUBDIRECTORY=ON \
    -DBLOCKBLOOM_SOURCE_DIR="$here" -DBUILD_SHARED_LIBS=ON -DBLOCKBLOOM_BUILD_TOOLS=ON \
    -DBLOCKBLOOM_BUILD_PRELOAD=ON -DCMAKE_UNITY_BUILD=ON \
    -DCMAKE_CXX_FLAGS="-Wall -Wextra -Wpedantic -Werror" >/dev/null
  if ! grep -q '^CMAKE_BUILD_TYPE:STRING=$' "$lib/CMakeCache.txt"; then
    echo "add_subdirectory(blockbloom) set the including project's build type" >&2; exit 1
  fi
  cmake --build "$lib" -j"$(nproc)" >/dev/null
  "$lib/consumer"
elif [[ -z "$lib" ]]; then
  lib="$scratch/lib"
  # The tool is built for the preload check below (blockbloom inspect).
  # Unoptimised (a Release build with -O0): what is checked here is the
  # package, not speed, and -O3 took a quarter more of this script's time.
  cmake -S "$here" -B "$lib" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG \
    -DCMAKE_C_FLAGS_RELEASE=-DNDEBUG -DBUILD_SHARED_LIBS=OFF \
    -DBLOCKBLOOM_BUILD_TESTS=OFF -DBLOCKBLOOM_BUILD_BENCH=OFF >/dev/null
  cmake --build "$lib" -j"$(nproc)" >/dev/null
fi
cmake --install "$lib" --prefix "$scratch/prefix" >/dev/null
cmake -S "$here/tests/install_consumer" -B "$scratch/consumer" \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
"$scratch/consumer/consumer"
# The core component alone, where no LevelDB package can be found.
cmake -S "$here/tests/install_consumer_core" -B "$scratch/core_consumer" \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_DISABLE_FIND_PACKAGE_leveldb=ON >/dev/null
cmake --build "$scratch/core_consumer" >/dev/null
LD_LIBRARY_PATH="$(dirname "$(find "$scratch/prefix" -name 'libblockbloom_core*' | head -1)")" \
  "$scratch/core_consumer/core_consumer"
# leveldb as an optional component, where no LevelDB package can be found:
# the package is found, with core and without the LevelDB layer.
mkdir -p "$scratch/optional_leveldb"
printf '%s\n' 'cmake_minimum_required(VERSION 3.16)' 'project(p CXX)' \
  'find_package(blockbloom CONFIG REQUIRED COMPONENTS core OPTIONAL_COMPONENTS leveldb)' \
  'if(NOT TARGET blockbloom::core OR TARGET blockbloom::leveldb OR blockbloom_leveldb_FOUND)' \
  '  message(FATAL_ERROR "optional leveldb: wrong targets")' 'endif()' \
  > "$scratch/optional_leveldb/CMakeLists.txt"
cmake -S "$scratch/optional_leveldb" -B "$scratch/optional_leveldb/build" \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_DISABLE_FIND_PACKAGE_leveldb=ON >/dev/null
# Nonexistent components are refused.
mkdir -p "$scratch/bad_component"
printf 'cmake_minimum_required(VERSION 3.16)\nproject(p CXX)\nfind_package(blockbloom CONFIG REQUIRED COMPONENTS nosuch)\n' \
  > "$scratch/bad_component/CMakeLists.txt"
if cmake -S "$scratch/bad_component" -B "$scratch/bad_component/build" \
    -DCMAKE_PREFIX_PATH="$scratch/prefix" > "$scratch/bad_component/out" 2>&1 ||
  ! grep -q nosuch "$scratch/bad_component/out"; then
  echo "find_package(blockbloom COMPONENTS nosuch) did not fail naming it" >&2; exit 1
fi
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
# Every public header compiles under a user's strictest warnings, from the
# prefix as a plain include path (pkg-config's -I, not CMake's -isystem),
# with g++ and clang, for a generic and for this machine's CPU (the inline
# probe compiles the kernel for the caller's target).
{
  for header in $installed; do
    case "$header" in blockbloom/simd/*) continue ;; esac
    echo "#include \"$header\""
  done
  echo 'int main() { return 0; }'
} > "$scratch/pedantic.cc"
clangxx=$(command -v clang++-14 || command -v clang++ || true)
for cxx in g++ $clangxx; do
  for arch in "" -march=native; do
    "$cxx" -std=c++17 $arch -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow \
      -Werror -fsyntax-only -I"$scratch/prefix/include" "$scratch/pedantic.cc"
  done
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
# The static libraries are position-independent: a shared object links them
# (as libblockbloom_preload.so does).
if [[ "$shared" == OFF ]]; then
  # shellcheck disable=SC2046
  g++ -std=c++17 -shared -fPIC -Wl,-z,defs -o "$scratch/pc_consumer.so" \
    "$here/tests/install_consumer/main.cc" $(pkg-config --cflags --libs blockbloom)
fi
# A shared build's libraries are found at run time through LD_LIBRARY_PATH
# for these programs linked with pkg-config's flags (a static build's need
# none); the installed tool and preload library find them by their RUNPATH.
libdir="$(dirname "$(find "$scratch/prefix" -name blockbloom.pc)")/.."
LD_LIBRARY_PATH="$libdir" "$scratch/pc_consumer"
# Installed shared, every symbol the libraries export carries the version
# node of their ABI (cmake/blockbloom.map.in).
if [[ "$shared" == ON ]]; then
  for so in "$libdir"/libblockbloom_core.so "$libdir"/libblockbloom_leveldb.so; do
    unversioned="$(objdump -T "$so" | grep '^[0-9a-f]' | grep blockbloom | grep -v '[*]UND[*]' |
      grep -v ' BLOCKBLOOM_[0-9]*[.][0-9]* ' || true)"
    if [[ -n "$unversioned" ]]; then
      printf '%s exports blockbloom symbols without a version node:\n%s\n' "$so" \
        "$(head -3 <<<"$unversioned")" >&2; exit 1
    fi
  done
fi
# Installed shared, libblockbloom_leveldb finds libblockbloom_core beside it
# (RUNPATH $ORIGIN), whatever the prefix.
if [[ "$shared" == ON ]] &&
  ! readelf -d "$libdir/libblockbloom_leveldb.so" | grep -q 'R.*PATH.*\$ORIGIN'; then
  echo "libblockbloom_leveldb.so has no RUNPATH \$ORIGIN" >&2; exit 1
fi
# A C program with the .pc alone (the archives are C++: the .pc must bring
# the C++ runtime a C link lacks).
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -pedantic-errors -o "$scratch/pc_c_consumer" \
  "$here/tests/install_consumer/main.c" $(pkg-config --cflags --libs blockbloom)
LD_LIBRARY_PATH="$libdir" "$scratch/pc_c_consumer" "$scratch/c_consumer_db"
# The blockbloom tool's sources build against the installed package alone:
# it includes only installed headers (plus absl flags and Snappy, which the
# tool itself needs).
# shellcheck disable=SC2046
g++ -std=c++17 -Wall -Wextra -Werror -o "$scratch/blockbloom_tool" "$here"/plugin/tool/*.cc \
  $(pkg-config --cflags --libs blockbloom absl_flags absl_flags_reflection \
    absl_flags_commandlineflag absl_str_format snappy)
LD_LIBRARY_PATH="$libdir" "$scratch/blockbloom_tool" --version
LD_LIBRARY_PATH="$libdir" "$scratch/blockbloom_tool" calc --keys 100 --bits_per_key 10 >/dev/null
# The preload library, installed: exports leveldb::NewBloomFilterPolicy(int)
# only, and a plyvel program run under it writes blockbloom's filters.
preload="$libdir/libblockbloom_preload.so"
if [[ -f "$preload" ]]; then
  exported="$(nm -D --defined-only "$preload" | awk '{print $3}')"
  if [[ "$exported" != "_ZN7leveldb20NewBloomFilterPolicyEi" ]]; then
    printf 'libblockbloom_preload.so exports more than NewBloomFilterPolicy:\n%s\n' \
      "$exported" >&2; exit 1
  fi
  if /usr/bin/python3 -c 'import plyvel' 2>/dev/null && [[ -x "$scratch/prefix/bin/blockbloom" ]]; then
    LD_PRELOAD="$preload" /usr/bin/python3 -c 'import plyvel, sys
db = plyvel.DB(sys.argv[1], create_if_missing=True, bloom_filter_bits=10)
for i in range(3000): db.put(b"key%d" % i, b"value")
db.compact_range(); db.close()' "$scratch/plyvel_db"
    if ! "$scratch/prefix/bin/blockbloom" inspect "$scratch/plyvel_db" | grep -q "blockbloom blocked"; then
      echo "plyvel under the installed preload library wrote no blockbloom filter" >&2; exit 1
    fi
    echo "preload: ok (plyvel wrote blockbloom filters)"
  fi
fi
# Internal headers stay internal: installed or vendored, "blocked/...",
# "common/..." and simd/ are not on a consumer's include path (the blocked
# kernel's three headers are public only as <blockbloom/simd/...>, for
# blockbloom/blocked_bloom_inline.h).
printf '#include "blocked/format.h"\nint main() { return 0; }\n' > "$scratch/internal.cc"
if g++ -std=c++17 -fsyntax-only $(pkg-config --cflags blockbloom) "$scratch/internal.cc" 2>/dev/null; then
  echo "an internal header is visible to consumers" >&2; exit 1
fi
# The uninstall target (a top-level build's) removes every installed file.
if [[ "$shared" == OFF ]]; then
  cmake --build "$lib" --target uninstall >/dev/null
  left="$(find "$scratch/prefix" -type f -o -type l)"
  if [[ -n "$left" ]]; then
    printf 'uninstall left files behind:\n%s\n' "$(head -5 <<<"$left")" >&2; exit 1
  fi
fi
echo "check_install: ok"
