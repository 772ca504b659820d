// The Column kernels' device code (kernels/column.cuh) run on the CPU by
// tests/support/device_emulation.hpp, against the reference: every type and semiring, plain (also
// accumulating) and with argmax, as the host plans them (validate, plan: the kernel, its grid and
// parameters), for B of one to four columns, K of one k per lane, within one pass of a warp and over
// several with a short last one, M not a multiple of a block's rows, every layout of B, C and the
// argmax, batches with gaps and broadcasts, ties, NaN, infinities and integer range ends, and grids
// smaller than the work, and a column-major A (which the plan gives other kernels) through their
// general loads. CI has no GPU: this is where the kernels' indexing, edges, shuffles and
// barriers are checked there (tests/column_gpu_test.cpp runs the same cases on a GPU).
#include <gtest/gtest.h>

#include <vector>

#include <tropical/kernels.hpp>
#include "support/gemm_test_util.hpp"

#include "support/emulated_products.hpp"

using namespace tropical;
using namespace tropical::testing;
using tropical::testing::emulated::Problem;

namespace {

// The Column rows' tile and block (kernels/catalogue.def), checked against the catalogue below.
struct ColumnKernels {
    static constexpr KernelVariant variant = KernelVariant::Column;
    using Tag = tg::Column;
    using Tile = tg::Tile<8, 4, 32, 1, 4, 1>;
    static constexpr int threads = 256;
};

template <class S, class T>
void check(Rng& rng, const Problem& x, bool edges = false) {
    emulated::check<ColumnKernels, S, T>(rng, x, edges);
}

// Geometries whose A is row-major (the Column kernels' layout), B, C and argmax as combination says.
Geometries row_major_a(int combination, int salt) { return layout_combination(combination & ~1, salt); }

template <class C>
class ColumnEmulation : public ::testing::Test {};
TYPED_TEST_SUITE(ColumnEmulation, AsanSizedCases, CaseName);

TEST(ColumnEmulationRows, EveryColumnRowHasTheEmulatedTile) {
    emulated::expect_rows<ColumnKernels>(40);  // plain and argmax, every type and semiring
}

// B of 1 to 4 columns; K of one k per lane (32), within a pass (512), over passes with a short last
// one; M short of a block's 8 rows, past it, and many blocks; a few rows with a column-major B (a
// row-major one would take the Vector kernels); ties so that equal values meet in different lanes
// and passes, and the smallest k must win.
TYPED_TEST(ColumnEmulation, MatrixTimesColumns) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Problem> problems = {
        {5, 1, 32, row_major_a(0, 1)},
        {37, 1, 700, row_major_a(2, 2), Values::Ties},
        {8, 2, 512, row_major_a(4, 3)},
        {20, 3, 1025, row_major_a(6, 4), Values::Ties},
        {130, 4, 2100, row_major_a(2, 5), Values::Ties},
        {300, 1, 200, row_major_a(0, 6)},
        {3, 2, 100, row_major_a(2, 7), Values::Ties},
    };
    for (const Problem& x : problems) check<S, T>(rng, x);
}

// Batches, with gaps between A's and C's matrices, and A or B broadcast; one block for every strip
// of rows and product in turn.
TYPED_TEST(ColumnEmulation, BatchesAndOneBlock) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const int combination : {0, 2, 4}) {
        Geometries g = with_count(row_major_a(combination, 7), 3);
        g.a.gap = 3, g.c.gap = 5, g.argmax.gap = 2;
        g.b.broadcast = combination == 2;
        g.a.broadcast = combination == 4;
        check<S, T>(rng, {19, 2, 300, g, Values::Ties});
    }
    check<S, T>(rng, {40, 4, 1100, with_count(row_major_a(6, 8), 2), Values::Ties, true});
}

// A column-major A, which the plan gives other kernels: the kernels' general stride (their own path
// of loads) still computes it, on one block.
TYPED_TEST(ColumnEmulation, ColumnMajorAUnplanned) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    check<S, T>(rng, {20, 3, 700, with_count(layout_combination(1 | 4, 11), 2), Values::Ties, true, true});
}

TYPED_TEST(ColumnEmulation, EdgeValues) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    check<S, T>(rng, {21, 3, 130, row_major_a(0, 9)}, true);
    check<S, T>(rng, {12, 1, 1500, row_major_a(2, 10)}, true);
}

}  // namespace
