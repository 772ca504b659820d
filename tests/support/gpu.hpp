#pragma once
// GPU tests skip, with the reason, where there is no driver or no device.
#include <gtest/gtest.h>

#include <string>

#include <tropical/context.hpp>
#include <tropical/error.hpp>

namespace tropical::testing {

// Empty when a CUDA device is usable, else why not.
inline std::string gpu_unavailable_reason() {
    try {
        if (CudaContext::device_count() == 0) return "no CUDA device on this machine";
        return {};
    } catch (const Error& e) {
        return e.what();
    }
}

}  // namespace tropical::testing

#define TROPICAL_REQUIRE_GPU()                                                               \
    do {                                                                                     \
        if (const std::string why = ::tropical::testing::gpu_unavailable_reason(); !why.empty()) \
            GTEST_SKIP() << "needs a CUDA GPU: " << why;                                     \
    } while (0)
