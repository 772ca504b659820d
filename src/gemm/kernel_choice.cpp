// Which kernel runs a request, and how: the rules in one place, so that tests can check them
// without a GPU (tests/kernel_choice_test.cpp).
#include "gemm/kernel_choice.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "registry/kernel_source.hpp"
#include <tropical/error.hpp>

namespace tropical::detail {
namespace {

// Split-K: the fewest k per chunk (16 slices of 8: the block's prologue and its atomic epilogue
// stay a few percent of its work), and the most chunks.
constexpr std::int64_t kMinSplitChunk = 128;
constexpr std::int64_t kMaxSplits = 1024;

const KernelInfo* required(const KernelInfo* kernel, std::string_view what, const Request& q) {
    if (!kernel)
        throw Unsupported(fmt::format("no {} kernel for {} {}", what, to_string(q.dtype), to_string(q.semiring)));
    return kernel;
}

// The kernels the registry names <prefix><type>_<semiring> (null where it has none), looked up
// by name once.
using KernelTable = std::array<std::array<const KernelInfo*, 3>, 4>;
KernelTable kernels_named(std::string_view prefix) {
    KernelTable t{};
    for (DType d : {DType::F32, DType::F64, DType::I32, DType::I64})
        for (Semiring r : {Semiring::MaxPlus, Semiring::MinPlus, Semiring::MaxMul})
            t[static_cast<int>(d)][static_cast<int>(r)] = find_kernel(fmt::format("{}{}_{}", prefix, to_string(d), to_string(r)));
    return t;
}

// The small-tile product kernels.
const KernelInfo* small_kernel(DType dtype, Semiring semiring) {
    static const KernelTable table = kernels_named("tropical_small_");
    return table[static_cast<int>(dtype)][static_cast<int>(semiring)];
}

// The split-K product kernels (32-bit types only).
const KernelInfo* splitk_kernel(DType dtype, Semiring semiring) {
    static const KernelTable table = kernels_named("tropical_splitk_");
    return table[static_cast<int>(dtype)][static_cast<int>(semiring)];
}

// Products go to the kernel with the largest tile that the shape fills (at least 3/4 of the tiles'
// area is inside C) and that still gives the GPU enough blocks: the big-tile gemm kernel with two
// blocks per multiprocessor; failing that, its split-K twin, with K cut into chunks of at least
// kMinSplitChunk where that fills at least 3/4 of those block slots in one wave (a long K over few
// tiles: 1024^3, or 256 x 256 x 65536, which would otherwise leave most multiprocessors idle); the
// 64 x 64 batched kernel with one block per multiprocessor; else the 32 x 32 small kernel, which
// gives a single small product 4 to 16 times more blocks than the others.
}  // namespace

Choice choose_kernel(const Request& q, const Shape& s, std::int64_t multiprocessors) {
    switch (q.operation) {
    case Operation::Gemm: {
        auto tiles = [&](const KernelInfo* kernel) -> std::int64_t {
            const KernelFragment& f = fragment_of(*kernel);
            const std::int64_t tiles_m = (s.m + f.tile_m - 1) / f.tile_m, tiles_n = (s.n + f.tile_n - 1) / f.tile_n;
            const double covered = static_cast<double>(s.m) * static_cast<double>(s.n) /
                                   (static_cast<double>(tiles_m * f.tile_m) * static_cast<double>(tiles_n * f.tile_n));
            return covered >= 0.75 ? q.batch * tiles_m * tiles_n : 0;   // 0: the shape does not fill the tiles
        };
        const KernelInfo* gemm = required(find_kernel(KernelGroup::Gemm, q.dtype, q.semiring), "gemm", q);
        const std::int64_t slots = 2 * multiprocessors, gemm_tiles = tiles(gemm);
        if (gemm_tiles > 0 && gemm_tiles >= slots) return {gemm};
        // Split-K combines its chunks with 32-bit atomics into a C that starts at the zero, which
        // one 2-D memset writes where C's matrices follow each other.
        const KernelInfo* splitk = splitk_kernel(q.dtype, q.semiring);
        if (splitk && gemm_tiles > 0 && !q.options.accumulate && follows_on(q.c, q.batch)) {
            const std::int64_t splits = std::min({slots / gemm_tiles, s.k / kMinSplitChunk, kMaxSplits});
            if (splits > 1 && 4 * gemm_tiles * splits >= 3 * slots) return {splitk, splits};
        }
        const KernelInfo* batched = required(find_kernel(KernelGroup::Batched, q.dtype, q.semiring), "batched", q);
        if (tiles(batched) >= multiprocessors) return {batched};
        if (const KernelInfo* small = small_kernel(q.dtype, q.semiring)) return {small};
        return {batched};
    }
    case Operation::GemmArgmax: return {required(find_kernel(KernelGroup::GemmArgmax, q.dtype, q.semiring), "gemm_argmax", q)};
    case Operation::BackwardA: return {required(find_kernel(KernelGroup::BackwardA, q.dtype, q.semiring), "backward_a", q)};
    case Operation::BackwardB: return {required(find_kernel(KernelGroup::BackwardB, q.dtype, q.semiring), "backward_b", q)};
    }
    throw Unsupported("unknown operation");
}

}  // namespace tropical::detail
