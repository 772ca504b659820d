# Copies the parameter structs out of kernels/tropical_gemm.cu into a C++ header, so that a test can
# compare their layout, as the host compiler lays them out (CUDA guarantees host and device agree),
# with the host's mirror in src/gemm/kernel_params.hpp. Script mode: -DINPUT=... -DOUTPUT=...
file(READ "${INPUT}" source)
set(body "")
foreach(name TgOperand TgGemmParams TgBackwardParams)
  string(REGEX MATCH "struct ${name} {[^}]*};" definition "${source}")
  if(NOT definition)
    message(FATAL_ERROR "${INPUT} has no definition of struct ${name}")
  endif()
  string(APPEND body "${definition}\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from ${INPUT} by cmake/ExtractKernelParams.cmake; do not edit.\n#pragma once\n"
     "namespace tropical::device_side {\n${body}}  // namespace tropical::device_side\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
