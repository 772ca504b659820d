#pragma once
// Which kernel runs a request, and how (src/gemm/kernel_choice.cpp says by which rules).
#include <cstdint>

#include "gemm/validate.hpp"
#include <tropical/gemm.hpp>
#include <tropical/kernels.hpp>

namespace tropical::detail {

// A kernel, and for a product the number of chunks K is split into (k_splits of the kernel's
// parameters; 1 for every kernel but the split-K ones).
struct Choice {
    const KernelInfo* kernel;   // never null
    std::int64_t k_splits = 1;
};

// Whether the `batch` matrices of operand r lie one after another in memory (lines of ld elements,
// no gap between matrices), so that one 2-D memset covers them all.
inline bool follows_on(const OperandRef& r, std::int64_t batch) {
    const std::int64_t lines = r.layout == Layout::RowMajor ? r.rows : r.cols;
    return batch == 1 || r.batch_stride == lines * r.ld;
}

// The kernel for request q of shape s (validated) on a GPU with `multiprocessors` multiprocessors.
// Only products depend on the GPU; the others may pass 0. Throws Unsupported where the registry
// has no kernel for the request.
Choice choose_kernel(const Request& q, const Shape& s, std::int64_t multiprocessors);

}  // namespace tropical::detail
