#pragma once
// The counting semiring's CPU kernels' interface: one task is a band of rows of one product's C,
// computed by the SIMD code of the best target this CPU runs (cpu/counting_kernel.cpp, chosen at run
// time by Highway). cpu/host_counting.cpp cuts requests into tasks and runs them on the thread pool.
#include <cstdint>

#include <tropical/types.hpp>
#include "cpu/product.hpp"

namespace tropical::cpu {

// Rows [row0, row1) of C = A (x) B (or C (+) A (x) B with accumulate) for one product of a batch:
// values of `dtype` (F32 or F64), counts double, each of the six matrices with its own strides.
struct CountingTask {
    DType dtype = DType::F32;
    bool accumulate = false;
    std::int64_t n = 0, k = 0;
    Strided a_values, a_counts, b_values, b_counts, c_values, c_counts;
    std::int64_t row0 = 0, row1 = 0;
};

void counting_rows(const CountingTask& task);

}  // namespace tropical::cpu
