// Every registry kernel compiles with the real NVRTC, which needs no GPU, so this runs on CI: for
// sm_90 to a CUBIN, whose resources must agree with the kernel's catalogue row (launch bounds,
// registers, shared memory, which must also fit sm_80's multiprocessor: static shared memory is the
// same for every architecture); for sm_80 to PTX (the front end and NVVM for that architecture), one
// kernel per family of scalar semirings (a family's MinPlus, MaxMul, MaxMin and MinMax kernels are
// its MaxPlus kernel with other ring operations, which hold no architecture-dependent code; the
// device code's only such lines are `__CUDA_ARCH__ >= 800` guards) and every other kernel. Its
// ptxas, 45% of a kernel's time, and the other semirings are left to the devices and to
// warmup_warm_test's sm_80 case, to keep CI's longest test short.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <tropical/error.hpp>
#include <tropical/kernels.hpp>
#include "catalogue/catalogue.hpp"
#include "catalogue/kernel_source.hpp"
#include "nvrtc/compile_options.hpp"
#include "nvrtc/compiler.hpp"
#include "support/cubin.hpp"

using namespace tropical;
using namespace tropical::detail;

namespace {

// What ptxas made of a kernel, held against its catalogue row: the block size of its launch bounds,
// registers that let min_blocks blocks share a multiprocessor's 64 K, and static shared memory that
// fits a block (48 KiB) and min_blocks of them a multiprocessor of every architecture.
// Empty where all agree, else why not.
std::optional<std::string> resources_disagree(const KernelInfo& kernel, const std::vector<std::byte>& cubin) {
    const auto r = tropical::testing::kernel_resources(cubin, kernel.name);
    if (!r) return fmt::format("{}: the CUBIN is no ELF file", kernel.name);
    const CatalogueRow& row = row_of(kernel);
    const auto threads = static_cast<std::uint32_t>(row.threads);
    const auto blocks = static_cast<std::uint64_t>(std::max(1, row.min_blocks));
    if (!r->max_threads || *r->max_threads != threads)
        return fmt::format("{}: launch bounds of {} threads in the CUBIN, {} in the catalogue", kernel.name,
                           r->max_threads ? std::to_string(*r->max_threads) : "no", threads);
    if (!r->registers || *r->registers == 0 || *r->registers > 255 ||
        (r->max_registers && *r->registers > *r->max_registers))
        return fmt::format("{}: {} registers (cap {})", kernel.name, r->registers.value_or(0),
                           r->max_registers.value_or(0));
    if (std::uint64_t{*r->registers} * threads * blocks > 65536)
        return fmt::format("{}: {} registers x {} threads x {} blocks exceed a multiprocessor's 65536", kernel.name,
                           *r->registers, threads, blocks);
    // Static shared memory is the same on every architecture: min_blocks blocks must fit the smallest
    // multiprocessor the library runs on (sm_80's 164 KiB; sm_90 has 228).
    constexpr std::uint64_t kSharedPerSm = 164 * 1024;
    if (r->static_shared_bytes > 48 * 1024 || r->static_shared_bytes * blocks > kSharedPerSm)
        return fmt::format("{}: {} bytes of static shared memory for {} blocks a multiprocessor (sm_80 has {})",
                           kernel.name, r->static_shared_bytes, blocks, kSharedPerSm);
    return std::nullopt;
}

// Whether `kernel` follows `before` in a family of kernels/catalogue.def: the same row but for its
// semiring (TG_FAMILY writes a family's rows one after the other).
bool later_in_family(const KernelInfo& before, const KernelInfo& kernel) {
    const CatalogueRow &x = row_of(before), &y = row_of(kernel);
    return x.semiring && y.semiring && x.semiring != y.semiring && x.operation == y.operation &&
           x.variant == y.variant && x.dtype == y.dtype && x.tile.bm == y.tile.bm && x.tile.bn == y.tile.bn &&
           x.tile.bk == y.tile.bk && x.tile.tm == y.tile.tm && x.tile.tn == y.tile.tn && x.tile.sk == y.tile.sk &&
           x.threads == y.threads && x.min_blocks == y.min_blocks;
}

}  // namespace

class KernelCompile : public ::testing::TestWithParam<int> {};

TEST_P(KernelCompile, EveryRegistryKernelGivesCubinAndPtx) {
    const int arch = GetParam();
    const bool ptx_only = arch < 90;
    const auto compiler = make_nvrtc_compiler();
    const auto kernels = kernel_registry();
    std::atomic<std::size_t> next{0};
    std::mutex mutex;
    std::map<std::string, double> seconds_per_group;
    std::vector<std::pair<double, std::string_view>> seconds_per_kernel;
    std::vector<std::string> failures;
    auto work = [&] {
        for (std::size_t i; (i = next++) < kernels.size();) {
            const auto& kernel = kernels[i];
            if (ptx_only && i > 0 && later_in_family(kernels[i - 1], kernel)) continue;
            const auto unit = kernel_source(kernel);
            const auto start = std::chrono::steady_clock::now();
            try {
                const auto out = compiler->compile(kernel.name, unit, compile_options(arch, ptx_only));
                const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                std::lock_guard lock(mutex);
                seconds_per_group[std::string(to_string(kernel.group))] += s;
                seconds_per_kernel.emplace_back(s, kernel.name);
                if (ptx_only) {
                    if (!out.cubin.empty()) failures.push_back(fmt::format("{}: a CUBIN for PTX only", kernel.name));
                } else if (out.cubin.empty()) {
                    failures.push_back(fmt::format("{}: empty CUBIN", kernel.name));
                } else if (auto why = resources_disagree(kernel, out.cubin)) {
                    failures.push_back(*why);
                }
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
    // The slowest kernels, which set how long CI's run of this test takes.
    std::ranges::sort(seconds_per_kernel, std::greater{});
    for (std::size_t i = 0; i < std::min<std::size_t>(12, seconds_per_kernel.size()); ++i)
        std::printf("sm_%d slowest: %-52s %.2f s\n", arch, std::string(seconds_per_kernel[i].second).c_str(),
                    seconds_per_kernel[i].first);
}

INSTANTIATE_TEST_SUITE_P(Archs, KernelCompile, ::testing::Values(80, 90),
                         [](const auto& info) { return "sm_" + std::to_string(info.param); });
