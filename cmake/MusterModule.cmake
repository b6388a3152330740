# muster_module(<name> DIR <dir> [DEPS <targets...>] [PRIVATE_DEPS <targets...>])
#
# Declares the library target muster_<name> from <dir>/*.cc (tests, fuzzers
# benchmarks and e2e programs excluded) and, when tests are on, one test binary
# muster_<name>_test from <dir>/*_test.cc registered in CTest with label
# "unit". A module without sources yet is an INTERFACE target that already
# carries its allowed dependencies; it becomes static when its first .cc lands.
function(muster_module name)
  cmake_parse_arguments(M "" "DIR" "DEPS;PRIVATE_DEPS;TEST_DEPS" ${ARGN})
  if(NOT M_DIR)
    set(M_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  file(GLOB all_cc CONFIGURE_DEPENDS ${M_DIR}/*.cc)
  set(srcs)
  set(tests)
  foreach(f ${all_cc})
    if(f MATCHES "_test\\.cc$")
      list(APPEND tests ${f})
    elseif(f MATCHES "_(fuzz|bench|main|e2e)\\.cc$")
    else()
      list(APPEND srcs ${f})
    endif()
  endforeach()
  set(target muster_${name})
  if(srcs)
    add_library(${target} STATIC ${srcs})
    target_include_directories(${target} PUBLIC ${CMAKE_SOURCE_DIR})
    target_link_libraries(${target} PUBLIC ${M_DEPS} muster_flags PRIVATE ${M_PRIVATE_DEPS})
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${CMAKE_SOURCE_DIR})
    target_link_libraries(${target} INTERFACE ${M_DEPS} muster_flags)
  endif()
  if(MUSTER_BUILD_TESTS AND tests)
    add_executable(${target}_test ${tests})
    target_link_libraries(${target}_test PRIVATE ${target} ${M_TEST_DEPS}
                          GTest::gmock GTest::gtest_main muster_flags)
    target_compile_definitions(${target}_test PRIVATE
                               MUSTER_TESTDATA_DIR="${M_DIR}/testdata")
    gtest_discover_tests(${target}_test PROPERTIES LABELS unit TIMEOUT 120 DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
