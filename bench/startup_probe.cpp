// Run in a fresh process by startup_bench: how long until the first product is done. Uses only the
// public API and the installed library, as a user's program would.
//   startup_probe first|pytorch|all
// Prints one line of JSON: seconds for creating the CUDA context, then for the first product (or
// for loading the kernel set), measured from the start of main.
#include <chrono>
#include <cstdio>
#include <string_view>
#include <vector>

#include <tropical/context.hpp>
#include <tropical/device_buffer.hpp>
#include <tropical/gemm.hpp>
#include <tropical/kernels.hpp>

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

int main(int argc, char** argv) {
    const auto start = Clock::now();
    const std::string_view set = argc > 1 ? argv[1] : "first";
    try {
        auto& context = tropical::CudaContext::for_device(0);
        const double context_s = since(start);
        const auto work_start = Clock::now();
        constexpr int n = 64;
        tropical::DeviceBuffer<float> a(n * n), b(n * n), c(n * n);
        a.fill_bytes(0), b.fill_bytes(0);
        const double alloc_s = since(work_start);
        const auto product_start = Clock::now();
        if (set == "first" || set == "pytorch") {
            tropical::gemm<tropical::MaxPlus>(a.row_major(n, n), b.row_major(n, n), c.row_major(n, n));
            (void)c.to_host();  // waits for the product
        }
        if (set == "pytorch") {
            tropical::DeviceBuffer<std::int32_t> idx(n * n);
            tropical::gemm_with_argmax<tropical::MaxPlus>(a.row_major(n, n), b.row_major(n, n), c.row_major(n, n),
                                                          idx.row_major(n, n));
            tropical::gemm_backward_a<tropical::MaxPlus>(c.row_major(n, n), idx.row_major(n, n), b.row_major(n, n),
                                                         a.row_major(n, n));
            tropical::gemm_backward_b<tropical::MaxPlus>(c.row_major(n, n), idx.row_major(n, n), a.row_major(n, n),
                                                         b.row_major(n, n));
            (void)b.to_host();
        }
        if (set == "all")
            for (const auto& kernel : tropical::kernel_registry()) context.kernel(kernel);
        std::printf("{\"context_s\": %.6f, \"alloc_s\": %.6f, \"work_s\": %.6f, \"kernels_loaded\": %zu}\n", context_s,
                    alloc_s, since(product_start), context.loaded_kernel_count());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "startup_probe: %s\n", e.what());
        return 1;
    }
}
