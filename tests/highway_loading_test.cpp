// Highway's run-time library is opened by the first CPU product, not with the library: its load-time
// initialiser costs milliseconds of every process start (src/cpu/highway_runtime.cpp). This program
// links the library and nothing that needs libhwy, so the first check sees the process as any
// program of a user's does before it runs a CPU product.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <tropical/host.hpp>
#include "reference/reference.hpp"

namespace {

bool libhwy_mapped() {
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);)
        if (line.find("/libhwy.so") != std::string::npos) return true;
    return false;
}

}  // namespace

TEST(HighwayLoading, OpenedByTheFirstCpuProductAndNotBefore) {
    ASSERT_FALSE(libhwy_mapped()) << "libhwy is loaded before any CPU product: something links it again";

    const std::int64_t m = 5, k = 7, n = 3;
    std::vector<float> a(m * k), b(k * n), c(m * n, -1.0f), want(m * n);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 37) % 11) - 5.0f;
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 17) % 13) - 6.0f;
    tropical::host::gemm<tropical::MaxPlus, float>(tropical::row_major<const float>(a.data(), m, k),
                                                   tropical::row_major<const float>(b.data(), k, n),
                                                   tropical::row_major(c.data(), m, n));
    EXPECT_TRUE(libhwy_mapped()) << "a CPU product ran without opening libhwy";

    tropical::reference::gemm<float>(tropical::Semiring::MaxPlus, {a.data(), m, k, k, 1}, {b.data(), k, n, n, 1},
                                     {want.data(), m, n, n, 1});
    EXPECT_EQ(c, want);
    EXPECT_NE(std::string(tropical::host::simd_target()), "");
}
