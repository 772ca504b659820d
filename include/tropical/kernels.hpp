#pragma once
// The kernel registry: every kernel the library can launch, by a stable name, in a fixed order. It
// is derived from the kernel catalogue (kernels/catalogue.def), and it is the one list that the
// context, the warm-up tool, the Python package, the tests and the benchmarks iterate over.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <tropical/export.hpp>
#include <tropical/types.hpp>

namespace tropical {

// What a kernel computes.
enum class KernelOperation : std::uint8_t {
    Gemm,        // C = A (x) B
    GemmArgmax,  // the same, plus the index k that attained each C[i,j]
    BackwardA,   // the gradient of A, routed through the argmax (f32/f64; semiring chosen at launch)
    BackwardB,   // the gradient of B
    PackBits,    // booleans in bytes packed along K into 32-bit words (OrAnd's operands)
    Backtrack,   // the walk back through a chain's argmax tables (a Viterbi decoder's best paths)
};

// How it computes it, and so for which shapes it is chosen.
enum class KernelVariant : std::uint8_t {
    Tiled,    // big tiles: products that fill the GPU with them
    SplitK,   // chunks of K: big tiles combined with atomics for a long K over too few tiles (32-bit
              // types); with argmax, small tiles whose threads split K and combine in shared memory
    Batched,  // 64 x 64 tiles: many products of 64..256
    Small,    // 32 x 32 tiles: a few small products
    Scatter,  // backward: grad_C routed through the argmax
    Packed,   // OrAnd on operands packed into 32-bit words (and the kernel that packs them)
    Tiny,     // 16 x 16 tiles, slices of 8: many products with a side or K of at most 16
    Dense,    // whole contiguous products of at most 32^3 read as 16-byte vectors (plain products)
    Walk,     // a thread per row following pointers from step to step (the backtrack)
    Serial,   // argmax over chunks of K in separate blocks (f32, i32), whose (value, k) pairs merge into C
              // and argmax one block at a time per tile: a long K over too few 64 x 64 tiles
    Wide,     // whole contiguous products of up to 64 x 64 x 32 read as 16-byte vectors (plain products)
    Vector,   // A of a few rows (a row vector) times B: strips of B's columns, K split among a block's threads
    Column,   // A times B of a few columns (column vectors): a warp per row of A, K split among its lanes
};

// How the warm-up tool and listings group kernels: gemm (the Tiled, SplitK and Packed products),
// gemm_argmax, batched (the Batched, Small, Tiny, Dense, Wide, Vector and Column products), backward_a, backward_b, pack_bits,
// backtrack.
enum class KernelGroup : std::uint8_t { Gemm, GemmArgmax, Batched, BackwardA, BackwardB, PackBits, Backtrack };

TROPICAL_GEMM_EXPORT std::string_view to_string(KernelOperation operation) noexcept;
TROPICAL_GEMM_EXPORT std::string_view to_string(KernelVariant variant) noexcept;
TROPICAL_GEMM_EXPORT std::string_view to_string(KernelGroup group) noexcept;

struct KernelInfo {
    std::size_t index;      // position in kernel_registry()
    std::string_view name;  // e.g. "tropical_gemm_f32_maxplus": the entry point's name
    KernelOperation operation;
    KernelVariant variant;
    KernelGroup group;  // follows from operation and variant
    DType dtype;
    std::optional<Semiring> semiring;  // empty for kernels that take it at launch (backward)
};

// All kernels, in the catalogue's order.
TROPICAL_GEMM_EXPORT std::span<const KernelInfo> kernel_registry() noexcept;

// The kernel with this name, or nullptr.
TROPICAL_GEMM_EXPORT const KernelInfo* find_kernel(std::string_view name) noexcept;

// The kernel of an operation and variant for a type and semiring (the semiring is ignored by
// kernels that take it at launch), or nullptr where the catalogue has none (e.g. backward for
// integers, split-K for 64-bit types).
TROPICAL_GEMM_EXPORT const KernelInfo* find_kernel(KernelOperation operation, KernelVariant variant, DType dtype,
                                                   Semiring semiring) noexcept;

}  // namespace tropical
