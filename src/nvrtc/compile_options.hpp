#pragma once
// The one place that decides how kernels are compiled. Every option here is part of the cache key.
#include <string>
#include <vector>

namespace tropical::detail {

// Options for a CUBIN (and its PTX) for sm_<arch>, or, when `ptx_only`, PTX for compute_<arch>
// that the driver finishes for a newer device this NVRTC does not know.
inline std::vector<std::string> compile_options(int arch, bool ptx_only) {
    return {
        "--std=c++17",
        (ptx_only ? "--gpu-architecture=compute_" : "--gpu-architecture=sm_") + std::to_string(arch),
    };
}

}  // namespace tropical::detail
