#!/usr/bin/env bash
# Formats every C/C++ source of the project with clang-format-14 and the
# repository's .clang-format.
#   scripts/format.sh          rewrite files in place
#   scripts/format.sh --check  list files that differ; exit 1 if any (CI)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.c' | grep -v '^fuzz/corpus/')
if [[ "${1:-}" == "--check" ]]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format-14 --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if ((${#bad[@]} > 0)); then
    printf 'not clang-formatted: %s\n' "${bad[@]}"
    echo "run scripts/format.sh"
    exit 1
  fi
  echo "format: ${#files[@]} files clean"
else
  clang-format-14 -i "${files[@]}"
fi
