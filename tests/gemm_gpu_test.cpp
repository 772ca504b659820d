// The GPU kernels against the CPU reference, for every element type and semiring: gemm (small-tile
// and big-tile kernels), gemm with argmax, batched gemm, accumulate, and the backward kernels; every
// layout combination, padded leading dimensions, and outputs poisoned before each launch so that a
// missed or stray write shows.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

// Small and odd shapes, K = 0 and K = 1, tall-skinny and short-wide, one larger product, and shapes
// above 256 in M or N, where gemm switches from the small-tile kernels to the big-tile ones.
const std::vector<Shape> kShapes = {
    {1, 1, 1},     {7, 5, 3},     {33, 65, 17},    {129, 127, 131}, {257, 255, 1},  {64, 48, 0},   {100, 90, 1},
    {1000, 3, 50}, {3, 1000, 50}, {300, 400, 500}, {600, 130, 70},  {256, 256, 40}, {130, 257, 9},
};

// Shapes for the layout sweeps: one for the small-tile kernels, one above 256 in M, one in N.
const std::vector<Shape> kLayoutShapes = {{33, 65, 17}, {260, 70, 45}, {45, 290, 20}};

template <class C>
class GemmGpu : public ::testing::Test {};
TYPED_TEST_SUITE(GemmGpu, AllCases, CaseName);

template <class C>
class BackwardGpu : public ::testing::Test {};
TYPED_TEST_SUITE(BackwardGpu, FloatCases, CaseName);

// Layouts and paddings that change from shape to shape and from one type parameter to the next.
template <class C>
Geometries geometry_for(std::size_t shape_index) {
    const int id = case_index<C>();
    return layout_combination(static_cast<int>((shape_index * 3 + static_cast<std::size_t>(id)) % 8),
                              static_cast<int>(shape_index) + id);
}

unsigned char poison_for(std::size_t i) { return i % 2 ? kPoisonFF : kPoison; }

TYPED_TEST(GemmGpu, MatchesTheReferenceOnEveryShape) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (std::size_t i = 0; i < kShapes.size(); ++i)
        check_gemm<S, T>(rng, kShapes[i], geometry_for<TypeParam>(i), Values::Typical, {}, poison_for(i));
}

TYPED_TEST(GemmGpu, EveryLayoutCombination) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const Shape& shape : kLayoutShapes)
        for (int combination = 0; combination < 8; ++combination)
            check_gemm<S, T>(rng, shape, layout_combination(combination, case_index<TypeParam>() + 1));
}

TYPED_TEST(GemmGpu, AccumulatesIntoC) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Shape> shapes = {{1, 1, 1},      {7, 5, 3},   {129, 127, 131},
                                       {300, 200, 64}, {40, 30, 0}, {20, 300, 1}};
    for (std::size_t i = 0; i < shapes.size(); ++i)
        check_gemm<S, T>(rng, shapes[i], geometry_for<TypeParam>(i + 5), Values::Typical, {.accumulate = true});
}

// Accumulating into a C with values far from the new terms: old C wins some elements, loses others.
TYPED_TEST(GemmGpu, AccumulatesWithTies) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    check_gemm<S, T>(rng, {70, 300, 33}, geometry_for<TypeParam>(3), Values::Ties, {.accumulate = true});
}

TYPED_TEST(GemmGpu, ArgmaxMatchesTheReferenceOnEveryShape) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (std::size_t i = 0; i < kShapes.size(); ++i)
        check_gemm_argmax<S, T>(rng, kShapes[i], geometry_for<TypeParam>(i + 1), Values::Typical, {},
                                poison_for(i + 1));
}

// Values in {0, 1, 2} (and the zero): most elements are attained by several k, across K-slices and
// tiles; the argmax must be the smallest of them, and -1 where every term is the zero.
TYPED_TEST(GemmGpu, ArgmaxTiesPickTheSmallestK) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Shape> shapes = {{33, 65, 17}, {129, 127, 131}, {300, 260, 100},
                                       {5, 7, 1000}, {64, 64, 2},     {200, 3, 1}};
    for (std::size_t i = 0; i < shapes.size(); ++i)
        check_gemm_argmax<S, T>(rng, shapes[i], geometry_for<TypeParam>(i + 2), Values::Ties);
}

TYPED_TEST(GemmGpu, ArgmaxEveryLayoutCombination) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const Shape& shape : kLayoutShapes)
        for (int combination = 0; combination < 8; ++combination)
            check_gemm_argmax<S, T>(rng, shape, layout_combination(combination, case_index<TypeParam>() + 2),
                                    combination % 2 ? Values::Ties : Values::Typical);
}

