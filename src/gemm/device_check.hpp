#pragma once
#include "gemm/validate.hpp"

namespace tropical::detail {

// The CUDA device that holds every operand of the request. Throws InvalidArgument for host memory
// or operands on different devices, naming the operand.
int device_of(const ValidatedRequest& request);

}  // namespace tropical::detail
