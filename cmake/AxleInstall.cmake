# `cmake --install` and the CMake package a user's project finds with
# find_package(Axle REQUIRED) and links as Axle::axle. Included last from the
# top-level CMakeLists.txt, after every library is defined.
#
#   bin/                  the executables defined in tools/ (axle-opt, axle-run)
#   include/axle/...      Axle's headers, include/xla/..., include/tensorflow/...
#                         the XLA-path forwarding headers (AxleInstallHeaders.cmake)
#   lib/libaxle_*.a       every library made by axle_library() (AxleHelpers.cmake)
#   lib/cmake/Axle/       AxleConfig.cmake, AxleConfigVersion.cmake, AxleTargets*.cmake
#
# Exported targets: Axle::<library> for each library, and the umbrella
# Axle::axle that links all of them (and, in-tree, has compat/include on its
# include path too).
#
# External packages. The libraries are static, so every target in their link
# interface must exist in the consumer's project, PRIVATE deps included (they
# are exported as $<LINK_ONLY:dep>). AxleConfig.cmake finds each package
# listed in the global property AXLE_PACKAGE_DEPENDENCIES, one
# find_dependency() argument list per entry. A library that links a new
# package adds it next to its find_package(), e.g.
#   set_property(GLOBAL APPEND PROPERTY AXLE_PACKAGE_DEPENDENCIES
#                "LLVM CONFIG HINTS ${LLVM_DIR}")
# tests/install_test.sh fails (the consumer's configure names the missing
# target) when one is forgotten.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(AXLE_LIBRARIES GLOBAL PROPERTY AXLE_LIBRARIES)
set_property(GLOBAL APPEND PROPERTY AXLE_PACKAGE_DEPENDENCIES "absl CONFIG" "Threads")
get_property(axle_package_dependencies GLOBAL PROPERTY AXLE_PACKAGE_DEPENDENCIES)
list(REMOVE_DUPLICATES axle_package_dependencies)

# The umbrella target. The build's global link options (the sanitizers of
# AXLE_SANITIZE / AXLE_FUZZ) are part of the interface: code built with them
# only links with them.
add_library(axle INTERFACE)
add_library(Axle::axle ALIAS axle)
target_link_libraries(axle INTERFACE ${AXLE_LIBRARIES})
target_include_directories(axle INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/compat/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
get_directory_property(axle_link_options DIRECTORY ${PROJECT_SOURCE_DIR} LINK_OPTIONS)
if(axle_link_options)
  target_link_options(axle INTERFACE ${axle_link_options})
endif()

install(TARGETS ${AXLE_LIBRARIES} axle EXPORT AxleTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT AxleTargets NAMESPACE Axle::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Axle)

set(AXLE_FIND_DEPENDENCIES "")
foreach(dependency IN LISTS axle_package_dependencies)
  string(APPEND AXLE_FIND_DEPENDENCIES "find_dependency(${dependency})\n")
endforeach()
configure_package_config_file(cmake/AxleConfig.cmake.in
  ${PROJECT_BINARY_DIR}/AxleConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Axle)
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/AxleConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/AxleConfig.cmake ${PROJECT_BINARY_DIR}/AxleConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Axle)

set(axle_header_dirs "")
foreach(library IN LISTS AXLE_LIBRARIES)
  get_target_property(library_dir ${library} SOURCE_DIR)
  file(RELATIVE_PATH library_dir ${PROJECT_SOURCE_DIR} ${library_dir})
  list(APPEND axle_header_dirs ${library_dir})
endforeach()
list(REMOVE_DUPLICATES axle_header_dirs)
install(CODE "set(AXLE_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
set(AXLE_HEADER_DIRS \"${axle_header_dirs}\")
include(\"${CMAKE_CURRENT_LIST_DIR}/AxleInstallHeaders.cmake\")")

# Every executable defined in tools/.
get_property(axle_tool_targets DIRECTORY ${PROJECT_SOURCE_DIR}/tools PROPERTY BUILDSYSTEM_TARGETS)
foreach(tool IN LISTS axle_tool_targets)
  get_target_property(tool_type ${tool} TYPE)
  if(tool_type STREQUAL "EXECUTABLE")
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
