#pragma once
// The plan of a launch, worked out on the host before anything touches the GPU: which kernel runs a
// validated request (gemm/choice.hpp: the choice tables), its grid, block and dynamic shared memory,
// its parameters, and what must be filled first. Tests check them without a GPU
// (tests/kernel_choice_test.cpp).
#include <cstddef>
#include <cstdint>

#include <tropical/kernels.hpp>
#include "gemm/choice.hpp"
#include "kernel_params.h"
#include "request/request.hpp"
#include "request/validate.hpp"

namespace tropical::detail {

// Whether the `batch` matrices of operand r lie one after another in memory (lines of ld elements,
// no gap between matrices), so that one 2-D memset covers them all.
inline bool follows_on(const OperandRef& r, std::int64_t batch) {
    const std::int64_t lines = r.layout == Layout::RowMajor ? r.rows : r.cols;
    return batch == 1 || r.batch_stride == lines * r.ld;
}

struct LaunchPlan {
    Choice choice{};
    unsigned grid[3] = {1, 1, 1};
    unsigned block = 0;
    unsigned shared_bytes = 0;  // dynamic shared memory
    // Written before the launch, with memsets on its stream: C with the semiring's zero (SplitKAtomic
    // combines its chunks into it), and for SplitKSerial (the Serial argmax kernels) the argmax with
    // -1 as well, or the gradient with zeros (a backward pass that adds).
    enum class Fill : std::uint8_t {
        None,
        ResultWithZero,
        ResultWithZeroArgmaxWithNone,
        GradientWithZero
    } fill = Fill::None;
    bool launch = true;                  // false: the fill is the whole answer (a backward pass with M or N = 0)
    TgGemmParams product{};              // the parameters of a product kernel,
    TgBackwardParams backward{};         // or of a backward one,
    TgLogBackwardParams log_backward{};  // or of a LogPlus gradient,
    TgCountingParams counting{};         // or of a counting product (its `values` is `product`),
    TgPackParams pack{};                 // or of the packing kernel,
    TgBacktrackParams backtrack{};       // or of the backtrack
};

// The plan for request q of validated shape s, which must have work to do (has_work()).
LaunchPlan plan(const Request& q, const Shape& s, const DeviceLimits& device);

// Whether q (of validated shape s) computes or writes anything at all.
bool has_work(const Request& q, const Shape& s);

}  // namespace tropical::detail
