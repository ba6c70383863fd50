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
# Artifacts (crash-*, leak-*, timeout-*, oom-*, slow-unit-*) go to
# fuzz/artifacts/ only, whatever the working directory. Every mode fails if a
# run leaves one, and every input, replayed or generated, must finish within
# FUZZ_UNIT_SECONDS (default 10 s under ASan+UBSan; the slowest corpus input
# takes well under 1 s): libFuzzer's -timeout turns a slower one into a failure.
# A crash: add its input to the corpus and a test.
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
unit_seconds="${FUZZ_UNIT_SECONDS:-10}"
artifacts="$here/fuzz/artifacts"
mkdir -p "$artifacts"
common=(-timeout="$unit_seconds" -report_slow_units="$unit_seconds" -artifact_prefix="$artifacts/")

# Fails when any fuzz artifact exists, in fuzz/artifacts/ or anywhere else in
# the tree (a stray one at the root was once committed by accident).
check_artifacts() {
  local found
  found=$(find "$here" -path "$here/build*" -prune -o -path "$here/.git" -prune -o \
            -path "$here/fuzz/corpus" -prune -o -type f \( -name 'crash-*' -o -name 'leak-*' \
            -o -name 'timeout-*' -o -name 'oom-*' -o -name 'slow-unit-*' \) -print)
  if [[ -n "$found" ]]; then
    echo "fuzz artifacts left behind (a failure, or a unit slower than ${unit_seconds}s):"
    echo "$found"
    return 1
  fi
}
check_artifacts || exit 1
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
      if ! (cd "$artifacts" && "$bin" "${common[@]}" -runs=0 "$corpus") >"$log" 2>&1 ||
         ! check_artifacts >>"$log"; then
        cat "$log"; rm -f "$log"; echo "replay of $t FAILED"; exit 1
      fi
      grep -E "^(INFO: seed|#[0-9]+[[:space:]]+(INITED|DONE))" "$log" || true
      rm -f "$log"
      ;;
    run|ci)
      echo "== fuzz $t for ${seconds}s"
      fresh=$(mktemp -d)
      (cd "$artifacts" && "$bin" "${common[@]}" -max_total_time="$seconds" -print_final_stats=1 \
          -max_len=4096 "$fresh" "$corpus" 2>&1 | grep -E "^(#[0-9]+[[:space:]]+DONE|stat::|==|SUMMARY)|ERROR" ) || true
      if [[ "$mode" == run ]]; then
        (cd "$artifacts" && "$bin" -merge=1 "$corpus" "$fresh" >/dev/null 2>&1)
      fi
      rm -rf "$fresh"
      if ! check_artifacts; then
        echo "fuzzing $t found a failure"
        exit 1
      fi
      ;;
    *) echo "unknown mode $mode" >&2; exit 2 ;;
  esac
done
