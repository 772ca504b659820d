// The Vector kernels' device code (kernels/vector.cuh) run on the CPU by
// tests/support/device_emulation.hpp, against the reference: every type and semiring, plain (also
// accumulating) and with argmax, as the host plans them (validate, plan: the kernel, its grid and
// parameters), for A of one to four rows, K within one pass of a block and over several with a short
// last one, N not a multiple of a block's columns, every layout of A, C and the argmax, batches
// with gaps and broadcasts, ties, NaN, infinities and integer range ends, and grids smaller than the
// work. CI has no GPU: this is where the kernels' indexing, edges, shuffles and barriers are checked
// there (tests/vector_gpu_test.cpp runs the same cases on a GPU).
#include <gtest/gtest.h>

#include <vector>

#include <tropical/kernels.hpp>
#include "support/gemm_test_util.hpp"

#include "support/emulated_products.hpp"

using namespace tropical;
using namespace tropical::testing;
using tropical::testing::emulated::Problem;

namespace {

// The Vector rows' tile and block (kernels/catalogue.def), checked against the catalogue below.
struct VectorKernels {
    static constexpr KernelVariant variant = KernelVariant::Vector;
    using Tag = tg::Vector;
    using Tile = tg::Tile<4, 8, 64, 4, 1, 1>;
    static constexpr int threads = 512;
};

template <class S, class T>
void check(Rng& rng, const Problem& x, bool edges = false) {
    emulated::check<VectorKernels, S, T>(rng, x, edges);
}

// Geometries whose B is row-major (the Vector kernels' layout), A, C and argmax as combination says.
Geometries row_major_b(int combination, int salt) { return layout_combination(combination & ~2, salt); }

template <class C>
class VectorEmulation : public ::testing::Test {};
TYPED_TEST_SUITE(VectorEmulation, AsanSizedCases, CaseName);

TEST(VectorEmulationRows, EveryVectorRowHasTheEmulatedTile) {
    emulated::expect_rows<VectorKernels>(40);  // plain and argmax, every type and semiring
}

// A of 1 to 4 rows; K of one group per thread (64), within a pass, over passes with a short last
// one; N of one column, short of a block's 8, and many blocks; ties so that equal values meet in
// different groups, warps and passes, and the smallest k must win.
TYPED_TEST(VectorEmulation, RowsTimesAMatrix) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Problem> problems = {
        {1, 1, 64, row_major_b(0, 1)},
        {1, 37, 700, row_major_b(1, 2), Values::Ties},
        {2, 8, 1024, row_major_b(4, 3)},
        {3, 20, 1025, row_major_b(5, 4), Values::Ties},
        {4, 9, 2100, row_major_b(6, 5), Values::Ties},
        {1, 130, 200, row_major_b(7, 6)},
    };
    for (const Problem& x : problems) check<S, T>(rng, x);
}

// Batches, with gaps between A's and C's matrices, and A or B broadcast; one block for every tile
// and product in turn.
TYPED_TEST(VectorEmulation, BatchesAndOneBlock) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const int combination : {0, 1, 4}) {
        Geometries g = with_count(row_major_b(combination, 7), 3);
        g.a.gap = 3, g.c.gap = 5, g.argmax.gap = 2;
        g.b.broadcast = combination == 1;
        g.a.broadcast = combination == 4;
        check<S, T>(rng, {2, 19, 300, g, Values::Ties});
    }
    check<S, T>(rng, {4, 17, 1100, with_count(row_major_b(5, 8), 2), Values::Ties, true});
}

TYPED_TEST(VectorEmulation, EdgeValues) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    check<S, T>(rng, {3, 21, 130, row_major_b(0, 9)}, true);
    check<S, T>(rng, {1, 12, 1500, row_major_b(1, 10)}, true);
}

}  // namespace
