#pragma once
// The exceptions every tropical-gemm call may throw. Catch tropical::Error for all of them, or a
// subclass for what you can handle; status() is one of tropical/status.h's list, which the C ABI's
// status codes (tropical/c_api.h) share.
#include <cstdint>
#include <stdexcept>
#include <string>

#include <tropical/status.h>
#include <tropical/export.hpp>

namespace tropical {

enum class Status : int {
#define TROPICAL_STATUS_ENUMERATOR(c_suffix, name, value, words) name = value,
    TROPICAL_STATUS_LIST(TROPICAL_STATUS_ENUMERATOR)
#undef TROPICAL_STATUS_ENUMERATOR
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
        : Error(Status::CompileError, message, code),
          kernel_(std::move(kernel)),
          options_(std::move(options)),
          log_(std::move(log)) {}
    const std::string& kernel() const noexcept { return kernel_; }
    const std::string& options() const noexcept { return options_; }
    const std::string& log() const noexcept { return log_; }

private:
    std::string kernel_, options_, log_;
};

}  // namespace tropical
