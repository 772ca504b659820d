#pragma once
// GPU tests skip, with the reason, where there is no driver or no device (a whole GPU test program
// does in tests/support/gpu_main.cpp; a case in a program that runs without a GPU, here).
#include <gtest/gtest.h>

#include <string>

#include "support/gpu_availability.hpp"

namespace tropical::testing {

using detail::gpu_unavailable_reason;

}  // namespace tropical::testing

#define TROPICAL_REQUIRE_GPU()                                                                   \
    do {                                                                                         \
        if (const std::string why = ::tropical::testing::gpu_unavailable_reason(); !why.empty()) \
            GTEST_SKIP() << "needs a CUDA GPU: " << why;                                         \
    } while (0)
