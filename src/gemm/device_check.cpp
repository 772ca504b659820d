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
        const CUresult r = driver().cuPointerGetAttributes(2, attributes, values,
                                                           reinterpret_cast<CUdeviceptr>(u.ref->data));
        if (r != CUDA_SUCCESS || (memory_type != CU_MEMORYTYPE_DEVICE && memory_type != CU_MEMORYTYPE_UNIFIED))
            throw InvalidArgument(fmt::format(
                "{} ({}) is not device memory{}: tropical-gemm reads and writes GPU memory only; allocate it with "
                "cudaMalloc/cuMemAlloc (or use a CUDA tensor) and copy the data there",
                u.name, u.ref->data, memory_type == CU_MEMORYTYPE_HOST ? " but pinned host memory" : ""));
        if (device < 0) {
            device = ordinal;
            first = u.name;
        } else if (ordinal != device) {
            throw InvalidArgument(fmt::format("{} is on CUDA device {} but {} is on device {}: all operands of one "
                                              "product must be on the same device",
                                              u.name, ordinal, first, device));
        }
    }
    return device < 0 ? 0 : device;
}

}  // namespace tropical::detail
