#!/usr/bin/env bash
# rxray set-up: install every Debian package rxray needs (as root, via
# apt-get; idempotent) and build into build/ (Release).
#   tools/setup.sh                 install + build
#   tools/setup.sh --no-build      install only
#   tools/setup.sh --hugepages N   also reserve N 2 MiB hugepages and mount
#                                  hugetlbfs, so the DPDK engine runs on
#                                  hugepages as it does in the field (with
#                                  4 KiB pages, large mbufs cost TLB misses
#                                  that a real deployment does not have)
#   tools/setup.sh --arch arm64    instead: the aarch64 cross build and
#                                  qemu-user (tools/setup-arm64.sh says how)
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake pkg-config git
  libjansson-dev libyaml-dev libcriterion-dev
  dpdk dpdk-dev libdpdk-dev
  libibverbs-dev ibverbs-providers rdma-core
  libbpf-dev libelf-dev zlib1g-dev libdw-dev bpftool clang llvm
  libclang-rt-14-dev
  linux-perf libxml2-utils python3 procps iproute2
  netsniff-ng
  chromium
)

build=1
hugepages=0
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0 ;;
    --hugepages) shift; hugepages=${1:?--hugepages needs a count} ;;
    --arch) shift; [ "${1:-}" = arm64 ] || { echo "setup: --arch: '${1:-}' is not supported (arm64)" >&2; exit 2; }
            shift; [ "$build" -eq 1 ] || set -- --no-build "$@"; exec tools/setup-arm64.sh "$@" ;;
    *) echo "setup: unknown option '$1' (--no-build, --hugepages N, --arch arm64)" >&2; exit 2 ;;
  esac
  shift
done
case "$hugepages" in ''|*[!0-9]*) echo "setup: --hugepages: '$hugepages' is not a count" >&2; exit 2 ;; esac

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

if [ "$hugepages" -gt 0 ]; then
  nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
  if [ "$(cat "$nr")" -lt "$hugepages" ]; then
    echo "$hugepages" > "$nr" || echo "setup: cannot reserve hugepages (rxray runs DPDK with --no-huge)" >&2
  fi
  if ! grep -q hugetlbfs /proc/mounts; then
    mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages ||
      echo "setup: cannot mount hugetlbfs (rxray runs DPDK with --no-huge)" >&2
  fi
  echo "setup: $(grep HugePages_Total /proc/meminfo)"
fi

[ "$build" -eq 1 ] || exit 0
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
echo "setup: built build/tools/rxray"
