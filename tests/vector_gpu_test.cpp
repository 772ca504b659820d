// The Vector kernels on the GPU: an A of at most 4 rows (a row vector times a matrix, a Viterbi step
// over one sequence) times a row-major B (src/gemm/plan.cpp's vector_fits), plain (also
// accumulating) and with argmax, every type and semiring. Each test first checks that the library
// plans the Vector kernel for its problem on this GPU, so that none passes on another path; then C
// and argmax against the reference, exactly, outputs poisoned: ties that meet across a block's
// groups of k, its warps and its passes over K (the smallest k wins), K within one pass and over
// several with a short last one, N short of a block's columns, every layout of A, C and the argmax,
// batches with gaps and broadcasts, NaN, infinities, -0 and integer range ends.
// tests/vector_emulation_test.cpp runs the same device code on the CPU, where CI has no GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <tropical/kernels.hpp>

#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"
#include "support/planned_kernel.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class C>
class VectorGpu : public ::testing::Test {};
TYPED_TEST_SUITE(VectorGpu, AllCases, CaseName);

// Geometries whose B is row-major (the Vector kernels' layout); A, C and argmax as `combination` says.
Geometries row_major_b(int combination, int salt) { return layout_combination(combination & ~2, salt); }

template <class S, class T>
void expect_vector(const BatchProblem& p) {
    expect_planned<S, T>(detail::Operation::Gemm, p, KernelVariant::Vector);
    expect_planned<S, T>(detail::Operation::GemmArgmax, p, KernelVariant::Vector);
}

// Plain, accumulating and with argmax on one problem.
template <class S, class T>
void check_all(Rng& rng, const BatchProblem& p, const Geometries& g, Values values) {
    expect_vector<S, T>(p);
    const Launch launch{.batched_api = p.count > 1};
    check_gemm<S, T>(rng, p.shape, g, values, launch);
    check_gemm<S, T>(rng, p.shape, g, values, {.accumulate = true, .batched_api = p.count > 1});
    check_gemm_argmax<S, T>(rng, p.shape, g, values, launch);
}

// One to four rows; K of one k per group of threads (64), within a pass (1024), over passes with a
// short last one; one column, fewer than a block's 8, many blocks (a (1, 1024) Viterbi step).
TYPED_TEST(VectorGpu, RowsTimesAMatrix) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Shape> shapes = {{1, 1, 64},   {1, 1024, 1024}, {2, 37, 700},
                                       {3, 8, 1025}, {4, 333, 3000},  {1, 4100, 130}};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        SCOPED_TRACE(describe(shapes[i]));
        check_all<S, T>(rng, {shapes[i], 1}, row_major_b(static_cast<int>(i) * 5 % 8, case_index<TypeParam>()),
                        i % 2 ? Values::Ties : Values::Typical);
    }
}

// Batches with gaps between A's and C's matrices, and A or B broadcast.
TYPED_TEST(VectorGpu, Batches) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const int combination : {0, 1, 4}) {
        Geometries g = with_count(row_major_b(combination, case_index<TypeParam>()), 5);
        g.a.gap = 3, g.c.gap = 5, g.argmax.gap = 2;
        g.b.broadcast = combination == 1;
        g.a.broadcast = combination == 4;
        check_all<S, T>(rng, {{2, 19, 1300}, 5}, g, Values::Ties);
    }
}

// NaN, both infinities, -0 and (integers) the ends of the range scattered over the operands, and
// A's last row at the zero (C the zero, argmax -1 there).
TYPED_TEST(VectorGpu, EdgeValues) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    constexpr Semiring ring = S::value;
    for (const Shape& s : {Shape{3, 21, 130}, Shape{1, 300, 2500}}) {
        SCOPED_TRACE(describe(s));
        expect_vector<S, T>({s, 1});
        const Geometries g = row_major_b(1, case_index<TypeParam>());
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
