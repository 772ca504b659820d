#include "gemm/device_check.hpp"

#include <fmt/format.h>

#include "driver/cuda_driver.hpp"

namespace tropical::detail {

int device_of(const ValidatedRequest& v) {
    int device = -1;
    const char* first = nullptr;
    for (int i = 0; i < v.operand_count; ++i) {
        const auto& u = v.operands[i];
        if (u.ref->data == nullptr) continue;  // empty operands were allowed to be null
        unsigned int memory_type = 0;
        int ordinal = -1;
        CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
        void* values[] = {&memory_type, &ordinal};
        const CUresult r =
            driver().cuPointerGetAttributes(2, attributes, values, reinterpret_cast<CUdeviceptr>(u.ref->data));
        if (r != CUDA_SUCCESS || (memory_type != CU_MEMORYTYPE_DEVICE && memory_type != CU_MEMORYTYPE_UNIFIED))
            throw InvalidArgument(fmt::format(
                "{} ({}) is not device memory{}: tropical-gemm reads and writes GPU memory only; allocate it with "
                "cudaMalloc/cuMemAlloc (or use a CUDA tensor) and copy the data there",
                u.name, u.ref->data, memory_type == CU_MEMORYTYPE_HOST ? " but pinned host memory" : ""));
        if (device < 0) {
            device = ordinal;
            first = u.name;
        } else if (ordinal != device) {
            throw InvalidArgument(
                fmt::format("{} is on CUDA device {} but {} is on device {}: all operands of one "
                            "product must be on the same device",
                            u.name, ordinal, first, device));
        }
    }
    return device < 0 ? 0 : device;
}

void check_stream(CUstream stream, const CudaContext& context) {
    if (stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) return;
    CUcontext owner = nullptr;
    if (const CUresult r = driver().cuStreamGetCtx(stream, &owner); r != CUDA_SUCCESS)
        throw InvalidArgument(
            fmt::format("options.stream ({}) is not a usable CUDA stream ({}): was it destroyed? "
                        "Pass a live stream, or nullptr for the default stream",
                        static_cast<void*>(stream), describe(r)));
    if (owner != context.primary_context())
        throw InvalidArgument(fmt::format(
            "options.stream ({}) belongs to another CUDA context than the primary context of device {}, where the "
            "operands are and where tropical-gemm runs (as the CUDA runtime and PyTorch do); create the stream on "
            "device {} with cudaStreamCreate, or with cuStreamCreate while the primary context is current",
            static_cast<void*>(stream), context.ordinal(), context.ordinal()));
}

}  // namespace tropical::detail
