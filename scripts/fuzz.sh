#!/usr/bin/env bash
# Fuzzing driver for the libFuzzer targets in fuzz/.
#
#   scripts/fuzz.sh replay [BUILD]          run every corpus input once
#   scripts/fuzz.sh run SECONDS [BUILD]     fuzz each target SECONDS, merge new
#                                           inputs into fuzz/corpus/<target>/
#   scripts/fuzz.sh ci SECONDS [BUILD]      fuzz each target SECONDS, keep nothing (CI)
#   scripts/fuzz.sh run 600 && git add fuzz/corpus   # a long local session
#
# BUILD defaults to build/asan (cmake --preset asan && cmake --build build/asan).
# FUZZ_ONLY="a b" restricts any mode to those targets, named as fuzz/<name>_fuzz.cc
# (FUZZ_ONLY="compact_bytes policy_bytes"; the _fuzz suffix may be given; an
# unknown name stops the run), e.g. to run two halves of a long session on two
# cores; FUZZ_JOBS=N runs N targets at a time (CI passes the core count: each
# libFuzzer process is single-threaded).
# Artifacts (crash-*, leak-*, timeout-*, oom-*, slow-unit-*) go to
# fuzz/artifacts/ only, whatever the working directory. Every mode fails if a
# run leaves one, and every input, replayed or generated, must finish within
# FUZZ_UNIT_SECONDS (default 10 s under ASan+UBSan; the slowest corpus input
# takes well under 1 s): libFuzzer's -timeout turns a slower one into a failure.
# A crash: add its input to the corpus and a test.
# `run` and `ci` replay the target's corpus too: libFuzzer executes every
# corpus input, whole (-max_len is at least the largest), before it mutates
# any, and that time counts in SECONDS (a corpus slower to replay than
# SECONDS is replayed and not fuzzed further).
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
known=$(cat "$build/fuzz_targets.txt")
targets=$known
if [[ -n "${FUZZ_ONLY:-}" ]]; then
  targets=""
  for t in $FUZZ_ONLY; do
    t=${t%_fuzz}  # the binary's name (compact_bytes_fuzz) names its target too
    if ! grep -qx -- "$t" <<<"$known"; then
      echo "FUZZ_ONLY: no fuzz target '$t' (targets: $(echo $known))" >&2
      exit 2
    fi
    targets+="$t "
  done
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# One target's work for the current mode; its output goes to stdout.
fuzz_one() {
  local t="$1" corpus="$here/fuzz/corpus/$1" bin="$build/fuzz/${1}_fuzz" log fresh
  mkdir -p "$corpus"
  case "$mode" in
    replay)
      echo "== replay $t ($(ls "$corpus" | wc -l) inputs)"
      log=$(mktemp)
      if ! (cd "$artifacts" && "$bin" "${common[@]}" -runs=0 "$corpus") >"$log" 2>&1 ||
         ! check_artifacts >>"$log"; then
        cat "$log"; rm -f "$log"; echo "replay of $t FAILED"; return 1
      fi
      grep -E "^(INFO: seed|#[0-9]+[[:space:]]+(INITED|DONE))" "$log" || true
      rm -f "$log"
      ;;
    run|ci)
      echo "== fuzz $t for ${seconds}s"
      fresh=$(mktemp -d)
      # New inputs up to 4 KiB; corpus inputs are never cut to it.
      max_len=$(find "$corpus" -type f -printf '%s\n' | sort -n | tail -1)
      max_len=$(( ${max_len:-0} > 4096 ? max_len : 4096 ))
      log=$(mktemp)
      local rc=0
      (cd "$artifacts" && "$bin" "${common[@]}" -max_total_time="$seconds" -print_final_stats=1 \
          -max_len="$max_len" "$fresh" "$corpus") >"$log" 2>&1 || rc=$?
      grep -E "^(INFO: seed|#[0-9]+[[:space:]]+(INITED|DONE)|stat::|==|SUMMARY)|ERROR" "$log" || true
      if [[ "$mode" == run && "$rc" == 0 ]]; then
        (cd "$artifacts" && "$bin" -merge=1 "$corpus" "$fresh" >/dev/null 2>&1)
      fi
      rm -rf "$fresh"
      if [[ "$rc" != 0 ]] || ! check_artifacts; then
        [[ "$rc" != 0 ]] && tail -n 40 "$log"
        rm -f "$log"
        echo "fuzzing $t FAILED (exit status $rc)"
        return 1
      fi
      rm -f "$log"
      ;;
    *) echo "unknown mode $mode" >&2; return 2 ;;
  esac
}

# FUZZ_JOBS targets at a time (default 1; CI passes the core count): each
# libFuzzer process is single-threaded. Logs are printed in target order.
jobs="${FUZZ_JOBS:-1}"
if ((jobs <= 1)); then  # one at a time: stream each target's output as it runs
  for t in $targets; do fuzz_one "$t" || exit 1; done
  exit 0
fi
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
status=0
running=0
for t in $targets; do
  ( fuzz_one "$t" >"$logs/$t.log" 2>&1; echo $? >"$logs/$t.rc" ) &
  running=$((running + 1))
  if ((running >= jobs)); then wait -n || true; running=$((running - 1)); fi
done
wait
for t in $targets; do
  cat "$logs/$t.log"
  rc=$(cat "$logs/$t.rc" 2>/dev/null || echo 1)
  if [[ "$rc" != 0 ]]; then status=1; fi
done
check_artifacts || status=1
exit "$status"
