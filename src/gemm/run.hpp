#pragma once
// The GPU path of every request: validate (request/validate.hpp), plan (gemm/plan.hpp: the kernel,
// its grid and shared memory) and launch on the caller's stream.
#include "request/request.hpp"

namespace tropical::detail {

// Validates, plans and launches; throws the tropical::Error that says what went wrong.
void run(const Request& request);

}  // namespace tropical::detail
