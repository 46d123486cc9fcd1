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
# are exported as $<LINK_ONLY:dep>). AxleConfig.cmake runs find_dependency()
# for the package of each: axle_package_of() below maps link names to
# packages (abseil, Threads, LLVM, oneDNN, LAPACK, Gloo). A library linking a
# package the table lacks gets a configure warning: add a row there. (The global property
# AXLE_PACKAGE_DEPENDENCIES, one find_dependency() argument list per entry,
# adds packages by hand.) tests/install_test.sh fails when one is missing: the
# consumer's configure names the target it cannot find.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(AXLE_LIBRARIES GLOBAL PROPERTY AXLE_LIBRARIES)

# The find_dependency() arguments that define the link item `item` ("" when
# it needs none); `known` is set false for an item of an unknown package.
function(axle_package_of item out_package out_known)
  set(known TRUE)
  set(package "")
  if(item IN_LIST AXLE_LIBRARIES OR item MATCHES "^-")
    # Axle's own library or a linker flag: nothing to find.
  elseif(item MATCHES "^absl::")
    set(package "absl CONFIG")
  elseif(item MATCHES "^Threads::")
    set(package "Threads")
  elseif(item MATCHES "^LLVM")
    set(package "LLVM CONFIG HINTS ${LLVM_DIR}")
  elseif(item MATCHES "^DNNL::")
    set(package "dnnl CONFIG HINTS ${dnnl_DIR}")
  elseif(item MATCHES "^LAPACK::")
    set(package "LAPACK")
  elseif(item STREQUAL "gloo")
    set(package "Gloo CONFIG")
  elseif(item STREQUAL "MPI::MPI_C")
    set(package "MPI COMPONENTS C")
  elseif(item MATCHES "::")
    set(known FALSE)
  endif()
  set(${out_package} "${package}" PARENT_SCOPE)
  set(${out_known} ${known} PARENT_SCOPE)
endfunction()

set(axle_package_dependencies "")
foreach(library IN LISTS AXLE_LIBRARIES)
  get_target_property(direct ${library} LINK_LIBRARIES)
  get_target_property(interface ${library} INTERFACE_LINK_LIBRARIES)
  foreach(item IN LISTS direct interface)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" item "${item}")
    if(NOT item OR item MATCHES "-NOTFOUND$")
      continue()
    endif()
    axle_package_of("${item}" package known)
    if(NOT known)
      message(WARNING "${library} links ${item}, of a package AxleConfig.cmake does not find "
                      "for users: add it to axle_package_of() in cmake/AxleInstall.cmake")
    endif()
    list(APPEND axle_package_dependencies ${package})
  endforeach()
endforeach()
get_property(axle_extra_dependencies GLOBAL PROPERTY AXLE_PACKAGE_DEPENDENCIES)
list(APPEND axle_package_dependencies ${axle_extra_dependencies})
list(REMOVE_DUPLICATES axle_package_dependencies)

# The umbrella target. The build's global link options (the sanitizers of
# AXLE_SANITIZE / AXLE_TSAN / AXLE_FUZZ) are part of the interface: code built with them
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

# Opt-in for a user's executable: libgomp is shown one CPU while it starts,
# so that its workers spin only briefly after each of oneDNN's parallel
# regions (axle/cpu/runtime/omp_team.h). Axle's own programs always have it;
# linking Axle::axle alone leaves a user's OpenMP behaviour as it was.
add_library(axle_omp_throttle INTERFACE)
add_library(Axle::omp_throttle ALIAS axle_omp_throttle)
target_link_libraries(axle_omp_throttle INTERFACE axle)
target_link_options(axle_omp_throttle INTERFACE "LINKER:--undefined=axle_omp_preinit_anchor")

install(TARGETS ${AXLE_LIBRARIES} axle axle_omp_throttle EXPORT AxleTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT AxleTargets NAMESPACE Axle::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Axle)

set(AXLE_FIND_DEPENDENCIES "")
foreach(dependency IN LISTS axle_package_dependencies)
  # FindMPI's C component needs the C language, which a C++-only user
  # project has not enabled.
  if(dependency MATCHES "^MPI COMPONENTS C")
    string(APPEND AXLE_FIND_DEPENDENCIES
           "if(NOT CMAKE_C_COMPILER_LOADED)\n  enable_language(C)\nendif()\n")
  endif()
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

# Every executable defined in tools/ but its tests (*_test); the installed
# ones find the shared libraries they link (e.g. LLVM's) where the build
# found them.
get_property(axle_tool_targets DIRECTORY ${PROJECT_SOURCE_DIR}/tools PROPERTY BUILDSYSTEM_TARGETS)
foreach(tool IN LISTS axle_tool_targets)
  get_target_property(tool_type ${tool} TYPE)
  if(tool_type STREQUAL "EXECUTABLE" AND NOT tool MATCHES "_test$")
    set_target_properties(${tool} PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
