# Dependencies through pkg-config; CUDA from RXRAY_CUDA_ROOT. jansson is
# required (the run-result format); every other dependency is optional and
# turns its part of the tree off with a message when missing.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)

macro(rxray_optional_dep var)
  pkg_check_modules(${var} QUIET IMPORTED_TARGET ${ARGN})
  if(${var}_FOUND)
    set(RXRAY_HAVE_${var} ON)
  else()
    set(RXRAY_HAVE_${var} OFF)
    message(STATUS "rxray: ${ARGN} not found - its part is turned off")
  endif()
endmacro()

rxray_optional_dep(DPDK libdpdk)
rxray_optional_dep(VERBS libibverbs libmlx5)
rxray_optional_dep(BPF libbpf libelf)
rxray_optional_dep(CRITERION criterion)
rxray_optional_dep(YAML yaml-0.1)
rxray_optional_dep(LIBDW libdw)

if(CMAKE_CROSSCOMPILING)
  # A host toolkit under RXRAY_CUDA_ROOT targets the host's architecture;
  # linking it into a cross build would fail (or worse, half work).
  set(RXRAY_HAVE_CUDA OFF)
  message(STATUS "rxray: CUDA off: no ${CMAKE_SYSTEM_PROCESSOR} CUDA target in this cross build "
                 "(GPU memory, CUPTI and NVTX are built natively on the ${CMAKE_SYSTEM_PROCESSOR} host)")
elseif(EXISTS "${RXRAY_CUDA_ROOT}/include/cuda_runtime.h"
   AND EXISTS "${RXRAY_CUDA_ROOT}/lib64/libcudart.so")
  set(RXRAY_HAVE_CUDA ON)
else()
  set(RXRAY_HAVE_CUDA OFF)
  message(STATUS "rxray: CUDA not found under ${RXRAY_CUDA_ROOT} - GPU memory off")
endif()
