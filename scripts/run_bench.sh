#!/usr/bin/env bash
# Runs blockbloom's benchmark suite, writes Google Benchmark JSON and draws its
# plots and tables (tables.md).
#
#   scripts/run_bench.sh           full run (~15 min on 2 cores, ~4 GiB RAM):
#                                  results in bench/results/
#   scripts/run_bench.sh --quick   CI smoke run (< 60 s): small sizes, short
#                                  timings, results in bench/results/quick/
#
# Environment: BUILD_DIR (default /tmp/blockbloom-bench-build), OUT_DIR
# (default as above), JOBS (default 2), BLOCKBLOOM_BENCH_DIR (where the
# end-to-end benchmark puts its temporary LevelDB databases; default /tmp).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODE=full
if [[ "${1:-}" == "--quick" ]]; then MODE=quick; fi
BUILD_DIR="${BUILD_DIR:-/tmp/blockbloom-bench-build}"
JOBS="${JOBS:-2}"
if [[ "$MODE" == quick ]]; then
  OUT_DIR="${OUT_DIR:-$ROOT/bench/results/quick}"
else
  OUT_DIR="${OUT_DIR:-$ROOT/bench/results}"
fi
PYTHON=/usr/bin/python3  # Debian's, which python3-matplotlib installs into

# 1. matplotlib from Debian, if missing.
if ! "$PYTHON" -c 'import matplotlib' 2>/dev/null; then
  echo "== installing python3-matplotlib"
  if [[ "$(id -u)" == 0 ]]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-matplotlib
fi

# 2. Release build of the two benchmark binaries.
echo "== building (Release) in $BUILD_DIR"
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS" --target filter_bench leveldb_e2e_bench >/dev/null
FILTER_BENCH="$BUILD_DIR/bench/filter_bench"
E2E_BENCH="$BUILD_DIR/bench/leveldb_e2e_bench"

# 3. Run.
mkdir -p "$OUT_DIR"
if [[ "$MODE" == quick ]]; then
  COMMON=(--quick --benchmark_min_time=0.01)
  REPS=()
else
  COMMON=(--benchmark_min_time=0.1)
  REPS=(--benchmark_repetitions=5 --benchmark_report_aggregates_only=true)
fi
run() {  # run <binary> <json name> <args...>
  local bin="$1" name="$2"
  shift 2
  echo "== $(basename "$bin") $* -> $OUT_DIR/$name"
  "$bin" "$@" --benchmark_out="$OUT_DIR/$name" --benchmark_out_format=json
}
START=$SECONDS
run "$FILTER_BENCH" filter_bench.json "${COMMON[@]}" "${REPS[@]}" \
    --benchmark_filter='^(build|probe|floor|window)/'
# FPR is deterministic: one repetition.
run "$FILTER_BENCH" fpr.json "${COMMON[@]}" --benchmark_filter='^fpr/'
run "$E2E_BENCH" leveldb_e2e.json "${COMMON[@]}" "${REPS[@]}"
echo "== benchmarks took $((SECONDS - START)) s"

# 4. Machine description, plots and tables.
{
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  lscpu | grep -E '^(CPU\(s\)|L1d|L2|L3)' | sed 's/  */ /g'
  echo "kernel: $(uname -r)"
  echo "compiler: $(grep -m1 CMAKE_CXX_COMPILER: "$BUILD_DIR/CMakeCache.txt" | cut -d= -f2) $("$(grep -m1 CMAKE_CXX_COMPILER: "$BUILD_DIR/CMakeCache.txt" | cut -d= -f2)" -dumpversion)"
  echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
} >"$OUT_DIR/machine.txt"
"$PYTHON" "$ROOT/scripts/plot_bench.py" "$OUT_DIR"
echo "== done: $OUT_DIR"