TYPED_TEST(GemmGpu, BatchedMatchesTheReference) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    struct Batch {
        Shape shape;
        std::int64_t count, gap_a, gap_b, gap_c;
        bool accumulate;
    };
    const std::vector<Batch> batches = {
        {{33, 65, 17}, 5, 0, 0, 0, false},  {{7, 5, 3}, 17, 3, 1, 2, false},   {{129, 64, 40}, 3, 7, 0, 5, false},
        {{300, 50, 20}, 2, 0, 9, 1, false}, {{64, 64, 0}, 4, 0, 0, 3, false},  {{1, 1, 1}, 9, 1, 1, 1, false},
        {{33, 65, 17}, 4, 2, 2, 2, true},   {{40, 270, 12}, 3, 0, 4, 0, true}, {{16, 16, 16}, 1, 0, 0, 0, false},
    };
    for (std::size_t i = 0; i < batches.size(); ++i) {
        const Batch& batch = batches[i];
        Geometries g = with_count(geometry_for<TypeParam>(i), batch.count);
        g.a.gap = batch.gap_a;
        g.b.gap = batch.gap_b;
        g.c.gap = batch.gap_c;
        check_gemm<S, T>(rng, batch.shape, g, Values::Typical, {.accumulate = batch.accumulate, .batched_api = true},
                         poison_for(i));
    }
}

// The backward kernels from random grad_C and argmax (with -1 entries), for A and B, overwriting
// (the gradient buffer is poisoned first, with 0xFF = NaN half of the time) and accumulating.
TYPED_TEST(BackwardGpu, MatchesTheReferenceOnEveryShape) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (std::size_t i = 0; i < kShapes.size(); ++i) {
        if (kShapes[i].k == 0) continue;
        for (bool for_a : {true, false})
            for (bool accumulate : {false, true})
                check_backward<S, T>(rng, for_a, kShapes[i], geometry_for<TypeParam>(i), {.accumulate = accumulate},
                                     false, poison_for(i + (accumulate ? 1 : 0)));
    }
}

TYPED_TEST(BackwardGpu, EveryLayoutCombination) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const Shape& shape : kLayoutShapes)
        for (int combination = 0; combination < 8; ++combination)
            for (bool for_a : {true, false})
                check_backward<S, T>(rng, for_a, shape, layout_combination(combination, case_index<TypeParam>()),
                                     {.accumulate = combination % 2 == 1});
}

// Half of the argmax entries on k = 0: hundreds of atomic additions meet on the same elements.
TYPED_TEST(BackwardGpu, ManyContributionsToOneElement) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const Shape& shape : {Shape{300, 200, 5}, Shape{64, 600, 3}, Shape{700, 32, 1}})
        for (bool for_a : {true, false}) check_backward<S, T>(rng, for_a, shape, layout_combination(5, 1), {}, true);
}

// The real pipeline: argmax from the forward kernel, then both backward kernels on it.
TYPED_TEST(BackwardGpu, FromTheForwardArgmax) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    constexpr Semiring ring = S::value;
    const Shape s{150, 90, 60};
    for (Values values : {Values::Typical, Values::Ties}) {
        const Geometries g = layout_combination(values == Values::Ties ? 6 : 3, 2);
        const auto a = random_matrix<T>(rng, ring, values, s.m, s.k, g.a);
        const auto b = random_matrix<T>(rng, ring, values, s.k, s.n, g.b);
        const auto c = make_matrix<T>(s.m, s.n, g.c);
        const auto argmax0 = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
        const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c, argmax0);
        const auto [actual_c, argmax] = gpu_gemm_argmax<S>(a, b, c, argmax0);
        ASSERT_TRUE(exactly_equal("argmax", expected_argmax, argmax));
        const auto grad_c = random_gradient<T>(rng, s.m, s.n, g.c);
        for (bool for_a : {true, false}) {
            const auto grad = for_a ? make_matrix<T>(s.m, s.k, g.a) : make_matrix<T>(s.k, s.n, g.b);
            const auto [expected, scale] = reference_backward<T>(ring, for_a, grad_c, argmax, a, b, grad, false);
            const auto actual = gpu_backward<S>(for_a, grad_c, argmax, a, b, grad);
            EXPECT_TRUE(close(for_a ? "grad_A" : "grad_B", expected, actual, scale, backward_rtol<T>()));
        }
    }
}

}  // namespace
