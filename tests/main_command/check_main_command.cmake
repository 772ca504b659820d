# main_command_test: the README's main command, `cmake -S . -B build -G Ninja && cmake --build build
# --target all_pairs_shortest_paths`, builds the library and that one example, no test, benchmark,
# tool or other example (issue 18: it built 107 targets to run one). Cheap: a fresh configure, then
# Ninja lists the commands that target needs (`ninja -t commands`, which builds nothing) and the
# targets whose objects they compile are checked. (`ninja -n` cannot stand in: the project's
# CONFIGURE_DEPENDS globs make a dry run stop at "Re-running CMake".)
#
#   cmake -DSOURCE_DIR=<project> -DWORK_DIR=<scratch folder> [-DPREFIX_PATH=<a|b|c>]
#         [-DNINJA=<ninja>] [-DCXX_COMPILER=...] [-DCUDA_ROOT=...] -P check_main_command.cmake
#
# PREFIX_PATH is the main build's CMAKE_PREFIX_PATH with '|' for ';' (for an offline build's .deps/);
# it, the C++ compiler and the CUDA toolkit's root are what the main build was given, so that the
# fresh configure finds what it found. Without Ninja (a build made with Makefiles on a machine that
# lacks it), the README's command cannot run: the test says "Skipped: ..." (its
# SKIP_REGULAR_EXPRESSION).
cmake_minimum_required(VERSION 3.25)

foreach(required SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "check_main_command.cmake needs -D${required}=...")
  endif()
endforeach()
if(NOT NINJA)
  find_program(NINJA NAMES ninja ninja-build)
  if(NOT NINJA)
    message("Skipped: no ninja here, which the README's main command (-G Ninja) needs")
    return()
  endif()
endif()

set(example all_pairs_shortest_paths)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# The README's configure step, as written, in a fresh folder.
set(configure ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${build} -G Ninja -DCMAKE_MAKE_PROGRAM=${NINJA})
if(PREFIX_PATH)
  string(REPLACE "|" ";" prefix_path "${PREFIX_PATH}")
  list(APPEND configure "-DCMAKE_PREFIX_PATH=${prefix_path}")
endif()
if(CXX_COMPILER)
  list(APPEND configure -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(CUDA_ROOT)
  list(APPEND configure -DCUDAToolkit_ROOT=${CUDA_ROOT})
endif()
execute_process(COMMAND ${configure} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the README's configure step failed (${result}):\n${output}")
endif()

# The commands that building `target` would run, and the CMake targets whose objects they compile
# (".../CMakeFiles/<target>.dir/..."), each once, sorted.
function(compiled_targets target out_commands out_targets)
  execute_process(COMMAND ${NINJA} -C ${build} -t commands ${target} RESULT_VARIABLE result
                  OUTPUT_VARIABLE commands ERROR_VARIABLE error)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "ninja -t commands ${target} failed (${result}):\n${error}")
  endif()
  string(REGEX MATCHALL "CMakeFiles/[A-Za-z0-9_.+-]+\\.dir/" dirs "${commands}")
  set(targets)
  foreach(dir IN LISTS dirs)
    string(REGEX REPLACE "^CMakeFiles/(.*)\\.dir/$" "\\1" name "${dir}")
    list(APPEND targets ${name})
  endforeach()
  list(REMOVE_DUPLICATES targets)
  list(SORT targets)
  set(${out_commands} "${commands}" PARENT_SCOPE)
  set(${out_targets} "${targets}" PARENT_SCOPE)
endfunction()

# Not vacuous: the whole build does compile tests and benchmarks, which this parse finds.
compiled_targets(all all_commands all_targets)
foreach(expected cpu_gemm_test cpu_bench ${example})
  if(NOT expected IN_LIST all_targets)
    message(FATAL_ERROR "the whole build's commands compile no '${expected}', so this check would "
                        "prove nothing; targets found: ${all_targets}")
  endif()
endforeach()

# The main command: the library and the example, nothing else.
compiled_targets(${example} commands targets)
set(allowed tropical_gemm ${example})
set(extra ${targets})
list(REMOVE_ITEM extra ${allowed})
if(extra)
  message(FATAL_ERROR "`cmake --build build --target ${example}` would also compile: ${extra} "
                      "(only ${allowed} expected). Its commands:\n${commands}")
endif()
if(NOT ${example} IN_LIST targets OR NOT tropical_gemm IN_LIST targets)
  message(FATAL_ERROR "`cmake --build build --target ${example}` compiles ${targets}, not the library "
                      "and the example")
endif()
# Nothing linked but the library and the example (a test linked from objects named otherwise would
# show here).
string(REGEX MATCHALL " -o [^ \n]+" outputs "${commands}")
foreach(output IN LISTS outputs)
  string(REGEX REPLACE "^ -o " "" output "${output}")
  if(NOT output MATCHES "\\.o$" AND NOT output MATCHES "^examples/${example}$" AND NOT output MATCHES "libtropical_gemm")
    message(FATAL_ERROR "`cmake --build build --target ${example}` would also produce ${output}")
  endif()
endforeach()
list(LENGTH all_targets all_count)
message(STATUS "`cmake --build build --target ${example}` compiles ${targets}, of the ${all_count} "
               "targets the whole build compiles")
file(REMOVE_RECURSE ${WORK_DIR})
