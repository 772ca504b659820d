#pragma once
// The kernel registry: every kernel the library can launch, by a stable name. It is the one list
// that the context, the warm-up tool, the tests and the benchmarks iterate over.
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include <tropical/export.hpp>
#include <tropical/types.hpp>

namespace tropical {

enum class KernelGroup : std::uint8_t {
    Gemm,        // C = A (x) B
    GemmArgmax,  // the same, plus the index k that attained each C[i,j]
    Batched,     // many small products at once
    BackwardA,   // gradient of A from the argmax (f32/f64; semiring chosen at launch)
    BackwardB,   // gradient of B from the argmax
};

TROPICAL_GEMM_EXPORT std::string_view to_string(KernelGroup group) noexcept;

struct KernelInfo {
    std::size_t index;                  // position in kernel_registry()
    std::string_view name;              // e.g. "tropical_gemm_f32_maxplus": the entry point's name
    KernelGroup group;
    DType dtype;
    std::optional<Semiring> semiring;   // empty for backward kernels, which take it at launch
};

// All kernels, in a fixed order.
TROPICAL_GEMM_EXPORT std::span<const KernelInfo> kernel_registry() noexcept;

// The kernel with this name, or nullptr.
TROPICAL_GEMM_EXPORT const KernelInfo* find_kernel(std::string_view name) noexcept;

// The kernel of a group for a type and semiring (semiring ignored for backward groups), or nullptr
// where the registry has none (e.g. backward for integers).
TROPICAL_GEMM_EXPORT const KernelInfo* find_kernel(KernelGroup group, DType dtype, Semiring semiring) noexcept;

}  // namespace tropical
