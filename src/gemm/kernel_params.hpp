#pragma once
// Host mirror of the parameter structs declared in the preamble of kernels/tropical_gemm.cu.
// The kernels receive one of these by value; tests/kernel_params_test.cpp compiles the preamble
// with NVRTC and asserts that every field sits at the same offset on both sides.
#include <cstdint>

namespace tropical::detail {

// One matrix operand, addressed as ptr[b * batch_stride + i * row_stride + j * col_stride]
// (element strides, not bytes). Row-major: row_stride = ld, col_stride = 1; column-major: the reverse.
struct KernelOperand {
    void* ptr = nullptr;
    std::int64_t row_stride = 0;
    std::int64_t col_stride = 0;
    std::int64_t batch_stride = 0;
};

// C (M x N) = A (M x K) (x) B (K x N), for `batch` products. argmax.ptr is null unless tracked.
struct GemmKernelParams {
    KernelOperand a, b, c, argmax;
    std::int64_t m = 0, n = 0, k = 0, batch = 1;
    std::int32_t accumulate = 0;
    std::int32_t k_splits = 1;  // > 1: K in that many chunks combined by atomics into a C holding the zero
};

// grad += route(grad_c, argmax [, other]) for `batch` products; see the preamble for the rules.
struct BackwardKernelParams {
    KernelOperand grad_c, argmax, other, grad;
    std::int64_t m = 0, n = 0, k = 0, batch = 1;
    std::int32_t multiply_by_other = 0;
    std::int32_t overwrite = 0;  // grad = ... instead of grad += ... (the shared-memory path only)
};

}  // namespace tropical::detail
