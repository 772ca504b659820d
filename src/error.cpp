#include <tropical/error.hpp>

namespace tropical {

const char* to_string(Status status) noexcept {
    switch (status) {
    case Status::Success: return "success";
    case Status::InvalidArgument: return "invalid argument";
    case Status::Unsupported: return "unsupported";
    case Status::OutOfMemory: return "out of memory";
    case Status::NoDriver: return "no CUDA driver";
    case Status::NoDevice: return "no CUDA device";
    case Status::NoCompiler: return "no NVRTC";
    case Status::CompileError: return "compile error";
    case Status::CudaError: return "CUDA error";
    case Status::Internal: return "internal error";
    }
    return "unknown status";
}

}  // namespace tropical
