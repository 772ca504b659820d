// The per-device context on a real GPU: lazy loading and compile-once.
#include <gtest/gtest.h>

#include <latch>
#include <thread>
#include <vector>

#include <tropical/context.hpp>
#include <tropical/kernels.hpp>
#include "support/gpu.hpp"

using namespace tropical;

TEST(CudaContext, LoadsOnlyTheKernelsAskedForOnceEach) {
    TROPICAL_REQUIRE_GPU();
    auto& context = CudaContext::for_device(0);
    EXPECT_EQ(&context, &CudaContext::for_device(0));
    EXPECT_GE(context.arch(), 75);
    EXPECT_GT(context.multiprocessor_count(), 0);
    const std::size_t before = context.loaded_kernel_count();
    const KernelInfo* k = find_kernel("tropical_gemm_f32_maxplus");
    ASSERT_NE(k, nullptr);
    std::latch start(16);
    std::vector<CUfunc_st*> functions(16);
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t)
        threads.emplace_back([&, t] {
            start.arrive_and_wait();
            functions[static_cast<std::size_t>(t)] = context.kernel(*k);
        });
    for (auto& t : threads) t.join();
    for (auto* f : functions) EXPECT_EQ(f, functions[0]);
    EXPECT_NE(functions[0], nullptr);
    EXPECT_LE(context.loaded_kernel_count(), before + 1);
}

TEST(CudaContext, MissingDeviceIsAClearError) {
    TROPICAL_REQUIRE_GPU();
    EXPECT_THROW(CudaContext::for_device(CudaContext::device_count()), NoDevice);
    EXPECT_THROW(CudaContext::for_device(-1), NoDevice);
}
