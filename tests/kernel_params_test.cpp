// The kernels take their parameters by value as raw bytes: every field must sit at the same offset
// in the host's mirror (src/gemm/kernel_params.hpp) as in kernels/tropical_gemm.cu.
#include <gtest/gtest.h>

#include <cstddef>

#include "device_kernel_params.hpp"  // generated from the kernel source
#include "gemm/kernel_params.hpp"

namespace host = tropical::detail;
namespace device = tropical::device_side;

#define SAME_FIELD(host_type, device_type, field) \
    static_assert(offsetof(host::host_type, field) == offsetof(device::device_type, field), #device_type "::" #field)

SAME_FIELD(KernelOperand, TgOperand, ptr);
SAME_FIELD(KernelOperand, TgOperand, row_stride);
SAME_FIELD(KernelOperand, TgOperand, col_stride);
SAME_FIELD(KernelOperand, TgOperand, batch_stride);
static_assert(sizeof(host::KernelOperand) == sizeof(device::TgOperand));

SAME_FIELD(GemmKernelParams, TgGemmParams, a);
SAME_FIELD(GemmKernelParams, TgGemmParams, b);
SAME_FIELD(GemmKernelParams, TgGemmParams, c);
SAME_FIELD(GemmKernelParams, TgGemmParams, argmax);
SAME_FIELD(GemmKernelParams, TgGemmParams, m);
SAME_FIELD(GemmKernelParams, TgGemmParams, n);
SAME_FIELD(GemmKernelParams, TgGemmParams, k);
SAME_FIELD(GemmKernelParams, TgGemmParams, batch);
SAME_FIELD(GemmKernelParams, TgGemmParams, accumulate);
SAME_FIELD(GemmKernelParams, TgGemmParams, k_splits);
static_assert(sizeof(host::GemmKernelParams) == sizeof(device::TgGemmParams));

SAME_FIELD(BackwardKernelParams, TgBackwardParams, grad_c);
SAME_FIELD(BackwardKernelParams, TgBackwardParams, argmax);
SAME_FIELD(BackwardKernelParams, TgBackwardParams, other);
SAME_FIELD(BackwardKernelParams, TgBackwardParams, grad);
SAME_FIELD(BackwardKernelParams, TgBackwardParams, m);
SAME_FIELD(BackwardKernelParams, TgBackwardParams, n);
SAME_FIELD(BackwardKernelParams, TgBackwardParams, k);
SAME_FIELD(BackwardKernelParams, TgBackwardParams, batch);
SAME_FIELD(BackwardKernelParams, TgBackwardParams, multiply_by_other);
SAME_FIELD(BackwardKernelParams, TgBackwardParams, overwrite);
static_assert(sizeof(host::BackwardKernelParams) == sizeof(device::TgBackwardParams));

TEST(KernelParams, HostAndDeviceLayoutsAgree) {
    // The checks above are compile-time; this test exists so that the suite reports them.
    SUCCEED();
}
