/* Every status a tropical-gemm call can end with, in one list: the C ABI's tropical_status
 * (tropical/c_api.h), the C++ tropical::Status (tropical/error.hpp), their names and the Python
 * package's exceptions are all made from it.
 *
 * X(C suffix, C++ name, value, words)
 *   SUCCESS           the call did what it was asked
 *   INVALID_ARGUMENT  shapes, layouts, pointers or options that cannot work
 *   UNSUPPORTED       a valid request this library does not implement (e.g. backward for integers)
 *   OUT_OF_MEMORY     device (or host) memory ran out
 *   NO_DRIVER         libcuda.so.1 could not be loaded
 *   NO_DEVICE         the driver loaded but there is no such (or no) CUDA device
 *   NO_COMPILER       NVRTC could not be loaded, and a kernel had to be compiled
 *   COMPILE_ERROR     NVRTC rejected a kernel
 *   CUDA_ERROR        any other failure reported by the CUDA driver
 *   INTERNAL_ERROR    a defect of the library */
#ifndef TROPICAL_STATUS_H
#define TROPICAL_STATUS_H

#define TROPICAL_STATUS_LIST(X)                                 \
    X(SUCCESS, Success, 0, "success")                           \
    X(INVALID_ARGUMENT, InvalidArgument, 1, "invalid argument") \
    X(UNSUPPORTED, Unsupported, 2, "unsupported")               \
    X(OUT_OF_MEMORY, OutOfMemory, 3, "out of memory")           \
    X(NO_DRIVER, NoDriver, 4, "no CUDA driver")                 \
    X(NO_DEVICE, NoDevice, 5, "no CUDA device")                 \
    X(NO_COMPILER, NoCompiler, 6, "no NVRTC")                   \
    X(COMPILE_ERROR, CompileError, 7, "compile error")          \
    X(CUDA_ERROR, CudaError, 8, "CUDA error")                   \
    X(INTERNAL_ERROR, Internal, 9, "internal error")

#endif /* TROPICAL_STATUS_H */
