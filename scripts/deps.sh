#!/usr/bin/env bash
# Installs everything blockbloom needs from Debian's packages (bookworm).
# Runs apt-get update first. Needs root (or sudo).
set -euo pipefail
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config git ca-certificates \
  clang-14 libclang-rt-14-dev \
  libleveldb-dev libsnappy-dev libhwy-dev libabsl-dev libxxhash-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  python3 python3-matplotlib >/dev/null
echo "deps: installed"
