# The layers of src/, checked: every folder of src/ has a tier, and a file may include (with
# #include "folder/...") only its own folder and folders of lower tiers. Folders of one tier are
# siblings and do not include each other, so there is no cycle. ARCHITECTURE.md, "The layers", says
# what each tier is for; change both together.
#   cmake -DSOURCE_DIR=<repository> -P cmake/CheckLayers.cmake
# A CTest test (layers_test) runs it.
cmake_minimum_required(VERSION 3.20)

# Lowest first, the folders of a tier separated by spaces. "reference" is the test oracle: at the top, so that no library folder may include it.
set(tiers
    "util"
    "driver semiring"
    "nvrtc cache catalogue"
    "loader"
    "context"
    "request"
    "gemm cpu"
    "contract"
    "c_api"
    "reference")
# Programs over the public API: they include their own files and tropical/*.hpp, nothing of src/.
set(public_only tools)

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "CheckLayers.cmake: pass -DSOURCE_DIR=<repository root>")
endif()

set(rank 0)
foreach(tier IN LISTS tiers)
  separate_arguments(tier_folders UNIX_COMMAND "${tier}")
  foreach(folder IN LISTS tier_folders)
    set(rank_of_${folder} ${rank})
  endforeach()
  math(EXPR rank "${rank} + 1")
endforeach()

file(GLOB folders RELATIVE ${SOURCE_DIR}/src LIST_DIRECTORIES true ${SOURCE_DIR}/src/*)
set(problems "")
foreach(folder IN LISTS folders)
  if(IS_DIRECTORY ${SOURCE_DIR}/src/${folder} AND NOT DEFINED rank_of_${folder} AND NOT folder IN_LIST public_only)
    string(APPEND problems "\n  src/${folder}/ has no layer: name it in cmake/CheckLayers.cmake and ARCHITECTURE.md")
  endif()
endforeach()

file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR}/src ${SOURCE_DIR}/src/*.cpp ${SOURCE_DIR}/src/*.hpp
     ${SOURCE_DIR}/src/*.h)
foreach(source IN LISTS sources)
  if(NOT source MATCHES "^([^/]+)/")
    continue()  # a file at the top of src/ (error.cpp) includes public headers only
  endif()
  set(own ${CMAKE_MATCH_1})
  file(STRINGS ${SOURCE_DIR}/src/${source} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]+\"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" included "${line}")
    if(NOT included MATCHES "^([^/]+)/")
      continue()  # a file beside it, or kernels/ on the include path (kernel_params.h)
    endif()
    set(target ${CMAKE_MATCH_1})
    if(target STREQUAL own OR (NOT DEFINED rank_of_${target} AND NOT target IN_LIST public_only))
      continue()
    endif()
    if(own IN_LIST public_only)
      string(APPEND problems "\n  src/${source} includes \"${included}\": src/${own}/ uses the public headers only")
    elseif(target IN_LIST public_only OR NOT rank_of_${target} LESS rank_of_${own})
      string(APPEND problems "\n  src/${source} includes \"${included}\": src/${target}/ is not below src/${own}/")
    endif()
  endforeach()
endforeach()

if(problems)
  message(FATAL_ERROR "the layers of src/ are not kept:${problems}")
endif()
list(LENGTH sources count)
message(STATUS "layers: ${count} files of src/ include only their own folder and those below it")
