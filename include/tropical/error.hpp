#pragma once
// The exceptions every tropical-gemm call may throw. Catch tropical::Error for all of them, or a
// subclass for what you can handle; status() matches the C ABI's status codes (tropical/c_api.h).
#include <cstdint>
#include <stdexcept>
#include <string>

#include <tropical/export.hpp>

namespace tropical {

enum class Status : int {
    Success = 0,
    InvalidArgument = 1,  // shapes, layouts, pointers or options that cannot work
    Unsupported = 2,      // a valid request this library does not implement (e.g. backward for integers)
    OutOfMemory = 3,
    NoDriver = 4,         // libcuda.so.1 could not be loaded
    NoDevice = 5,         // the driver loaded but there is no such (or no) CUDA device
    NoCompiler = 6,       // NVRTC could not be loaded, and a kernel had to be compiled
    CompileError = 7,     // NVRTC rejected a kernel
    CudaError = 8,        // any other failure reported by the CUDA driver
    Internal = 9,
};

TROPICAL_GEMM_EXPORT const char* to_string(Status status) noexcept;

class TROPICAL_GEMM_EXPORT Error : public std::runtime_error {
public:
    Error(Status status, const std::string& message, std::int64_t code = 0)
        : std::runtime_error(message), status_(status), code_(code) {}
    Status status() const noexcept { return status_; }
    // The numeric code of the layer that failed: a CUresult, an nvrtcResult, or 0.
    std::int64_t code() const noexcept { return code_; }

private:
    Status status_;
    std::int64_t code_;
};

class TROPICAL_GEMM_EXPORT InvalidArgument : public Error {
public:
    explicit InvalidArgument(const std::string& message) : Error(Status::InvalidArgument, message) {}
};

class TROPICAL_GEMM_EXPORT Unsupported : public Error {
public:
    explicit Unsupported(const std::string& message) : Error(Status::Unsupported, message) {}
};

class TROPICAL_GEMM_EXPORT OutOfMemory : public Error {
public:
    OutOfMemory(const std::string& message, std::int64_t code) : Error(Status::OutOfMemory, message, code) {}
};

class TROPICAL_GEMM_EXPORT NoDriver : public Error {
public:
    explicit NoDriver(const std::string& message) : Error(Status::NoDriver, message) {}
};

class TROPICAL_GEMM_EXPORT NoDevice : public Error {
public:
    NoDevice(const std::string& message, std::int64_t code = 0) : Error(Status::NoDevice, message, code) {}
};

class TROPICAL_GEMM_EXPORT NoCompiler : public Error {
public:
    explicit NoCompiler(const std::string& message) : Error(Status::NoCompiler, message) {}
};

class TROPICAL_GEMM_EXPORT CudaError : public Error {
public:
    CudaError(const std::string& message, std::int64_t code) : Error(Status::CudaError, message, code) {}
};

// A kernel NVRTC refused to compile, with everything needed to reproduce it.
class TROPICAL_GEMM_EXPORT CompileError : public Error {
public:
    CompileError(const std::string& message, std::int64_t code, std::string kernel, std::string options,
                 std::string log)
        : Error(Status::CompileError, message, code), kernel_(std::move(kernel)), options_(std::move(options)),
          log_(std::move(log)) {}
    const std::string& kernel() const noexcept { return kernel_; }
    const std::string& options() const noexcept { return options_; }
    const std::string& log() const noexcept { return log_; }

private:
    std::string kernel_, options_, log_;
};

}  // namespace tropical
