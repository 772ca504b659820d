// One libFuzzer program per target: TROPICAL_FUZZ_TARGET names the function (CMakeLists.txt).
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return tropical::fuzz::TROPICAL_FUZZ_TARGET(data, size);
}
