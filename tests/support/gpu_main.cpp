// main() of the GPU test programs. Without a usable GPU none of their cases can run: rather than let
// each case skip itself while CTest counts the program as passed, it says why and exits with
// TROPICAL_SKIP_EXIT_CODE, which CTest reports as a skipped test (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "support/gpu.hpp"

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (!GTEST_FLAG_GET(list_tests)) {
        if (const std::string why = tropical::testing::gpu_unavailable_reason(); !why.empty()) {
            std::printf("Skipped: needs a CUDA GPU: %s\n", why.c_str());
            return TROPICAL_SKIP_EXIT_CODE;
        }
    }
    return RUN_ALL_TESTS();
}
