#pragma once
// The plan of a launch, worked out on the host before anything touches the GPU: which kernel runs a
// validated request, its grid, block and dynamic shared memory, its parameters, and what must be
// filled first. The rules live here, in one place, so that tests check them without a GPU
// (tests/kernel_choice_test.cpp).
#include <cstddef>
#include <cstdint>

#include <tropical/kernels.hpp>
#include "gemm/request.hpp"
#include "gemm/validate.hpp"
#include "kernel_params.h"

namespace tropical::detail {

// What of the device a plan depends on.
struct DeviceLimits {
    std::int64_t multiprocessors = 0;
    // Most shared memory one block may use once its kernel opts in (kernels that take dynamic shared
    // memory are given this much when loaded: CudaContext::kernel).
    std::size_t shared_memory_per_block = 0;
};

// A kernel, and for a product the number of chunks K is split into (k_splits of the kernel's
// parameters; 1 for every kernel but the split-K ones).
struct Choice {
    const KernelInfo* kernel;  // never null
    std::int64_t k_splits = 1;
};

// Whether the `batch` matrices of operand r lie one after another in memory (lines of ld elements,
// no gap between matrices), so that one 2-D memset covers them all.
inline bool follows_on(const OperandRef& r, std::int64_t batch) {
    const std::int64_t lines = r.layout == Layout::RowMajor ? r.rows : r.cols;
    return batch == 1 || r.batch_stride == lines * r.ld;
}

// The kernel for request q of shape s (validated) on a GPU of `device`'s limits. Only products
// depend on the GPU; the others may pass zeros. Throws Unsupported where the catalogue has no kernel
// for the request.
Choice choose_kernel(const Request& q, const Shape& s, const DeviceLimits& device);

struct LaunchPlan {
    Choice choice{};
    unsigned grid[3] = {1, 1, 1};
    unsigned block = 0;
    unsigned shared_bytes = 0;  // dynamic shared memory
    // Written before the launch, with memsets on its stream: C with the semiring's zero (split-K
    // combines its chunks into it), and for the Serial argmax kernels the argmax with -1 as well, or
    // the gradient with zeros (a backward pass that adds).
    enum class Fill : std::uint8_t {
        None,
        ResultWithZero,
        ResultWithZeroArgmaxWithNone,
        GradientWithZero
    } fill = Fill::None;
    bool launch = true;             // false: the fill is the whole answer (a backward pass with M or N = 0)
    TgGemmParams product{};         // the parameters of a product kernel,
    TgBackwardParams backward{};    // or of a backward one,
    TgCountingParams counting{};    // or of a counting product (its `values` is `product`),
    TgPackParams pack{};            // or of the packing kernel,
    TgBacktrackParams backtrack{};  // or of the backtrack
};

// The plan for request q of validated shape s, which must have work to do (has_work()).
LaunchPlan plan(const Request& q, const Shape& s, const DeviceLimits& device);

// Whether q (of validated shape s) computes or writes anything at all.
bool has_work(const Request& q, const Shape& s);

}  // namespace tropical::detail
