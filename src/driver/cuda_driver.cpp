#include "driver/cuda_driver.hpp"

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include <tropical/error.hpp>
#include "driver/dropped_result.hpp"
#include "util/dynamic_library.hpp"
#include "util/load_once.hpp"
#include "util/warnings.hpp"

namespace tropical::detail {
namespace {

constexpr int kRequestedAbi = 12000;

[[noreturn]] void throw_no_driver(const std::string& what, const std::vector<std::string>& failures) {
    throw NoDriver(
        fmt::format("no usable CUDA driver: {}.\nLooked for libcuda.so.1 in:\n{}"
                    "Install the NVIDIA driver (it provides libcuda.so.1), or set {} to the full path of libcuda.so.1.",
                    what, describe_failures(failures), kDriverPathVariable));
}

}  // namespace

DriverApi load_driver(const std::string& override_path) {
    std::vector<LibraryCandidate> candidates;
    if (!override_path.empty()) candidates.push_back({override_path, std::string("from ") + kDriverPathVariable});
    else candidates.push_back({"libcuda.so.1", "the system library path"});

    auto library = DynamicLibrary::open_first(candidates);
    if (!library.loaded()) throw_no_driver("the library could not be loaded", library.failures());

    auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(library.symbol("cuGetProcAddress_v2"));
    if (!get_proc)
        throw_no_driver(
            fmt::format("{} has no cuGetProcAddress_v2; the driver is older than CUDA 12.0", library.path()), {});

    DriverApi api;
    api.library_path = library.path();
#define TROPICAL_LOAD(name, version)                                                                         \
    {                                                                                                        \
        CUdriverProcAddressQueryResult found{};                                                              \
        void* fn = nullptr;                                                                                  \
        if (get_proc(#name, &fn, kRequestedAbi, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS || !fn) \
            throw_no_driver(fmt::format("{} does not provide {}", library.path(), #name), {});               \
        api.name = reinterpret_cast<PFN_##name##_v##version>(fn);                                            \
    }
    TROPICAL_DRIVER_FUNCTIONS(TROPICAL_LOAD)
#undef TROPICAL_LOAD

    if (const CUresult r = api.cuInit(0); r != CUDA_SUCCESS) {
        const char* name = nullptr;
        api.cuGetErrorName(r, &name);
        const std::string description = name ? name : std::to_string(static_cast<int>(r));
        if (r == CUDA_ERROR_NO_DEVICE)
            throw NoDevice(fmt::format("the CUDA driver ({}) found no CUDA device: cuInit returned {}", library.path(),
                                       description),
                           r);
        throw NoDriver(
            fmt::format("the CUDA driver at {} failed to initialise: cuInit returned {}. Check that "
                        "the NVIDIA kernel module is loaded and matches the driver library.",
                        library.path(), description));
    }
    return api;
}

const DriverApi& driver() {
    return load_once([] {
        const char* path = std::getenv(kDriverPathVariable);
        return load_driver(path ? path : "");
    });
}

std::string describe(CUresult result) {
    const char* name = nullptr;
    const char* text = nullptr;
    try {
        const auto& api = driver();
        api.cuGetErrorName(result, &name);
        api.cuGetErrorString(result, &text);
    } catch (const Error&) {
        // No driver to ask: the number alone still identifies the error.
    }
    return fmt::format("{} ({})", name ? name : fmt::format("CUresult {}", static_cast<int>(result)),
                       text ? text : "no description");
}

namespace {

// What a user can do about the errors that come from the machine rather than from a bug.
std::string_view hint(CUresult result) {
    switch (result) {
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
        return ". The device is busy or unavailable: its compute mode (nvidia-smi -q -d COMPUTE) is exclusive-process "
               "and another process holds it, or it is prohibited; wait for that process, or choose another device "
               "with CUDA_VISIBLE_DEVICES";
    case CUDA_ERROR_OUT_OF_MEMORY:
        return ". Free device memory (other processes may hold it: nvidia-smi) or use smaller batches";
    case CUDA_ERROR_LAUNCH_TIMEOUT:
        return ". A kernel ran longer than the display watchdog allows; split the product into smaller batches";
    default: return {};
    }
}

}  // namespace

void throw_cuda_error(CUresult result, const char* call, const char* file, int line) {
    const std::string message = fmt::format("{}:{}: {} failed: {}{}", file, line, call, describe(result), hint(result));
    switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY: throw OutOfMemory(message, result);
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE: throw NoDevice(message, result);
    default: throw CudaError(message, result);
    }
}

#ifndef NDEBUG
void report_dropped(CUresult result, const char* call, const char* file, int line) noexcept {
    if (result == CUDA_SUCCESS || result == CUDA_ERROR_DEINITIALIZED) return;
    try {
        report_dropped_failure(fmt::format("{}:{}: {} failed: {}", file, line, call, describe(result)));
    } catch (...) {
        report_dropped_failure(call);  // no memory for the message
    }
}

void report_dropped(const std::exception& error, const char* file, int line) noexcept {
    if (const auto* e = dynamic_cast<const Error*>(&error); e && e->code() == CUDA_ERROR_DEINITIALIZED) return;
    try {
        report_dropped_failure(fmt::format("{}:{}: {}", file, line, error.what()));
    } catch (...) {
        report_dropped_failure(error.what());
    }
}
#endif

}  // namespace tropical::detail
