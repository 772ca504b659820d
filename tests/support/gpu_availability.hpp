#pragma once
// Whether this process can use a CUDA GPU, and if not why, for the programs that need one to do
// anything (the GPU tests, the benchmarks): they say why and exit rather than fail one by one.
#include <string>

#include <tropical/context.hpp>
#include <tropical/error.hpp>

namespace tropical::detail {

// Empty when a CUDA device is usable, else why not (no driver, no device), in the library's words.
inline std::string gpu_unavailable_reason() {
    try {
        if (CudaContext::device_count() == 0) return "no CUDA device on this machine";
        return {};
    } catch (const Error& e) {
        return e.what();
    }
}

}  // namespace tropical::detail
