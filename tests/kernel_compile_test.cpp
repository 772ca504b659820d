// Every registry kernel compiles with the real NVRTC, which needs no GPU, so this runs on CI.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include <tropical/error.hpp>
#include <tropical/kernels.hpp>
#include "catalogue/kernel_source.hpp"
#include "nvrtc/compile_options.hpp"
#include "nvrtc/compiler.hpp"

using namespace tropical;
using namespace tropical::detail;

class KernelCompile : public ::testing::TestWithParam<int> {};

TEST_P(KernelCompile, EveryRegistryKernelGivesCubinAndPtx) {
    const int arch = GetParam();
    const auto compiler = make_nvrtc_compiler();
    const auto kernels = kernel_registry();
    std::atomic<std::size_t> next{0};
    std::mutex mutex;
    std::map<std::string, double> seconds_per_group;
    std::vector<std::string> failures;
    auto work = [&] {
        for (std::size_t i; (i = next++) < kernels.size();) {
            const auto& kernel = kernels[i];
            const auto unit = kernel_source(kernel);
            const auto start = std::chrono::steady_clock::now();
            try {
                const auto out = compiler->compile(kernel.name, unit, compile_options(arch, false));
                const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                std::lock_guard lock(mutex);
                seconds_per_group[std::string(to_string(kernel.group))] += s;
                if (out.cubin.empty()) failures.push_back(fmt::format("{}: empty CUBIN", kernel.name));
                if (out.ptx.find(std::string(kernel.name)) == std::string::npos)
                    failures.push_back(fmt::format("{}: PTX lacks the entry point", kernel.name));
            } catch (const CompileError& e) {
                std::lock_guard lock(mutex);
                failures.push_back(fmt::format("{}: {}", kernel.name, e.what()));
            }
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
    for (const auto& f : failures) ADD_FAILURE() << f;
    for (const auto& [group, s] : seconds_per_group)
        std::printf("sm_%d %-12s NVRTC time summed over its kernels: %.2f s\n", arch, group.c_str(), s);
}

INSTANTIATE_TEST_SUITE_P(Archs, KernelCompile, ::testing::Values(80, 90),
                         [](const auto& info) { return "sm_" + std::to_string(info.param); });
