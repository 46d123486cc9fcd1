# Installs Axle's headers; included by `cmake --install` (see AxleInstall.cmake)
# at install time, so the selection always matches the sources. Set before:
#   AXLE_SOURCE_DIR    the source tree
#   AXLE_HEADER_DIRS   the folders (relative to it) that define the installed
#                      libraries, e.g. axle/base;axle/hlo
#
#   <prefix>/include/axle/...   every *.h under AXLE_HEADER_DIRS except test
#                               helpers (*_test.h, *test_util.h), *_internal.h
#                               and headers that include LLVM's, cuda.h or nccl.h, or
#                               such a header (a backend's internals), plus
#                               every file the
#                               selected headers include (transitively),
#                               whatever it is
#   <prefix>/include/...        compat/include/** (XLA's include paths), and
#                               what they include the same way

# include() gives this file its own policy scope.
cmake_policy(VERSION 3.25)

function(axle_install_headers)
  set(test_regex "(_test|test_util)\\.h$")

  set(candidates "")
  foreach(dir IN LISTS AXLE_HEADER_DIRS)
    file(GLOB_RECURSE dir_headers RELATIVE "${AXLE_SOURCE_DIR}" "${AXLE_SOURCE_DIR}/${dir}/*.h")
    list(APPEND candidates ${dir_headers})
  endforeach()
  list(REMOVE_DUPLICATES candidates)
  set(axle_headers "")
  set(excluded "")
  foreach(header IN LISTS candidates)
    if(header MATCHES "${test_regex}" OR header MATCHES "_internal\\.h$")
      continue()
    endif()
    file(STRINGS "${AXLE_SOURCE_DIR}/${header}" llvm_includes
         REGEX "^[ \t]*#[ \t]*include[ \t]+([\"<]llvm/|<cuda\\.h>|<nccl\\.h>)")
    if(llvm_includes)
      list(APPEND excluded "${header}")
    else()
      list(APPEND axle_headers "${header}")
    endif()
  endforeach()
  # A header that includes an excluded one (gemm_thunk.h includes
  # gpu_thunk.h, which includes cuda.h) is a backend internal too.
  set(changed TRUE)
  while(changed)
    set(changed FALSE)
    set(kept "")
    foreach(header IN LISTS axle_headers)
      file(STRINGS "${AXLE_SOURCE_DIR}/${header}" includes
           REGEX "^[ \t]*#[ \t]*include[ \t]+\"axle/")
      set(internal FALSE)
      foreach(line IN LISTS includes)
        string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" included "${line}")
        if(included IN_LIST excluded)
          set(internal TRUE)
        endif()
      endforeach()
      if(internal)
        list(APPEND excluded "${header}")
        set(changed TRUE)
      else()
        list(APPEND kept "${header}")
      endif()
    endforeach()
    set(axle_headers "${kept}")
  endwhile()
  file(GLOB_RECURSE compat_headers RELATIVE "${AXLE_SOURCE_DIR}/compat/include"
       "${AXLE_SOURCE_DIR}/compat/include/*.h")

  # The transitive closure of `#include "axle/..."` from the selected headers.
  set(worklist "${axle_headers}")
  foreach(header IN LISTS compat_headers)
    list(APPEND worklist "compat/include/${header}")
  endforeach()
  while(worklist)
    list(POP_FRONT worklist current)
    file(STRINGS "${AXLE_SOURCE_DIR}/${current}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"axle/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[^\"]*\"([^\"]+)\".*$" "\\1" included "${line}")
      if(EXISTS "${AXLE_SOURCE_DIR}/${included}" AND NOT included IN_LIST axle_headers)
        if(included MATCHES "${test_regex}")
          message(FATAL_ERROR "${current} includes the test helper ${included}, which is not installed")
        endif()
        list(APPEND axle_headers "${included}")
        list(APPEND worklist "${included}")
      endif()
    endforeach()
  endwhile()

  list(SORT axle_headers)
  foreach(header IN LISTS axle_headers)
    get_filename_component(dir "${header}" DIRECTORY)
    file(INSTALL "${AXLE_SOURCE_DIR}/${header}" DESTINATION "${CMAKE_INSTALL_PREFIX}/include/${dir}")
  endforeach()
  foreach(header IN LISTS compat_headers)
    get_filename_component(dir "${header}" DIRECTORY)
    file(INSTALL "${AXLE_SOURCE_DIR}/compat/include/${header}"
         DESTINATION "${CMAKE_INSTALL_PREFIX}/include/${dir}")
  endforeach()
  # file(INSTALL) lists what it installed here; install_manifest.txt is made from it.
  set(CMAKE_INSTALL_MANIFEST_FILES "${CMAKE_INSTALL_MANIFEST_FILES}" PARENT_SCOPE)
endfunction()

axle_install_headers()
