#!/usr/bin/env bash
# The policy workload matrix, end to end: builds the bench (Release), runs
# every cell in real LevelDB databases on disk, and writes the JSON, the
# table (with the rule check) and the heat map next to each other.
#   scripts/policy_matrix.sh                 # bench/results/policy_matrix.{json,md,png}
#   OUT=/tmp/m scripts/policy_matrix.sh --value_sizes=100 --bits=10   # any bench flags
# Exits non-zero if a Get answered wrongly or a cell breaks the rule.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-bench/results/policy_matrix}"
cmake --preset release >/dev/null
cmake --build build/release -j"$(nproc)" --target policy_matrix_bench >/dev/null
build/release/bench/policy_matrix_bench --data_kib=2048 --gets=50000 --out="$out.json" "$@"
commit="$(git rev-parse --short HEAD 2>/dev/null || true)"
[ -n "$commit" ] && sed -i "1s/{\"meta\": {/{\"meta\": {\"commit\": \"$commit\", /" "$out.json"
/usr/bin/python3 scripts/policy_matrix.py "$out.json"  # Debian's, with python3-matplotlib --md "$out.md" --png "$out.png"
