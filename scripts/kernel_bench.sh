#!/usr/bin/env bash
# The kernel's side-by-side in one command: builds kernel_bench (Release), runs
# it once with 3 repetitions (our kernel, the clean-room FastLocalBloom probe,
# LevelDB's built-in and the memory floors in the same run), writes the JSON
# and prints each target's ratio from it (scripts/kernel_targets.py). On a CPU
# with a target above AVX2 (AVX-512), compact_bench's BM_CompactTargets (the
# compact build on that target against AVX2) runs too, and the check of the
# dispatch rule (simd/targets.cc) covers every kernel family; elsewhere it
# skips at once.
#
#   scripts/kernel_bench.sh [--big] [--quick] [more kernel_bench flags]
#
# ~5 minutes on 2 cores (--big adds the 1 GiB rows: ~1.5 GiB of RAM and ~3
# minutes more). Environment: BUILD_DIR (default build/release), OUT (default
# bench/results/kernel_bench.json; the compact build's rows go beside it, in
# <OUT without .json>.compact_targets.json).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build/release}"
OUT="${OUT:-$ROOT/bench/results/kernel_bench.json}"
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DBLOCKBLOOM_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target kernel_bench compact_bench >/dev/null
mkdir -p "$(dirname "$OUT")"
echo "== $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs," \
     "load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$BUILD_DIR/bench/kernel_bench" --benchmark_min_time=0.2 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$OUT" --benchmark_out_format=json "$@"
COMPACT_OUT="${OUT%.json}.compact_targets.json"
"$BUILD_DIR/bench/compact_bench" --benchmark_filter=BM_CompactTargets --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$COMPACT_OUT" \
  --benchmark_out_format=json >/dev/null
echo "== the kernel's targets, from $OUT and $COMPACT_OUT"
python3 "$ROOT/scripts/kernel_targets.py" "$OUT" "$COMPACT_OUT"
