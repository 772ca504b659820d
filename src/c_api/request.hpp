#pragma once
// The C ABI's arguments (tropical/c_api.h) as the library's Request, range-checked on the way and
// assembled by the request's builders (request/request.hpp), as the C++ entry points' are.
#include <cstdint>
#include <string>

#include <tropical/c_api.h>
#include "request/request.hpp"

namespace tropical::detail {

// The int32 a C caller passed for a semiring or an element type, checked before it becomes the enum
// (which is 8 bits wide, so an unchecked 256 would quietly turn into 0). Throws InvalidArgument.
Semiring semiring_from_c(std::int32_t semiring);
DType dtype_from_c(std::int32_t dtype);

// The C options as the library's (defaults for NULL): the stream, accumulate, and the device hint,
// checked (InvalidArgument for a negative one) and turned into a device ordinal (-1: no hint).
GemmOptions options_from_c(const tropical_options* options);

// The descriptors an operation cannot do without, in the order a b c argmax grad ("11100" for a
// product): for a backward pass, grad_C, argmax, the gradient, and A and B where the semiring's
// gradient reads them (a semiring out of range reads neither here; validation names it).
std::string required_descriptors(Operation operation, std::int32_t semiring);

// Throws InvalidArgument naming the first descriptor that `operation` needs and that is NULL.
void require_descriptors(Operation operation, std::int32_t semiring, const tropical_matrix* a, const tropical_matrix* b,
                         const tropical_matrix* c, const tropical_matrix* argmax, const tropical_matrix* grad);

// OrAnd on packed operands: request_from_c's request (u8) with K = k booleans packed along K, for
// Gemm or GemmArgmax; a, b and c (and argmax) must not be NULL.
Request packed_request_from_c(Operation operation, std::int32_t semiring, const tropical_matrix* a,
                              const tropical_matrix* b, std::int64_t k, const tropical_matrix* c,
                              const tropical_matrix* argmax, std::int64_t batch, const tropical_options* options);

// PackBits: `bytes` packed into `words` for operand `as` (tropical_pack); neither may be NULL.
Request pack_request_from_c(const tropical_matrix* bytes, std::int32_t as, const tropical_matrix* words,
                            std::int64_t batch, const tropical_options* options);

// Backtrack: the paths walked back through `steps` tables of back-pointers; none may be NULL.
Request backtrack_request_from_c(const tropical_matrix* back, std::int64_t steps, const tropical_matrix* last,
                                 const tropical_matrix* path, const tropical_options* options);

// A NULL operand is an absent one; a NULL options means the defaults.
Request request_from_c(Operation operation, std::int32_t semiring, std::int32_t dtype, const tropical_matrix* a,
                       const tropical_matrix* b, const tropical_matrix* c, const tropical_matrix* argmax,
                       const tropical_matrix* grad, std::int64_t batch, const tropical_options* options);

}  // namespace tropical::detail
