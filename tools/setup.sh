#!/usr/bin/env bash
# rxray set-up: install every Debian package rxray needs (as root, via
# apt-get; idempotent) and build into build/ (Release).
#   tools/setup.sh            install + build
#   tools/setup.sh --no-build install only
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake pkg-config git
  libjansson-dev libyaml-dev libcriterion-dev
  dpdk dpdk-dev libdpdk-dev
  libibverbs-dev ibverbs-providers rdma-core
  libbpf-dev libelf-dev zlib1g-dev libdw-dev bpftool clang llvm
  linux-perf libxml2-utils python3 procps iproute2
  chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need root to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

[ "${1:-}" = "--no-build" ] && exit 0
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
echo "setup: built build/tools/rxray"
