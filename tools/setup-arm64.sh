#!/usr/bin/env bash
# rxray aarch64 set-up on a Debian 12 amd64 host (tools/setup.sh --arch
# arm64 runs this): Debian's cross toolchain, the arm64 -dev packages beside
# the amd64 ones (Multi-Arch), qemu-user registered for aarch64 binaries,
# then the cross build into build-arm64/.
#   tools/setup.sh --arch arm64              install + build
#   tools/setup.sh --arch arm64 --no-build   install only
# On a real arm64 host none of this is needed: tools/setup.sh builds natively.
set -euo pipefail
cd "$(dirname "$0")/.."

ARM64_PACKAGES=(
  build-essential cmake pkg-config
  crossbuild-essential-arm64 qemu-user-static
  libjansson-dev:arm64 libyaml-dev:arm64 libdw-dev:arm64 libelf-dev:arm64
  zlib1g-dev:arm64 libbpf-dev:arm64 libibverbs-dev:arm64
  # what libdpdk-dev and libcriterion3 need that does co-install
  libbsd-dev:arm64 libnuma-dev:arm64 libpcap-dev:arm64 libssl-dev:arm64
  libxdp-dev:arm64 libmnl-dev:arm64 libfdt1:arm64 libffi8:arm64 libgit2-1.5:arm64
)
# Debian 12 cannot co-install these arm64 packages with their amd64 twins:
# libdpdk-dev:arm64 depends on libfdt-dev, and its mlx4/mlx5 PMDs on
# rdma-core; libcriterion3:arm64 depends on libnanomsg5; none of those is
# Multi-Arch: same, so apt would remove the amd64 DPDK, rdma-core and
# Criterion. These are downloaded instead (Debian's own .debs) and unpacked
# into ARM64_OVERLAY, where cmake/toolchain-aarch64-linux-gnu.cmake finds
# their pkg-config files. DPDK's runtime libraries are Multi-Arch: same and
# are installed normally, less the four PMDs that need rdma-core (no mlx4 or
# mlx5 port exists under emulation anyway).
ARM64_UNPACK=(libdpdk-dev libcriterion-dev libcriterion3 libnanomsg5)
ARM64_OVERLAY=/opt/rxray-arm64
RTE_SKIP='^librte-(meta-.*|net-mlx4-.*|net-mlx5-.*|regex-mlx5-.*|vdpa-mlx5-.*)$'

build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0 ;;
    *) echo "setup-arm64: unknown option '$1' (--no-build)" >&2; exit 2 ;;
  esac
  shift
done

if [ "$(id -u)" -ne 0 ]; then
  echo "setup-arm64: needs root (dpkg --add-architecture, apt-get, binfmt_misc)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  dpkg --add-architecture arm64
  apt-get update -q
fi
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# DPDK's runtime libraries: whatever libdpdk-dev:arm64 depends on, less the
# rdma-core PMDs and the meta packages.
mapfile -t rte < <(apt-cache depends --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances libdpdk-dev:arm64 |
  awk '$1 == "Depends:" && $2 ~ /^librte-/ {sub(/:arm64$/, "", $2); print $2}' |
  grep -Ev "$RTE_SKIP" | sed 's/$/:arm64/')
[ "${#rte[@]}" -gt 0 ] || { echo "setup-arm64: no librte packages for arm64 (apt-get update?)" >&2; exit 1; }

missing=()
for p in "${ARM64_PACKAGES[@]}" "${rte[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The overlay: Debian's .debs that cannot be installed, unpacked. Their
# .pc files get the overlay as prefix; the *.private lines go (rxray links
# shared, and they name modules the overlay does not carry). A development
# symlink whose library lives in the real multiarch dir points there.
stamp="$ARM64_OVERLAY/.packages"
want="$(for p in "${ARM64_UNPACK[@]}"; do apt-cache policy "$p:arm64" | awk -v p="$p" '/Candidate:/ {print p, $2}'; done)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ -n "${RXRAY_ARM64_REFRESH:-}" ]; then
  tmp=$(mktemp -d); chown _apt "$tmp" 2>/dev/null || true # apt-get download fetches as _apt
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get download -q $(printf '%s:arm64 ' "${ARM64_UNPACK[@]}"))
  rm -rf "$ARM64_OVERLAY.new"
  mkdir -p "$ARM64_OVERLAY.new"
  for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$ARM64_OVERLAY.new"; done
  lib="$ARM64_OVERLAY.new/usr/lib/aarch64-linux-gnu"
  for pc in "$lib"/pkgconfig/*.pc; do
    sed -i -e "s|^prefix=/usr\$|prefix=$ARM64_OVERLAY/usr|" -e '/^Requires.private:/d' \
      -e '/^Libs.private:/d' "$pc"
  done
  for pass in 1 2; do # links to links (lib*.so -> dpdk/pmds-23.0/lib*.so -> ...)
    find "$ARM64_OVERLAY.new" -xtype l | while read -r l; do
      t=$(realpath -m "$(dirname "$l")/$(readlink "$l")")
      host="/${t#"$ARM64_OVERLAY.new"/}"
      if [ -e "$host" ]; then ln -sf "$host" "$l"; fi
    done
  done
  echo "$want" > "$ARM64_OVERLAY.new/.packages"
  rm -rf "$ARM64_OVERLAY"
  mv "$ARM64_OVERLAY.new" "$ARM64_OVERLAY"
fi

# qemu-user-static registers itself with binfmt_misc through systemd or
# binfmt-support; a container or CI VM may have neither. Tests and sweeps
# exec rxray's own (aarch64) binaries, which needs the registration.
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  [ -e /proc/sys/fs/binfmt_misc/register ] ||
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
    echo "setup-arm64: cannot mount binfmt_misc: tests that exec rxray will fail" >&2
  [ -e /proc/sys/fs/binfmt_misc/register ] &&
    cat /usr/lib/binfmt.d/qemu-aarch64.conf > /proc/sys/fs/binfmt_misc/register ||
    echo "setup-arm64: cannot register qemu-aarch64 with binfmt_misc" >&2
fi

[ "$build" -eq 1 ] || exit 0
cmake -S . -B build-arm64 -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
cmake --build build-arm64 -j"$(nproc)"
echo "setup-arm64: built build-arm64/tools/rxray (run it with qemu-aarch64-static or on an arm64 host)"
