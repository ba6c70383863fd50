#!/usr/bin/env bash
# Installs blockbloom into a scratch prefix and builds a consumer project with
# find_package(blockbloom CONFIG), then again with add_subdirectory.
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
cmake -S "$here/tests/install_consumer" -B "$scratch/sub" -DUSE_SUBDIRECTORY=ON \
  -DBLOCKBLOOM_BUILD_TESTS=OFF -DBLOCKBLOOM_BUILD_BENCH=OFF \
  -DBLOCKBLOOM_SOURCE_DIR="$here" >/dev/null
cmake --build "$scratch/sub" -j"$(nproc)" >/dev/null
"$scratch/sub/consumer"
