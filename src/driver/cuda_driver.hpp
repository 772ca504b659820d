#pragma once
// The CUDA driver API, opened at run time so that the library loads on machines without a GPU.
// Every entry point is fetched with cuGetProcAddress at the ABI of CUDA 12.0, the oldest driver
// we support; the PFN types below are the versions that ABI hands out.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>
#include <vector>

namespace tropical::detail {

#define TROPICAL_DRIVER_FUNCTIONS(X)            \
    X(cuInit, 2000)                             \
    X(cuDriverGetVersion, 2020)                 \
    X(cuGetErrorName, 6000)                     \
    X(cuGetErrorString, 6000)                   \
    X(cuDeviceGetCount, 2000)                   \
    X(cuDeviceGet, 2000)                        \
    X(cuDeviceGetName, 2000)                    \
    X(cuDeviceGetAttribute, 2000)               \
    X(cuDevicePrimaryCtxRetain, 7000)           \
    X(cuDevicePrimaryCtxRelease, 11000)         \
    X(cuCtxCreate, 11040)                       \
    X(cuCtxDestroy, 4000)                       \
    X(cuCtxGetCurrent, 4000)                    \
    X(cuCtxSetCurrent, 4000)                    \
    X(cuCtxPushCurrent, 4000)                   \
    X(cuCtxPopCurrent, 4000)                    \
    X(cuCtxGetDevice, 2000)                     \
    X(cuCtxSynchronize, 2000)                   \
    X(cuModuleLoadData, 2000)                   \
    X(cuModuleUnload, 2000)                     \
    X(cuModuleGetFunction, 2000)                \
    X(cuFuncSetAttribute, 9000)                 \
    X(cuFuncGetAttribute, 2020)                 \
    X(cuLaunchKernel, 4000)                     \
    X(cuMemAlloc, 3020)                         \
    X(cuMemFree, 3020)                          \
    X(cuMemGetInfo, 3020)                       \
    X(cuMemcpyHtoD, 3020)                       \
    X(cuMemcpyDtoH, 3020)                       \
    X(cuMemcpyDtoD, 3020)                       \
    X(cuMemcpyHtoDAsync, 3020)                  \
    X(cuMemcpyDtoHAsync, 3020)                  \
    X(cuMemsetD8Async, 3020)                    \
    X(cuMemsetD32Async, 3020)                   \
    X(cuMemsetD2D32Async, 3020)                 \
    X(cuPointerGetAttributes, 7000)             \
    X(cuStreamCreate, 2000)                     \
    X(cuStreamDestroy, 4000)                    \
    X(cuStreamSynchronize, 2000)                \
    X(cuStreamGetCtx, 9020)                     \
    X(cuEventCreate, 2000)                      \
    X(cuEventDestroy, 4000)                     \
    X(cuEventRecord, 2000)                      \
    X(cuEventSynchronize, 2000)                 \
    X(cuEventElapsedTime, 2000)                 \
    X(cuThreadExchangeStreamCaptureMode, 10010) \
    X(cuStreamBeginCapture, 10010)              \
    X(cuStreamEndCapture, 10000)                \
    X(cuStreamIsCapturing, 10000)               \
    X(cuGraphInstantiateWithFlags, 11040)       \
    X(cuGraphLaunch, 10000)                     \
    X(cuGraphExecDestroy, 10000)                \
    X(cuGraphDestroy, 10000)                    \
    X(cuGraphGetNodes, 10000)                   \
    X(cuGraphNodeGetType, 10000)

struct DriverApi {
#define TROPICAL_DECLARE(name, version) PFN_##name##_v##version name = nullptr;
    TROPICAL_DRIVER_FUNCTIONS(TROPICAL_DECLARE)
#undef TROPICAL_DECLARE
    std::string library_path;
};

// The environment variable that names libcuda.so.1 explicitly.
inline constexpr const char* kDriverPathVariable = "TROPICAL_GEMM_CUDA_DRIVER";

// Loads the driver from `override_path` if non-empty, else the system loader's libcuda.so.1, and
// calls cuInit. Throws NoDriver naming the library, the places tried and the override variable.
DriverApi load_driver(const std::string& override_path);

// The process-wide driver, loaded on first use (from $TROPICAL_GEMM_CUDA_DRIVER if set). A failure
// is remembered and rethrown, so that the message stays the same on every call.
const DriverApi& driver();

// "CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)"
std::string describe(CUresult result);

// Throws the Error subclass matching `result`, with "file:line: call failed: description".
[[noreturn]] void throw_cuda_error(CUresult result, const char* call, const char* file, int line);

}  // namespace tropical::detail

// Checks a driver call: TROPICAL_CU(cuMemAlloc(&ptr, bytes)) calls driver().cuMemAlloc(...).
#define TROPICAL_CU(call)                                                                         \
    do {                                                                                          \
        const CUresult tropical_cu_result_ = ::tropical::detail::driver().call;                   \
        if (tropical_cu_result_ != CUDA_SUCCESS)                                                  \
            ::tropical::detail::throw_cuda_error(tropical_cu_result_, #call, __FILE__, __LINE__); \
    } while (0)
