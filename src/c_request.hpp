#pragma once
// The C ABI's arguments (tropical/c_api.h) as the library's Request, range-checked on the way:
// shared by the C ABI itself (src/c_api.cpp) and the Python package's packed GPU call
// (python/src/host_api.cpp), so that both accept and refuse the same things with the same words.
#include <cstdint>

#include <tropical/c_api.h>
#include <tropical/gemm.hpp>

namespace tropical::detail {

// A NULL operand is an absent one; semiring and dtype are the int32 the caller passed, checked
// before they become enums; a NULL options means the defaults.
Request request_from_c(Operation operation, std::int32_t semiring, std::int32_t dtype, const tropical_matrix* a,
                       const tropical_matrix* b, const tropical_matrix* c, const tropical_matrix* argmax,
                       const tropical_matrix* grad, std::int64_t batch, const tropical_options* options);

}  // namespace tropical::detail
