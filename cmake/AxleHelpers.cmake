# axle_library(NAME SRCS ... DEPS ...): one static library per layer. Each is
# recorded in the global property AXLE_LIBRARIES, which cmake/AxleInstall.cmake
# installs, exports as Axle::NAME and links into the umbrella Axle::axle.
function(axle_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS})
  # Linked into the PyTorch device's shared module (AXLE_TORCH).
  if(AXLE_PIC_LIBRARIES)
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
  set_property(GLOBAL APPEND PROPERTY AXLE_LIBRARIES ${name})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:include>)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# axle_test(NAME SRCS ... DEPS ...): a GoogleTest binary whose tests CTest
# discovers one by one. Discovery lists the tests by running the binary
# (some are over 200 MB with debug info): CMake's 5 s default timed out
# once in a fresh-clone CI run while the machine's page cache was cold.
function(axle_test name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 120
    PROPERTIES ENVIRONMENT "AXLE_CONFORMANCE_DIR=${AXLE_CONFORMANCE_DIR}")
endfunction()
