#!/usr/bin/env bash
# Pack a build for another x86-64 Linux host that has no package registry
# (e.g. a lent GPU machine running a newer glibc): the rxray binary, the
# benches, the GPU/attach test programs, every shared library they need
# except glibc's own, and DPDK's plugin drivers (mempool + net_null).
#   tools/device-bundle.sh [build-dir] [out-dir]     (default build .dev/bundle)
#   RXRAY_FULL_BUILD=build-full tools/device-bundle.sh    (+ the full-probe rxray)
# On the target:
#   export LD_LIBRARY_PATH=$PWD/.dev/bundle/lib RXRAY_DPDK_PMD_DIR=$PWD/.dev/bundle/pmds
#   export RXRAY_TESTPMD=$PWD/.dev/bundle/bin/dpdk-testpmd
#   .dev/bundle/bin/rxray doctor
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-.dev/bundle}
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/pmds"

elves=("$build/tools/rxray")
while IFS= read -r f; do elves+=("$f"); done < <(find "$build/bench" "$build/tests" "$build/cupti" -type f \( -name 'bench_*' -o -name 'test_*' -o -name 'cupti_smoke' -o -name '*.so' \) -perm -u+x 2>/dev/null)
# testpmd for the attach bench and tests (RXRAY_TESTPMD=.../bin/dpdk-testpmd)
[ -x /usr/bin/dpdk-testpmd ] && elves+=(/usr/bin/dpdk-testpmd)
for f in "${elves[@]}"; do cp "$f" "$out/bin/"; done
# A full-probe build beside it (sampled laps, NVTX stage ranges), when
# RXRAY_FULL_BUILD names its dir: bin/rxray-full, bin/test_nvtx_run-full.
if [ -n "${RXRAY_FULL_BUILD:-}" ]; then
  cp "$RXRAY_FULL_BUILD/tools/rxray" "$out/bin/rxray-full"
  if [ -x "$RXRAY_FULL_BUILD/tests/gpu/test_nvtx_run" ]; then
    cp "$RXRAY_FULL_BUILD/tests/gpu/test_nvtx_run" "$out/bin/test_nvtx_run-full"
  fi
fi

pmddir=$(pkg-config --variable=pmdsdir libdpdk 2>/dev/null || true)
# this machine's own architecture: a cross set-up may have arm64 plugins too
[ -n "$pmddir" ] || pmddir=$(ls -d /usr/lib/"$(gcc -dumpmachine)"/dpdk/pmds-* 2>/dev/null | head -1)
for p in mempool_ring mempool_stack bus_vdev bus_pci net_null net_ring; do
  for f in "$pmddir"/librte_${p}.so*; do [ -e "$f" ] && cp -L "$f" "$out/pmds/"; done
done

# Shared-library closure, glibc's own libraries left to the target.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libresolv|libutil\.so|libcuda\.so|libnvidia)'
for f in "$out"/bin/* "$out"/pmds/*; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $1" "$3}' | while read -r name path; do
    [[ "$name" =~ $skip ]] && continue
    [ -e "$out/lib/$name" ] || cp -L "$path" "$out/lib/$name"
  done
done
du -sh "$out" | awk '{print "bundle: "$1" in '"$out"'"}'
