// The Dense and Wide kernels' device code (kernels/dense.cuh, kernels/wide.cuh) run on the CPU by
// tests/support/device_emulation.hpp, against the reference: every type and semiring, plain (also
// accumulating) and with argmax, as the host plans them (validate, plan: the kernel, its grid and
// parameters), for the tensor networks' small contiguous products: one and several products per
// block at a time, a last group short of products, the unrolled K (8, 16, 32) and the general loop,
// sides below the tile (Wide: rows of a thread past M), aligned gaps between the matrices, a
// broadcast operand, the argmax in either layout, ties, NaN, infinities and integer range ends, and
// a grid smaller than the work. CI has no GPU: this is where the kernels' staging maps, vector loads
// and barriers, and the argmax twins' tracking, are checked there (tests/dense_gpu_test.cpp runs
// such products on a GPU).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <tropical/kernels.hpp>
#include "support/gemm_test_util.hpp"

#include "support/emulated_products.hpp"

using namespace tropical;
using namespace tropical::testing;
using tropical::testing::emulated::Problem;

namespace {

// The Dense rows' tile and block (kernels/catalogue.def), checked against the catalogue below.
struct DenseKernels {
    static constexpr KernelVariant variant = KernelVariant::Dense;
    using Tag = tg::Dense;
    using Tile = tg::Tile<32, 32, 32, 1, 4, 32>;
    static constexpr int threads = 256;
};

// The Wide rows': 64 x 64, 4 x 4 results a thread, a K of up to 32 (16 for 64-bit types, whose two
// groups' operands fill the same 48 KB).
template <class T>
struct WideKernels {
    static constexpr KernelVariant variant = KernelVariant::Wide;
    using Tag = tg::Wide;
    static constexpr int bk = sizeof(T) == 8 ? 16 : 32;
    using Tile = tg::Tile<64, 64, bk, 4, 4, bk>;
    static constexpr int threads = 256;
};

template <class S, class T>
void check(Rng& rng, const Problem& x, bool edges = false) {
    emulated::check<DenseKernels, S, T>(rng, x, edges);
}

template <class S, class T>
void check_wide(Rng& rng, const Problem& x, bool edges = false) {
    emulated::check<WideKernels<T>, S, T>(rng, x, edges);
}

// A Wide batch: the plan takes the Wide kernels from a product per multiprocessor (132 on the
// emulated H200).
constexpr std::int64_t kWideBatch = 132;

// Row-major A, B and C, each one array (the Dense kernels' layout), `count` products `gap` elements
// apart (a multiple of 4: every matrix of every type on a 16-byte boundary); the argmax column-major
// or padded as `salt` says (the kernels store it as vectors where its rows are contiguous and
// aligned, else element by element).
Geometries dense(std::int64_t count, std::int64_t gap, int salt) {
    Geometries g = with_count(Geometries{}, count);
    g.a.gap = g.b.gap = g.c.gap = gap;
    g.argmax.layout = salt % 2 ? Layout::ColMajor : Layout::RowMajor;
    g.argmax.pad = salt % 3, g.argmax.gap = salt % 2;
    return g;
}

template <class C>
class DenseEmulation : public ::testing::Test {};
TYPED_TEST_SUITE(DenseEmulation, AsanSizedCases, CaseName);

TEST(DenseEmulationRows, EveryDenseAndWideRowHasTheEmulatedTile) {
    emulated::expect_rows<DenseKernels>(40);  // plain and argmax, every type and semiring
    emulated::expect_rows<WideKernels<float>>(10, DType::F32);
    emulated::expect_rows<WideKernels<double>>(10, DType::F64);
    emulated::expect_rows<WideKernels<std::int32_t>>(10, DType::I32);
    emulated::expect_rows<WideKernels<std::int64_t>>(10, DType::I64);
}

// 16^3 (four products a block at a time, the last group short), 32 x 32 x 8 and 32^3 (one), sides
// that put several in a block, K past the unrolled ones (12, 24) and short of them (4); ties, so
// that equal terms meet and the smallest k must win.
TYPED_TEST(DenseEmulation, SmallProducts) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Problem> problems = {
        {16, 16, 16, dense(6, 0, 0), Values::Ties},
        {32, 32, 8, dense(2, 4, 1)},
        {32, 32, 32, dense(1, 0, 2), Values::Ties},
        {5, 12, 8, dense(7, 4, 3), Values::Ties},
        {9, 16, 12, dense(3, 0, 4)},
        {31, 8, 24, dense(2, 8, 5), Values::Ties},
        {1, 4, 4, dense(9, 0, 1), Values::Ties},
    };
    for (const Problem& x : problems) check<S, T>(rng, x);
}

// A or B shared by every product (a batch stride of 0); one block for all the groups in turn.
TYPED_TEST(DenseEmulation, BroadcastAndOneBlock) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const bool broadcast_a : {true, false}) {
        Geometries g = dense(5, 0, broadcast_a ? 1 : 2);
        (broadcast_a ? g.a : g.b).broadcast = true;
        check<S, T>(rng, {12, 16, 8, g, Values::Ties});
    }
    check<S, T>(rng, {16, 16, 16, dense(11, 4, 3), Values::Ties, true});
}

TYPED_TEST(DenseEmulation, EdgeValues) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    check<S, T>(rng, {16, 16, 16, dense(3, 0, 0)}, true);
    check<S, T>(rng, {7, 8, 32, dense(2, 4, 1)}, true);
}

// The Wide kernels: one 64 x 64 product per block at a time (a K of 16, unrolled) and narrower ones
// several at a time (two of 40 x 40, the general loop with a K of 8 or 12; three of 24 x 64 with a
// K of 4), M and N not multiples of 4, a last group short of products, one block for all of them.
TYPED_TEST(DenseEmulation, WideProducts) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    check_wide<S, T>(rng, {64, 64, 16, dense(kWideBatch, 0, 0), Values::Ties});
    check_wide<S, T>(rng, {37, 40, 12, dense(kWideBatch + 1, 4, 1), Values::Ties});
    check_wide<S, T>(rng, {24, 64, 4, dense(kWideBatch, 0, 2)});
    check_wide<S, T>(rng, {40, 36, 8, dense(kWideBatch + 5, 4, 3), Values::Ties, true});
    check_wide<S, T>(rng, {44, 64, 16, dense(kWideBatch, 0, 4)}, true);
}

}  // namespace
