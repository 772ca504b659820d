# install_consumer_test: install the already-built library into a fresh prefix, then configure,
# build and run tests/consumer against that prefix with find_package, as a user would.
#
#   cmake -DBUILD_DIR=<main build> -DCONSUMER_DIR=<tests/consumer> -DWORK_DIR=<scratch folder>
#         [-DPREFIX_PATH=<a|b|c>] [-DGENERATOR=...] [-DCXX_COMPILER=...] [-DBUILD_TYPE=...]
#         -P run_consumer_test.cmake
#
# PREFIX_PATH is the main build's CMAKE_PREFIX_PATH with '|' for ';' (a list does not survive
# CTest's command line); the install prefix goes in front of it. DEPENDENCY_LIBRARY_DIR is where the
# library's own shared dependency (Highway) lies: a system folder on a Debian install, where it adds
# nothing, or the .deps/ of an offline build (.ci/stage-deps.sh), which neither the linker nor the
# loader searches by themselves, as they would not for a user's own copy either.
cmake_minimum_required(VERSION 3.25)

foreach(required BUILD_DIR CONSUMER_DIR WORK_DIR)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "run_consumer_test.cmake needs -D${required}=...")
  endif()
endforeach()

# Runs a command, echoing it; stops the test with its output on failure.
function(step description)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "${description}: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${description} failed (${result}):\n${output}")
  endif()
  message("${output}")
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

set(install ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
if(BUILD_TYPE)
  list(APPEND install --config ${BUILD_TYPE})
endif()
step("install" ${install})

# CMAKE_PREFIX_PATH goes through the environment (':'-separated), where a list needs no escaping.
set(prefix_path ${prefix})
if(PREFIX_PATH)
  string(REPLACE "|" ";" extra "${PREFIX_PATH}")
  list(APPEND prefix_path ${extra})
endif()
if(DEFINED ENV{CMAKE_PREFIX_PATH} AND NOT "$ENV{CMAKE_PREFIX_PATH}" STREQUAL "")
  string(REPLACE ":" ";" inherited "$ENV{CMAKE_PREFIX_PATH}")
  list(APPEND prefix_path ${inherited})
endif()
string(REPLACE ";" ":" prefix_path_env "${prefix_path}")
set(ENV{CMAKE_PREFIX_PATH} "${prefix_path_env}")
message(STATUS "CMAKE_PREFIX_PATH=${prefix_path_env}")

set(configure ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${consumer_build})
if(GENERATOR)
  list(APPEND configure -G ${GENERATOR})
endif()
if(CXX_COMPILER)
  list(APPEND configure -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(BUILD_TYPE)
  list(APPEND configure -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
endif()
set(run_environment)
if(DEPENDENCY_LIBRARY_DIR)
  list(APPEND configure "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,${DEPENDENCY_LIBRARY_DIR}")
  set(run_environment ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${DEPENDENCY_LIBRARY_DIR}")
endif()
step("configure the consumer" ${configure})
step("build the consumer" ${CMAKE_COMMAND} --build ${consumer_build})

# The consumer must have found the installed package, not the build tree or a system copy.
file(STRINGS ${consumer_build}/CMakeCache.txt found REGEX "^tropical_gemm_DIR:")
string(REGEX REPLACE "^[^=]*=" "" found "${found}")
file(REAL_PATH "${found}" found)
file(REAL_PATH "${prefix}" real_prefix)
string(FIND "${found}" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "the consumer found tropical_gemm in '${found}', not in the install prefix ${prefix}")
endif()
step("run the consumer" ${run_environment} ${consumer_build}/consumer)

file(REMOVE_RECURSE ${WORK_DIR})
