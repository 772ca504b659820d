#pragma once
// The C ABI's arguments (tropical/c_api.h) as the library's Request, range-checked on the way.
#include <cstdint>
#include <string>

#include <tropical/c_api.h>
#include "gemm/request.hpp"

namespace tropical::detail {

// The int32 a C caller passed for a semiring or an element type, checked before it becomes the enum
// (which is 8 bits wide, so an unchecked 256 would quietly turn into 0). Throws InvalidArgument.
Semiring semiring_from_c(std::int32_t semiring);
DType dtype_from_c(std::int32_t dtype);

// The descriptors an operation cannot do without, in the order a b c argmax grad ("11100" for a
// product): for a backward pass, grad_C, argmax, the gradient, and A and B where the semiring's
// gradient reads them (a semiring out of range reads neither here; validation names it).
std::string required_descriptors(Operation operation, std::int32_t semiring);

// Throws InvalidArgument naming the first descriptor that `operation` needs and that is NULL.
void require_descriptors(Operation operation, std::int32_t semiring, const tropical_matrix* a, const tropical_matrix* b,
                         const tropical_matrix* c, const tropical_matrix* argmax, const tropical_matrix* grad);

// A NULL operand is an absent one; a NULL options means the defaults.
Request request_from_c(Operation operation, std::int32_t semiring, std::int32_t dtype, const tropical_matrix* a,
                       const tropical_matrix* b, const tropical_matrix* c, const tropical_matrix* argmax,
                       const tropical_matrix* grad, std::int64_t batch, const tropical_options* options);

}  // namespace tropical::detail
