#include <fmt/format.h>

#include <tropical/context.hpp>
#include <tropical/device_buffer.hpp>
#include <tropical/error.hpp>
#include "context/scoped_context.hpp"
#include "driver/cuda_driver.hpp"
#include "driver/dropped_result.hpp"

namespace tropical::detail {

DeviceAllocation::DeviceAllocation(std::size_t bytes, int device)
    : memory_(nullptr, DeviceFree{device}), bytes_(bytes), device_(device) {
    if (bytes == 0) return;
    auto& context = CudaContext::for_device(device);
    ScopedContext current(context.primary_context());
    CUdeviceptr pointer = 0;
    if (const CUresult r = driver().cuMemAlloc(&pointer, bytes); r != CUDA_SUCCESS) {
        if (r == CUDA_ERROR_OUT_OF_MEMORY) {
            std::size_t free = 0, total = 0;
            driver().cuMemGetInfo(&free, &total);
            throw OutOfMemory(fmt::format("cannot allocate {} bytes on CUDA device {}: {} of {} bytes are free", bytes,
                                          device, free, total),
                              r);
        }
        throw_cuda_error(r, "cuMemAlloc(&pointer, bytes)", __FILE__, __LINE__);
    }
    memory_.reset(reinterpret_cast<void*>(pointer));
}

void DeviceFree::operator()(void* pointer) const noexcept {
    // The driver may be shutting down at process exit; a failed free then is no news. Any other
    // failure is reported in debug builds (driver/dropped_result.hpp).
    try {
        ScopedContext current(CudaContext::for_device(device).primary_context());
        TROPICAL_CU_DROPPED(cuMemFree(reinterpret_cast<CUdeviceptr>(pointer)));
    } catch (const std::exception& e) {
        report_dropped(e, __FILE__, __LINE__);
    } catch (...) {
    }
}

void DeviceAllocation::copy_from_host(const void* source, std::size_t bytes, std::size_t offset) {
    if (bytes == 0) return;
    if (offset > bytes_ || bytes > bytes_ - offset)
        throw InvalidArgument(
            fmt::format("upload of {} bytes at offset {} overflows a buffer of {} bytes", bytes, offset, bytes_));
    ScopedContext current(CudaContext::for_device(device_).primary_context());
    TROPICAL_CU(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(data()) + offset, source, bytes));
    // From pageable memory the copy returns once the bytes are staged, before the DMA lands: a launch
    // on a non-blocking stream right after it could read part of the old contents (a graph replay in
    // graph_capture_gpu_test did, under load). The upload is documented synchronous, so it waits.
    TROPICAL_CU(cuCtxSynchronize());
}

void DeviceAllocation::copy_to_host(void* destination, std::size_t bytes, std::size_t offset) const {
    if (bytes == 0) return;
    if (offset > bytes_ || bytes > bytes_ - offset)
        throw InvalidArgument(
            fmt::format("download of {} bytes at offset {} overflows a buffer of {} bytes", bytes, offset, bytes_));
    ScopedContext current(CudaContext::for_device(device_).primary_context());
    TROPICAL_CU(cuMemcpyDtoH(destination, reinterpret_cast<CUdeviceptr>(data()) + offset, bytes));
}

void DeviceAllocation::fill_bytes(unsigned char value) {
    if (bytes_ == 0) return;
    ScopedContext current(CudaContext::for_device(device_).primary_context());
    TROPICAL_CU(cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(data()), value, bytes_, nullptr));
    TROPICAL_CU(cuCtxSynchronize());
}

}  // namespace tropical::detail
