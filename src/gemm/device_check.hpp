#pragma once
#include <cuda.h>

#include <tropical/context.hpp>
#include "request/validate.hpp"

namespace tropical::detail {

// The CUDA device that holds every operand of the request. Throws InvalidArgument for host memory
// or operands on different devices, naming the operand.
int device_of(const ValidatedRequest& request);

// A stream the caller passed must be alive and belong to the device's primary context, where the
// kernels are loaded; else the launch would fail with a bare CUDA error, or worse. Throws
// InvalidArgument saying which. The legacy and per-thread default streams need no check.
void check_stream(CUstream stream, const CudaContext& context);

}  // namespace tropical::detail
