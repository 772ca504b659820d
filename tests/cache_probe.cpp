// A separate process that fills or reads a kernel cache with the real NVRTC, for the tests that
// need several processes: cache_probe <cache dir> <arch> <kernel name>...
// Prints "compiles=N disk_hits=N nvrtc_loaded=0|1" and exits 0 on success.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include <tropical/error.hpp>
#include "loader/kernel_binaries.hpp"
#include "nvrtc/nvrtc_library.hpp"

int main(int argc, char** argv) {
    using namespace tropical;
    if (argc < 4) {
        std::fprintf(stderr, "usage: cache_probe <cache dir> <arch> <kernel>...\n");
        return 2;
    }
    try {
        detail::KernelBinaries binaries({true, argv[1]}, detail::nvrtc_compiler_source());
        const int arch = std::atoi(argv[2]);
        for (int i = 3; i < argc; ++i) {
            const KernelInfo* kernel = find_kernel(argv[i]);
            if (!kernel) {
                std::fprintf(stderr, "unknown kernel %s\n", argv[i]);
                return 2;
            }
            if (binaries.get(*kernel, arch)->image.empty()) return 3;
        }
        const auto stats = binaries.stats();
        std::printf("compiles=%d disk_hits=%d nvrtc_loaded=%d\n", stats.compiles, stats.disk_hits,
                    detail::nvrtc_loaded() ? 1 : 0);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cache_probe: %s\n", e.what());
        return 1;
    }
}
