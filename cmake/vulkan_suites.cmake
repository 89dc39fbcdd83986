# Run after each build of the test binary (tests/CMakeLists.txt): registers the binary's Vulkan tests
# with CTest one *suite* per test process, where the other tests get a process each.
#
# Why: most of a Vulkan test's time on lavapipe is the driver compiling the pipelines the test
# needs, and a process compiles each pipeline once (the context's pipeline cache, shared by the
# tests of one process: tests/support/vulkan_fixture.h). The tests of one suite need mostly the same
# pipelines, so in one process the geometry queries' device suite takes 38 s where its 19 processes
# took 158 s (2026-11-28). The unit of work is still small enough for `ctest -j` to spread.
#
# A suite's entry is named "<suite> [<n> Vulkan tests]": it keeps "Vulkan" in its name, so that
# `ctest -R Vulkan` / `-E Vulkan` select it as before, and scripts/test.sh adds the n of the entries
# that ran to its count of Vulkan tests. Tests matching SOLO_PATTERN keep an entry each, under their
# own name: the allocation-failure sweeps (they make their own contexts and gain nothing from
# sharing) and the tests that may skip on a device (the workgroup-count-limit tests, where the limit
# is out of reach within 128 MiB), which CTest then reports as not run, as gtest_discover_tests does.
# No test of a suite entry may skip (a missing layer or device fails a Vulkan test): an entry whose
# output has gtest's "[  SKIPPED ]" fails.
#
# Inputs (-D): TEST_EXECUTABLE, CTEST_FILE (written), FILTER (gtest filter of the Vulkan tests),
# SOLO_PATTERN (regex), TIMEOUT (per suite entry, seconds), SOLO_TIMEOUT.
cmake_minimum_required(VERSION 3.22)

execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests "--gtest_filter=${FILTER}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${rc}):\n${listing}")
endif()

# gtest's listing: "Suite." lines, then "  Test" lines, either followed by "  # <param>" comments.
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(suites)
set(suite "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE " +#.*$" "" line "${line}")
  if(line MATCHES "^([^ ].*)\\.$")
    set(suite "${CMAKE_MATCH_1}")
    list(APPEND suites "${suite}")
    string(MAKE_C_IDENTIFIER "${suite}" var)
    set(tests_${var})
  elseif(line MATCHES "^  ([^ ]+)$")
    string(MAKE_C_IDENTIFIER "${suite}" var)
    list(APPEND tests_${var} "${suite}.${CMAKE_MATCH_1}")
  endif()
endforeach()

set(script "")
macro(add_entry name filter timeout on_skip)
  string(APPEND script
    "add_test([==[${name}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${filter}]==])\n"
    "set_tests_properties([==[${name}]==] PROPERTIES TIMEOUT ${timeout} "
    "${on_skip}_REGULAR_EXPRESSION [==[\\[  SKIPPED \\]]==])\n")
endmacro()
foreach(suite IN LISTS suites)
  string(MAKE_C_IDENTIFIER "${suite}" var)
  set(grouped)
  foreach(test IN LISTS tests_${var})
    if(test MATCHES "${SOLO_PATTERN}")
      add_entry("${test}" "${test}" ${SOLO_TIMEOUT} SKIP)
    else()
      list(APPEND grouped "${test}")
    endif()
  endforeach()
  list(LENGTH grouped n)
  if(n GREATER 0)
    list(JOIN grouped ":" filter)
    if(n EQUAL 1)
      add_entry("${suite} [1 Vulkan test]" "${filter}" ${TIMEOUT} FAIL)
    else()
      add_entry("${suite} [${n} Vulkan tests]" "${filter}" ${TIMEOUT} FAIL)
    endif()
  endif()
endforeach()
file(WRITE "${CTEST_FILE}" "${script}")
