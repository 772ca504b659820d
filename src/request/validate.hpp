#pragma once
// Everything that can be checked about a request without touching the GPU: shapes, leading
// dimensions, batch strides, overlaps, sizes and supported combinations. Throws InvalidArgument
// or Unsupported with a message that says what is wrong and what is expected.
#include <cstdint>

#include "request/request.hpp"

namespace tropical::detail {

struct Shape {
    std::int64_t m = 0, n = 0, k = 0;
    bool empty() const { return m == 0 || n == 0; }
};

// One operand the request really uses, with the role it plays.
struct UsedOperand {
    const char* name;  // "A", "grad_C", ...
    const OperandRef* ref;
    std::size_t element_size;
    bool output;
    bool one_matrix = false;  // a single matrix whatever the request's batch (Backtrack's last and path)
};

// The most operands one request uses: a counting product's values and counts of A, B and C.
inline constexpr int kMaxOperands = 6;

struct ValidatedRequest {
    Shape shape;
    UsedOperand operands[kMaxOperands];
    int operand_count = 0;
};

ValidatedRequest validate(const Request& request);

// Throws Unsupported, saying which types the semiring takes, where it does not take `dtype`.
void check_supported(Semiring semiring, DType dtype);

}  // namespace tropical::detail
