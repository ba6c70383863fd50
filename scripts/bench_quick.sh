#!/usr/bin/env bash
# Runs every benchmark binary in BUILD/bench in quick mode (small sizes, short
# timings): keeps the suite compiling and working in CI. Numbers from quick
# mode are not results; scripts/run_bench.sh makes those.
set -euo pipefail
build="${1:?usage: bench_quick.sh BUILD_DIR}"
export BLOCKBLOOM_BENCH_QUICK=1
shopt -s nullglob
ran=0
for bin in "$build"/bench/*_bench; do
  [[ -x "$bin" ]] || continue
  # These run as ctest tests (label "bench") with the unit tests, with their
  # own quick flags.
  case "$(basename "$bin")" in
    filter_bench | leveldb_e2e_bench | kernel_bench | rocksdb_e2e_bench | fill_bench) continue ;;
  esac
  echo "== $(basename "$bin") (quick)"
  if [[ "$(basename "$bin")" == policy_matrix_bench ]]; then  # not a Google Benchmark binary
    out="$(mktemp)"
    "$bin" --value_sizes=100,4096 --block_sizes=4096 --bits=4,10 --shapes=random,short \
      --data_kib=128 --gets=500 --out="$out" 2>/dev/null
    /usr/bin/python3 "$(dirname "$0")/policy_matrix.py" "$out" >/dev/null
    rm -f "$out"
  elif [[ "$(basename "$bin")" == compact_bench ]]; then
    # Every family, at 10 bits/key (the FPR rows at 4 and 10): 12 s on an
    # Intel Xeon guest, where the whole grid took a minute.
    "$bin" --benchmark_min_time=0.01 --benchmark_filter='^(BM_Probe/|BM_Build/|BM_BuildGrid/policy:[0-9]+/bpk:10/|BM_BuildVs/bpk:10/|BM_CompactTargets/bpk:10/|BM_CompactFpr/(4|10)/)' >/dev/null
  else
    "$bin" --benchmark_min_time=0.01 >/dev/null
  fi
  ran=$((ran + 1))
done
echo "ran $ran benchmark binaries in quick mode"
