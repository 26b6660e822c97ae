# Cross build for aarch64 (IGX Thor class hosts) on a Debian 12 amd64 host,
# with Debian's cross compiler and the arm64 multiarch -dev packages that
# tools/setup.sh --arch arm64 installs:
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
# ctest runs every test through qemu-user (CMAKE_CROSSCOMPILING_EMULATOR).
# On a real arm64 host, build without this file.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(RXRAY_CROSS_TRIPLET aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${RXRAY_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${RXRAY_CROSS_TRIPLET}-g++)

# Debian's cross gcc already searches the multiarch dirs
# (/usr/lib/aarch64-linux-gnu, /usr/include/aarch64-linux-gnu); the root
# stays /, and find_* must never pick an amd64 library.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_LIBRARY_ARCHITECTURE ${RXRAY_CROSS_TRIPLET})

# Packages Debian 12 cannot co-install for arm64 beside amd64 (DPDK's -dev,
# Criterion) are unpacked by tools/setup-arm64.sh into this overlay.
set(RXRAY_ARM64_OVERLAY "/opt/rxray-arm64" CACHE PATH
    "unpacked arm64 packages that do not co-install (tools/setup-arm64.sh)")

# pkg-config sees only arm64 modules: the overlay, then the multiarch dir,
# then the arch-independent one; never the amd64 .pc files.
set(ENV{PKG_CONFIG_LIBDIR}
    "${RXRAY_ARM64_OVERLAY}/usr/lib/${RXRAY_CROSS_TRIPLET}/pkgconfig:/usr/lib/${RXRAY_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Tests run under qemu-user. -L points the emulated loader at the arm64
# libraries: the overlay first (qemu falls back to the real path for a file
# the overlay lacks, so /usr/lib/aarch64-linux-gnu is found as well).
find_program(RXRAY_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(RXRAY_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${RXRAY_QEMU_AARCH64};-L;${RXRAY_ARM64_OVERLAY}")
  set(RXRAY_QEMU_LD_PREFIX "${RXRAY_ARM64_OVERLAY}")
endif()

# No aarch64 CUDA target on this host: keep the CUDA parts off (the x86
# toolkit under /usr/local/cuda must not be picked up).
# (RxrayDeps.cmake turns CUDA off in a cross build and says so.)
set(RXRAY_NVTX OFF CACHE BOOL "emit NVTX ranges in full probe mode")
