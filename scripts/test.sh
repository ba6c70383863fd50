#!/usr/bin/env bash
# README command 2 (and all of CI, through .ci/run): install what is missing,
# build and run every test. 12-14 minutes on 2 cores of an AMD EPYC Zen 3 guest.
#   0. clang-format check of every source.
#   1. g++ RelWithDebInfo (preset ci: -O2 with line tables only), in build/ci:
#      every unit test (ctest; with libblockbloom_preload.so under Debian's
#      python3-plyvel), the demo and the benchmark suite in quick mode, and
#      the install/find_package check; then a shared build
#      (-DBUILD_SHARED_LIBS=ON) as a project vendoring blockbloom builds it
#      (add_subdirectory), installed and checked the same way.
#   2. clang ASan+UBSan: every unit test again, then each fuzz target run on
#      its corpus (every input replayed first) for FUZZ_SECONDS (default 4); a
#      fuzz artifact left anywhere, an input slower than 10 s, or a fuzzer's
#      non-zero exit fails the step.
#   3. clang TSan: the concurrency tests (ctest label "tsan"; only their
#      binaries are built, target tsan_tests).
# Ends with one line "N passed, N failed" counting the steps.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
jobs="$(nproc)"
fuzz_seconds="${FUZZ_SECONDS:-4}"
passed=0
failed=0
failures=()

step() {  # step NAME COMMAND...
  local name="$1"; shift
  local start=$SECONDS
  echo "::: $name"
  if "$@"; then
    passed=$((passed + 1)); echo "::: $name: ok ($((SECONDS - start))s)"
  else
    failed=$((failed + 1)); failures+=("$name"); echo "::: $name: FAILED ($((SECONDS - start))s)"
  fi
}

# librocksdb-dev too: CI builds and smoke-runs the RocksDB comparison bench
# (the library itself never needs RocksDB).
BLOCKBLOOM_DEPS_EXTRA="librocksdb-dev" scripts/deps.sh || { echo "0 passed, 1 failed"; exit 1; }
start_all=$SECONDS
# The preload tests (tests/preload_test.py) fail, not skip, without plyvel.
export BLOCKBLOOM_REQUIRE_PLYVEL=1

step "format (clang-format-14)" scripts/format.sh --check
step "build (g++)" bash -c "cmake --preset ci >/dev/null && cmake --build build/ci -j$jobs"
step "unit tests (g++)" ctest --test-dir build/ci --output-on-failure -j"$jobs"
step "demo (small)" build/ci/bench/blockbloom-demo --keys=50000 --gets=5000
step "benchmarks (quick)" scripts/bench_quick.sh build/ci
step "install + find_package" scripts/check_install.sh build/ci
step "add_subdirectory, shared libraries (BUILD_SHARED_LIBS=ON) + install" \
  scripts/check_install.sh --shared

step "build (clang ASan+UBSan, fuzz)" bash -c "cmake --preset asan >/dev/null && cmake --build build/asan -j$jobs"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
step "unit tests (ASan+UBSan)" ctest --test-dir build/asan --output-on-failure -j"$jobs"
step "fuzz corpus replay + ${fuzz_seconds}s per target" \
  env FUZZ_JOBS="$jobs" scripts/fuzz.sh ci "$fuzz_seconds" build/asan

step "build (clang TSan)" bash -c "cmake --preset tsan >/dev/null && cmake --build build/tsan -j$jobs --target tsan_tests"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$here/tests/tsan.supp"
step "concurrency tests (TSan)" ctest --test-dir build/tsan --output-on-failure -L tsan -j"$jobs"

echo
if ((failed > 0)); then printf 'failed step: %s\n' "${failures[@]}"; fi
echo "steps: $passed passed, $failed failed ($((SECONDS - start_all)) s)"
((failed == 0))
