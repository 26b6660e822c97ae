# rxray_add_test(NAME name SOURCES a.c b.c LIBS lib... [LABELS l...] [TIMEOUT s]
#                [NEEDS_PROBES])
# One Criterion program per area, registered with ctest. Labels name what a
# test needs (root, hugepages, gpu, dpdk) so `ctest -L`/`-LE` can select.
# NEEDS_PROBES: the test asserts what the probes recorded; with
# RXRAY_PROBES=off it is registered but disabled (ctest lists it as such).
function(rxray_add_test)
  cmake_parse_arguments(T "NEEDS_PROBES" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT RXRAY_HAVE_CRITERION)
    return()
  endif()
  add_executable(test_${T_NAME} ${T_SOURCES})
  target_link_libraries(test_${T_NAME} PRIVATE ${T_LIBS} PkgConfig::CRITERION)
  target_compile_definitions(test_${T_NAME} PRIVATE
    RXRAY_BIN="$<TARGET_FILE:rxray>" RXRAY_SRC_DIR="${PROJECT_SOURCE_DIR}")
  add_test(NAME ${T_NAME} COMMAND test_${T_NAME} --verbose -j1)
  # A program whose every test skipped (no root, no GPU...) shows as
  # skipped in ctest; single skips are listed by tools/test.sh.
  set_tests_properties(${T_NAME} PROPERTIES
    SKIP_REGULAR_EXPRESSION "Synthesis: Tested: 0 \\| Passing: 0 \\| Failing: 0 \\| Crashing: 0")
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(CMAKE_CROSSCOMPILING_EMULATOR)
    # Under qemu-user a program runs several times slower than natively,
    # and the 2-core CI VM slows whole runs by up to 3x at times: the
    # sweep suite (80 s emulated) once hit its 240 s limit. A timeout is
    # there to catch a hang, not to time the emulator.
    math(EXPR T_TIMEOUT "${T_TIMEOUT} * 3")
  endif()
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT})
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
  if(CMAKE_CROSSCOMPILING_EMULATOR)
    # Criterion re-executes the test binary, and tests exec rxray: those
    # children start through binfmt_misc's qemu, which takes its library
    # prefix from QEMU_LD_PREFIX. RXRAY_EMULATOR tells a test it is emulated.
    set_property(TEST ${T_NAME} APPEND PROPERTY ENVIRONMENT
                 "QEMU_LD_PREFIX=${RXRAY_QEMU_LD_PREFIX}" "RXRAY_EMULATOR=qemu-${CMAKE_SYSTEM_PROCESSOR}")
  endif()
  if(T_NEEDS_PROBES AND RXRAY_PROBES STREQUAL "off")
    message(STATUS "rxray: test ${T_NAME} disabled: it needs probes (RXRAY_PROBES=off)")
    set_tests_properties(${T_NAME} PROPERTIES DISABLED TRUE)
  endif()
endfunction()

# rxray_add_bench(name sources... LIBS libs...)
function(rxray_add_bench name)
  cmake_parse_arguments(B "" "" "LIBS" ${ARGN})
  add_executable(bench_${name} ${B_UNPARSED_ARGUMENTS})
  target_link_libraries(bench_${name} PRIVATE ${B_LIBS})
endfunction()
