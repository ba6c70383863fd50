#!/usr/bin/env bash
# README command 1: install, build (Release), run the demo. Extra arguments go
# to blockbloom-demo (e.g. --keys=200000); see `blockbloom-demo --help`.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
"$here/scripts/deps.sh"
cmake -S "$here" -B "$here/build/release" -DCMAKE_BUILD_TYPE=Release \
  -DBLOCKBLOOM_BUILD_TESTS=OFF >/dev/null
cmake --build "$here/build/release" -j"$(nproc)" \
  --target blockbloom-demo blockbloom_preload blockbloom-cli
"$here/build/release/bench/blockbloom-demo" "$@"
# Then a program the demo did not compile: Debian's python3-plyvel, as shipped
# and under LD_PRELOAD=libblockbloom_preload.so (docs/PRELOAD.md).
/usr/bin/python3 "$here/scripts/preload_demo.py" \
  "$here/build/release/plugin/preload/libblockbloom_preload.so" \
  "$here/build/release/plugin/tool/blockbloom"
