# Turns a file into a C array, so that the library carries its kernel source and never reads it
# from disk at run time. Script mode:
#   cmake -DINPUT=kernels/tropical_gemm.cu -DOUTPUT=out.cpp -DSYMBOL=name -P EmbedFile.cmake
file(READ "${INPUT}" content HEX)
string(LENGTH "${content}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${content}")
# Break the one long line every 16 bytes to keep compilers and editors comfortable.
string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
     "// Generated from ${INPUT} by cmake/EmbedFile.cmake; do not edit.\n"
     "extern \"C\" const char ${SYMBOL}[] = {\n${bytes}'\\0'};\n"
     "extern \"C\" const unsigned long long ${SYMBOL}_size = ${size};\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
