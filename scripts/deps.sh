#!/usr/bin/env bash
# Installs what blockbloom needs from Debian's packages (bookworm), and only
# what is missing: when every package is present it changes nothing, runs no
# apt-get and needs no root. Otherwise it runs apt-get update, then installs
# the missing packages (as root, or through sudo).
#   BLOCKBLOOM_DEPS_EXTRA="librocksdb-dev"  also require these (the RocksDB
#                                           comparison bench; optional)
set -euo pipefail
packages=(
  build-essential cmake pkg-config git ca-certificates
  clang-14 libclang-rt-14-dev clang-format-14
  libleveldb-dev libsnappy-dev libhwy-dev libabsl-dev libxxhash-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-matplotlib python3-plyvel
)
# shellcheck disable=SC2206
packages+=(${BLOCKBLOOM_DEPS_EXTRA:-})
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: installed"
