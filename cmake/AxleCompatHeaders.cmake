# The forwarding headers of compat/include, generated from one list,
# compat/headers.txt: each line gives xla/<path> and
# tensorflow/compiler/xla/<path>, both including the same Axle header.
#
# As a script (writes the tree; CHECK=ON only compares, for the test):
#   cmake -DAXLE_SOURCE_DIR=<source> [-DCHECK=ON] -P cmake/AxleCompatHeaders.cmake
# Included: defines axle_compat_headers(<out-var>), the list of every
# forwarding header's path under compat/include.

cmake_policy(VERSION 3.25)

# Parses compat/headers.txt into parallel lists in the caller's scope:
# <prefix>_PATHS, <prefix>_TARGETS, <prefix>_KINDS, <prefix>_NOTES.
function(axle_compat_read_list source_dir prefix)
  file(STRINGS "${source_dir}/compat/headers.txt" lines)
  set(paths "")
  set(targets "")
  set(kinds "")
  set(notes "")
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(line MATCHES "^[ \t]*(#|$)")
      continue()
    endif()
    if(NOT line MATCHES "^(xla/[^ \t]+\\.h)[ \t]+([^ \t]+\\.h)[ \t]+(c|xla|se)([ \t]+(.*))?$")
      message(FATAL_ERROR "compat/headers.txt:${number}: expected "
                          "'xla/<path>.h <axle header> c|xla|se [note]', got '${line}'")
    endif()
    list(APPEND paths "${CMAKE_MATCH_1}")
    list(APPEND targets "${CMAKE_MATCH_2}")
    list(APPEND kinds "${CMAKE_MATCH_3}")
    # A note may not hold list separators; "-" stands for none (an empty
    # element would be lost).
    string(REPLACE ";" "," note "${CMAKE_MATCH_5}")
    if(note STREQUAL "")
      set(note "-")
    endif()
    list(APPEND notes "${note}")
    if(NOT EXISTS "${source_dir}/${CMAKE_MATCH_2}")
      message(FATAL_ERROR "compat/headers.txt:${number}: ${CMAKE_MATCH_2} does not exist")
    endif()
  endforeach()
  set(${prefix}_PATHS "${paths}" PARENT_SCOPE)
  set(${prefix}_TARGETS "${targets}" PARENT_SCOPE)
  set(${prefix}_KINDS "${kinds}" PARENT_SCOPE)
  set(${prefix}_NOTES "${notes}" PARENT_SCOPE)
endfunction()

# The text of the forwarding header at `path` (under compat/include).
function(axle_compat_header_text path target kind note out_var)
  string(TOUPPER "AXLE_COMPAT_${path}_" guard)
  string(REGEX REPLACE "[/.]" "_" guard "${guard}")
  set(text "// Compatibility header: XLA's ${path}.\n")
  if(NOT note STREQUAL "-")
    string(APPEND text "// ${note}.\n")
  endif()
  string(APPEND text "// Generated from compat/headers.txt by cmake/AxleCompatHeaders.cmake.\n")
  string(APPEND text "#ifndef ${guard}\n#define ${guard}\n\n#include \"${target}\"\n")
  if(kind STREQUAL "xla" OR kind STREQUAL "se")
    string(APPEND text "\nnamespace xla {\n"
                       "using namespace ::axle;  // NOLINT: the XLA-compatible surface is Axle's\n"
                       "}  // namespace xla\n")
  endif()
  if(kind STREQUAL "se")
    string(APPEND text "\n// StreamExecutor's namespace, and XLA's `se` alias for it.\n"
                       "namespace stream_executor = ::axle::se;\n")
  endif()
  string(APPEND text "\n#endif  // ${guard}\n")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# Every forwarding header's path under compat/include, both trees.
function(axle_compat_headers out_var)
  axle_compat_read_list("${PROJECT_SOURCE_DIR}" compat)
  set(headers "")
  foreach(path IN LISTS compat_PATHS)
    list(APPEND headers "${path}" "tensorflow/compiler/${path}")
  endforeach()
  set(${out_var} "${headers}" PARENT_SCOPE)
endfunction()

# Script mode: write (or, CHECK=ON, compare) compat/include.
if(CMAKE_SCRIPT_MODE_FILE AND CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(NOT AXLE_SOURCE_DIR)
    message(FATAL_ERROR "set -DAXLE_SOURCE_DIR=<the source tree>")
  endif()
  get_filename_component(AXLE_SOURCE_DIR "${AXLE_SOURCE_DIR}" ABSOLUTE)
  set(root "${AXLE_SOURCE_DIR}/compat/include")
  axle_compat_read_list("${AXLE_SOURCE_DIR}" compat)
  list(LENGTH compat_PATHS count)
  math(EXPR last "${count} - 1")
  set(expected "")
  set(problems "")
  foreach(i RANGE ${last})
    list(GET compat_PATHS ${i} path)
    list(GET compat_TARGETS ${i} target)
    list(GET compat_KINDS ${i} kind)
    list(GET compat_NOTES ${i} note)
    foreach(tree_path IN ITEMS "${path}" "tensorflow/compiler/${path}")
      axle_compat_header_text("${tree_path}" "${target}" "${kind}" "${note}" text)
      list(APPEND expected "${tree_path}")
      set(file "${root}/${tree_path}")
      set(current "")
      if(EXISTS "${file}")
        file(READ "${file}" current)
      endif()
      if(NOT current STREQUAL text)
        if(CHECK)
          list(APPEND problems "compat/include/${tree_path} is missing or out of date")
        else()
          file(WRITE "${file}" "${text}")
        endif()
      endif()
    endforeach()
  endforeach()
  # Headers the list does not name.
  file(GLOB_RECURSE present RELATIVE "${root}" "${root}/*")
  foreach(file IN LISTS present)
    if(NOT file IN_LIST expected)
      if(CHECK)
        list(APPEND problems "compat/include/${file} is not in compat/headers.txt")
      else()
        file(REMOVE "${root}/${file}")
      endif()
    endif()
  endforeach()
  if(problems)
    list(JOIN problems "\n  " text)
    message(FATAL_ERROR "compat/include does not match compat/headers.txt:\n  ${text}\n"
                        "Run: cmake -DAXLE_SOURCE_DIR=. -P cmake/AxleCompatHeaders.cmake")
  endif()
endif()
