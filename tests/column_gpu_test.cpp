// The Column kernels on the GPU: a B of at most 4 columns (a matrix times column vectors, a
// Bellman-Ford relaxation) times a row-major A (src/gemm/plan.cpp's column_fits), plain (also
// accumulating) and with argmax, every type and semiring. Each test first checks that the library
// plans the Column kernel for its problem on this GPU, so that none passes on another path; then C
// and argmax against the reference, exactly, outputs poisoned: ties that meet across a warp's lanes
// and its passes over K (the smallest k wins), K of one k per lane, within one pass and over several
// with a short last one, M short of and past a block's rows, every layout of B, C and the argmax,
// batches with gaps and broadcasts and of a product per multiprocessor, NaN, infinities, -0 and
// integer range ends.
// tests/column_emulation_test.cpp runs the same device code on the CPU, where CI has no GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <tropical/context.hpp>
#include <tropical/kernels.hpp>

#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"
#include "support/planned_kernel.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class C>
class ColumnGpu : public ::testing::Test {};
TYPED_TEST_SUITE(ColumnGpu, AllCases, CaseName);

// Geometries whose A is row-major (the Column kernels' layout); B, C and argmax as `combination` says.
Geometries row_major_a(int combination, int salt) { return layout_combination(combination & ~1, salt); }

template <class S, class T>
void expect_column(const BatchProblem& p) {
    expect_planned<S, T>(detail::Operation::Gemm, p, KernelVariant::Column);
    expect_planned<S, T>(detail::Operation::GemmArgmax, p, KernelVariant::Column);
}

// Plain, accumulating and with argmax on one problem.
template <class S, class T>
void check_all(Rng& rng, const BatchProblem& p, const Geometries& g, Values values) {
    expect_column<S, T>(p);
    const Launch launch{.batched_api = p.count > 1};
    check_gemm<S, T>(rng, p.shape, g, values, launch);
    check_gemm<S, T>(rng, p.shape, g, values, {.accumulate = true, .batched_api = p.count > 1});
    check_gemm_argmax<S, T>(rng, p.shape, g, values, launch);
}

// One to four columns; K of one k per lane (32), within a pass (512), over passes with a short last
// one; M short of a block's 8 rows and many blocks (1024 x 1024 times a column: a Bellman-Ford
// step). (At most 4 rows with a column-major B take the Column kernels too: the emulated test has that
// case; expect_planned plans a row-major B, which there is the Vector kernels'.)
TYPED_TEST(ColumnGpu, MatrixTimesColumns) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Shape> shapes = {{5, 1, 32},   {1024, 1, 1024}, {37, 2, 700},
                                       {8, 3, 1025}, {333, 4, 3000},  {4100, 1, 130}};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        SCOPED_TRACE(describe(shapes[i]));
        check_all<S, T>(rng, {shapes[i], 1}, row_major_a(static_cast<int>(i) * 5 % 8, case_index<TypeParam>()),
                        i % 2 ? Values::Ties : Values::Typical);
    }
}

// Batches with gaps between A's and C's matrices, and A or B broadcast; a product per multiprocessor
// with a K of 256 or more (the plan's batches of many products).
TYPED_TEST(ColumnGpu, Batches) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const int combination : {0, 2, 4}) {
        Geometries g = with_count(row_major_a(combination, case_index<TypeParam>()), 5);
        g.a.gap = 3, g.c.gap = 5, g.argmax.gap = 2;
        g.b.broadcast = combination == 2;
        g.a.broadcast = combination == 4;
        check_all<S, T>(rng, {{19, 2, 1300}, 5}, g, Values::Ties);
    }
    const std::int64_t sms = CudaContext::for_device(0).multiprocessor_count();
    check_all<S, T>(rng, {{24, 3, 300}, sms}, with_count(row_major_a(6, case_index<TypeParam>()), sms), Values::Ties);
}

// NaN, both infinities, -0 and (integers) the ends of the range scattered over the operands, and
// A's last row at the zero (C the zero, argmax -1 there).
TYPED_TEST(ColumnGpu, EdgeValues) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    constexpr Semiring ring = S::value;
    for (const Shape& s : {Shape{21, 3, 130}, Shape{300, 1, 2500}}) {
        SCOPED_TRACE(describe(s));
        expect_column<S, T>({s, 1});
        const Geometries g = row_major_a(2, case_index<TypeParam>());
        const auto [a, b] = edge_operands<T>(rng, ring, s, g, 12);
        const auto c = make_matrix<T>(s.m, s.n, g.c);
        EXPECT_TRUE(exactly_equal("C", reference_gemm<T>(ring, a, b, c), gpu_gemm<S>(a, b, c)));
        const auto argmax = make_matrix<std::int32_t>(s.m, s.n, g.argmax, kPoison);
        const auto [want_c, want_argmax] = reference_gemm_argmax<T>(ring, a, b, c, argmax);
        const auto [got_c, got_argmax] = gpu_gemm_argmax<S>(a, b, c, argmax);
        EXPECT_TRUE(exactly_equal("C", want_c, got_c));
        EXPECT_TRUE(exactly_equal("argmax", want_argmax, got_argmax));
    }
}

}  // namespace
