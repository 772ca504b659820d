#pragma once
// Driver calls made where a failure cannot be thrown: destructors and deleters (a context popped, a
// module unloaded, memory freed, a capture mode restored). Their result is dropped in release
// builds; debug builds report a failure on stderr (util/warnings.hpp), except
// CUDA_ERROR_DEINITIALIZED, which is the driver shutting down at process exit: success there, as in
// RMM's safe-shutdown assert. Never throws.
#include <cuda.h>

#include <exception>

#include "driver/cuda_driver.hpp"

namespace tropical::detail {

#ifdef NDEBUG
inline void report_dropped(CUresult, const char*, const char*, int) noexcept {}
inline void report_dropped(const std::exception&, const char*, int) noexcept {}
#else
// `result` of `call`, made at file:line.
void report_dropped(CUresult result, const char* call, const char* file, int line) noexcept;
// An exception a destructor caught and dropped (a CudaError whose code() is CUDA_ERROR_DEINITIALIZED
// counts as success).
void report_dropped(const std::exception& error, const char* file, int line) noexcept;
#endif

}  // namespace tropical::detail

// TROPICAL_CU_DROPPED(cuMemFree(pointer)): calls driver().cuMemFree(pointer), reports a failure in
// debug builds, and goes on.
#define TROPICAL_CU_DROPPED(call) \
    ::tropical::detail::report_dropped(::tropical::detail::driver().call, #call, __FILE__, __LINE__)
