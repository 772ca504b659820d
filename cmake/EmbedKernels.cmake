# Joins the device code (kernels/kernel_params.h and kernels/*.cuh, in the order given) into one C
# array, so that the library carries its kernel source and never reads it from disk at run time.
# Each piece starts with a #line directive that names its file, so that NVRTC's messages point at
# the real line. Script mode:
#   cmake "-DINPUTS=a.cuh;b.cuh" -DROOT=<project root> -DOUTPUT=out.cpp -DSYMBOL=name -P EmbedKernels.cmake
set(joined "")
foreach(input IN LISTS INPUTS)
  file(RELATIVE_PATH name "${ROOT}" "${input}")
  file(READ "${input}" piece)
  string(APPEND joined "#line 1 \"${name}\"\n${piece}")
endforeach()
# As hex, so that any byte survives; a C array rather than a string literal, which compilers limit.
string(HEX "${joined}" content)
string(LENGTH "${content}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${content}")
# Break the one long line every 16 bytes to keep compilers and editors comfortable.
string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
     "// Generated from kernels/ by cmake/EmbedKernels.cmake; do not edit.\n"
     "extern \"C\" const char ${SYMBOL}[] = {\n${bytes}'\\0'};\n"
     "extern \"C\" const unsigned long long ${SYMBOL}_size = ${size};\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
