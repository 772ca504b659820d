// Uses the installed library through its public headers only, in ways that need no GPU: the kernel
// registry, an invalid call that must throw tropical::InvalidArgument across the library boundary,
// and the C ABI. Exit status 0 when everything answers as documented.
#include <cstdint>
#include <cstdio>
#include <string>

#include <tropical/c_api.h>
#include <tropical/gemm.hpp>
#include <tropical/kernels.hpp>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "consumer: FAILED: %s\n", what);
        ++failures;
    }
}

}  // namespace

int main() {
    const auto registry = tropical::kernel_registry();
    std::printf("consumer: the installed tropical-gemm has %zu kernels\n", registry.size());
    check(registry.size() >= 31, "the registry lists at least the 31 kernels of the design");

    const tropical::KernelInfo* kernel =
        tropical::find_kernel(tropical::KernelOperation::Gemm, tropical::KernelVariant::Tiled, tropical::DType::F32,
                              tropical::Semiring::MaxPlus);
    check(kernel != nullptr, "find_kernel(Gemm, Tiled, f32, maxplus) finds a kernel");
    if (kernel) {
        check(tropical::find_kernel(kernel->name) == kernel, "find_kernel by name finds the same kernel");
        std::printf("consumer: f32 max-plus product: %.*s\n", static_cast<int>(kernel->name.size()),
                    kernel->name.data());
    }
    check(tropical::find_kernel("no_such_kernel") == nullptr, "an unknown name finds nothing");

    // Mismatched shapes are rejected before any GPU is needed; the exception crosses the library.
    float* fake = reinterpret_cast<float*>(std::uintptr_t{1} << 40);
    try {
        tropical::gemm<tropical::MaxPlus>(tropical::row_major<const float>(fake, 4, 3),
                                          tropical::row_major<const float>(fake, 5, 2),
                                          tropical::row_major(fake, 4, 2));
        check(false, "mismatched shapes throw");
    } catch (const tropical::InvalidArgument& e) {
        std::printf("consumer: mismatched shapes: %s\n", e.what());
        check(std::string(e.what()).find("must be") != std::string::npos, "the message says what is expected");
    } catch (const tropical::Error& e) {
        std::fprintf(stderr, "consumer: unexpected %s: %s\n", tropical::to_string(e.status()), e.what());
        check(false, "mismatched shapes throw InvalidArgument");
    }

    // The C ABI, from C++.
    const tropical_matrix a{fake, 4, 3, 3, TROPICAL_ROW_MAJOR, 0};
    const tropical_status status = tropical_gemm(TROPICAL_MINPLUS, TROPICAL_F32, &a, &a, &a, 1, nullptr);
    check(status == TROPICAL_INVALID_ARGUMENT, "the C ABI reports an invalid argument");
    std::printf("consumer: C ABI: %s: %s\n", tropical_status_string(status), tropical_last_error_message());

    if (failures) return 1;
    std::printf("consumer: OK\n");
    return 0;
}
