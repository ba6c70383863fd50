#!/usr/bin/env bash
# Fuzzing driver for the libFuzzer targets in fuzz/.
#
#   scripts/fuzz.sh replay [BUILD]          run every corpus input once (CI)
#   scripts/fuzz.sh run SECONDS [BUILD]     fuzz each target SECONDS, merge new
#                                           inputs into fuzz/corpus/<target>/
#   scripts/fuzz.sh ci SECONDS [BUILD]      fuzz each target SECONDS, keep nothing
#   scripts/fuzz.sh run 600 && git add fuzz/corpus   # a long local session
#
# BUILD defaults to build/asan (cmake --preset asan && cmake --build build/asan).
# FUZZ_ONLY="a b" restricts any mode to those targets (e.g. to run two halves
# of a long session on two cores).
# A crash leaves its input as fuzz/crash-*; add it to the corpus and a test.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:?usage: fuzz.sh replay|run [SECONDS] [BUILD]}"
if [[ "$mode" == run || "$mode" == ci ]]; then
  seconds="${2:?seconds}"
  build="${3:-$here/build/asan}"
else
  build="${2:-$here/build/asan}"
fi
build="$(cd "$build" && pwd)"
targets=${FUZZ_ONLY:-$(cat "$build/fuzz_targets.txt")}
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
for t in $targets; do
  corpus="$here/fuzz/corpus/$t"
  mkdir -p "$corpus"
  bin="$build/fuzz/${t}_fuzz"
  case "$mode" in
    replay)
      echo "== replay $t ($(ls "$corpus" | wc -l) inputs)"
      log=$(mktemp)
      if ! "$bin" -runs=0 "$corpus" >"$log" 2>&1; then
        cat "$log"; rm -f "$log"; echo "replay of $t FAILED"; exit 1
      fi
      grep -E "^(INFO: seed|#[0-9]+[[:space:]]+(INITED|DONE))" "$log" || true
      rm -f "$log"
      ;;
    run|ci)
      echo "== fuzz $t for ${seconds}s"
      fresh=$(mktemp -d)
      (cd "$here/fuzz" && "$bin" -max_total_time="$seconds" -print_final_stats=1 \
          -max_len=4096 "$fresh" "$corpus" 2>&1 | grep -E "^(#[0-9]+[[:space:]]+DONE|stat::|==|SUMMARY)|ERROR" ) || true
      if [[ "$mode" == run ]]; then "$bin" -merge=1 "$corpus" "$fresh" >/dev/null 2>&1; fi
      rm -rf "$fresh"
      found=$(find "$here/fuzz" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) -print)
      if [[ -n "$found" ]]; then
        echo "fuzzing $t found a failure: $found"
        exit 1
      fi
      ;;
    *) echo "unknown mode $mode" >&2; exit 2 ;;
  esac
done
