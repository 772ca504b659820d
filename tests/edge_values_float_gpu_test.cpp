// The GPU kernels on the float values where semirings are easy to get wrong: infinities and NaN,
// sparse NaN in large products, MaxMul with zeros and infinities, and empty operands
// (edge_values_gpu_test.cpp: the values every type has).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "support/edge_values.hpp"
#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

TYPED_TEST(FloatEdgeValuesGpu, InfinitiesAndNaN) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    if (reference::is_bottleneck(ring)) {
        // min and max make no NaN of infinities: only a NaN input does, and it wins.
        Small<S, T> p(3, 3, 2, {T(5), nan, T(1), nan, T(3), nan, inf, -inf, T(2)}, {T(1), T(2), T(1), T(3), -inf, inf});
        const auto r = p.run();
        for (std::int64_t j = 0; j < 2; ++j) {
            EXPECT_TRUE(std::isnan(r.c(0, j)));
            EXPECT_EQ(r.argmax(0, j), 1);
            EXPECT_TRUE(std::isnan(r.c(1, j)));
            EXPECT_EQ(r.argmax(1, j), 0);
            EXPECT_FALSE(std::isnan(r.c(2, j)));
        }
        return;
    }
    const bool mul = ring == Semiring::MaxMul;
    const bool min = ring == Semiring::MinPlus;
    // Rows of A (K = 3) against columns of B:
    //   row 0: [5, NaN, 1]      -> NaN at k = 1 whatever B holds (finite column)
    //   row 1: the annihilating pair at k = 2 after a finite best at k = 0
    //   row 2: +-inf that is not annihilated: the zero's opposite wins (MaxPlus: +inf, MinPlus: -inf, MaxMul: inf)
    //   row 3: NaN at k = 0 and k = 2: the first one
    const T annihilate_a = mul ? T(0) : (min ? -inf : inf);  // 0 * inf, or inf + -inf
    const T annihilate_b = mul ? inf : (min ? inf : -inf);
    const T strong = mul ? inf : (min ? -inf : inf);
    Small<S, T> p(4, 3, 2,
                  {T(5), nan, T(1),           //
                   T(4), T(1), annihilate_a,  //
                   T(1), strong, T(2),        //
                   nan, T(3), nan},
                  {T(1), T(2),  //
                   T(1), T(3),  //
                   annihilate_b, T(4)});
    const auto r = p.run();
    EXPECT_TRUE(std::isnan(r.c(0, 0)));
    EXPECT_EQ(r.argmax(0, 0), 1);
    EXPECT_TRUE(std::isnan(r.c(0, 1)));
    EXPECT_EQ(r.argmax(0, 1), 1);
    EXPECT_TRUE(std::isnan(r.c(1, 0)));
    EXPECT_EQ(r.argmax(1, 0), 2);
    EXPECT_FALSE(std::isnan(r.c(1, 1)));
    EXPECT_TRUE(is(strong, r.c(2, 0)));
    EXPECT_EQ(r.argmax(2, 0), 1);
    EXPECT_TRUE(is(strong, r.c(2, 1)));
    EXPECT_EQ(r.argmax(2, 1), 1);
    EXPECT_TRUE(std::isnan(r.c(3, 0)));
    EXPECT_EQ(r.argmax(3, 0), 0);

    // Accumulate: a NaN in the old C stays NaN; a NaN term turns a finite old C into NaN.
    auto c = make_matrix<T>(4, 2, {Layout::ColMajor, 2});
    c(0, 0) = T(1);
    c(0, 1) = nan;
    c(1, 0) = T(-3);
    c(1, 1) = nan;
    c(2, 0) = nan;
    c(2, 1) = T(7);
    c(3, 0) = T(0);
    c(3, 1) = T(1);
    const auto expected = reference_gemm<T>(ring, p.a, p.b, c, true);
    const auto actual = gpu_gemm<S>(p.a, p.b, c, {.accumulate = true});
    EXPECT_TRUE(exactly_equal("accumulated C", expected, actual));
    EXPECT_TRUE(std::isnan(actual(0, 0)));
    EXPECT_TRUE(std::isnan(actual(0, 1)));
    EXPECT_TRUE(std::isnan(actual(1, 0)));
    EXPECT_TRUE(std::isnan(actual(1, 1)));
    EXPECT_TRUE(std::isnan(actual(2, 0)));
    EXPECT_TRUE(std::isnan(actual(3, 0)));
}

// NaN in large products, across tiles and K-slices, with the argmax on the first NaN term.
TYPED_TEST(FloatEdgeValuesGpu, SparseNaNInLargeProducts) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    TROPICAL_TEST_RNG(rng);
    const T nan = std::numeric_limits<T>::quiet_NaN();
    for (const Shape s : {Shape{300, 280, 64}, Shape{64, 64, 200}}) {
        const Geometries g = layout_combination(s.m > 256 ? 3 : 4, 1);
        SCOPED_TRACE(describe(s) + "; " + describe(g));
        auto a = random_matrix<T>(rng, ring, Values::Typical, s.m, s.k, g.a);
        auto b = random_matrix<T>(rng, ring, Values::Typical, s.k, s.n, g.b);
        a.for_each([&](std::int64_t, std::int64_t i, std::int64_t k) {
            if (rng.chance(0.002)) a(i, k) = nan;
        });
        b.for_each([&](std::int64_t, std::int64_t k, std::int64_t j) {
            if (rng.chance(0.002)) b(k, j) = nan;
        });
        const auto c0 = make_matrix<T>(s.m, s.n, g.c);
        const auto m0 = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
        EXPECT_TRUE(exactly_equal("C", reference_gemm<T>(ring, a, b, c0), gpu_gemm<S>(a, b, c0)));
        const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c0, m0);
        const auto [c, argmax] = gpu_gemm_argmax<S>(a, b, c0, m0);
        EXPECT_TRUE(exactly_equal("C (with argmax)", expected_c, c));
        EXPECT_TRUE(exactly_equal("argmax", expected_argmax, argmax));
    }
}

// Backward with no term at all (grad_C has no rows for grad_B, no columns for grad_A): the gradient
// is all zeros (overwritten) or unchanged (accumulate), and its padding untouched.
TYPED_TEST(FloatEdgeValuesGpu, BackwardWithAnEmptyGradC) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (bool accumulate : {false, true}) {
        check_backward<S, T>(rng, false, {0, 20, 7}, layout_combination(2, 1), {.accumulate = accumulate}, false,
                             kPoisonFF);
        check_backward<S, T>(rng, true, {20, 0, 7}, layout_combination(5, 1), {.accumulate = accumulate}, false,
                             kPoisonFF);
    }
}

// Products with an empty output are accepted and write nothing.
TYPED_TEST(EdgeValuesGpu, EmptyOutputs) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const Shape s : {Shape{0, 5, 3}, Shape{5, 0, 3}, Shape{0, 0, 0}, Shape{0, 300, 0}}) {
        check_gemm<S, T>(rng, s, layout_combination(3, 1));
        check_gemm<S, T>(rng, s, layout_combination(4, 1), Values::Typical, {.accumulate = true});
        check_gemm_argmax<S, T>(rng, s, layout_combination(6, 1));
    }
}

// MaxMul with zeros and infinities: 0 is the zero (products of 0 never beat it), inf * x = inf for
// x > 0, 0 * inf = NaN.
TYPED_TEST(FloatEdgeValuesGpu, MaxMulZerosAndInfinity) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    if (S::value != Semiring::MaxMul) GTEST_SKIP() << "MaxMul only";
    const T inf = std::numeric_limits<T>::infinity();
    // Rows of A: [0, 0, 0], [2, 0, inf], [0, 3, 0]; columns of B: [5, 1, 0], [0, 0, 7], [inf, 0, 0].
    Small<S, T> p(3, 3, 3, {T(0), T(0), T(0), T(2), T(0), inf, T(0), T(3), T(0)},
                  {T(5), T(0), inf, T(1), T(0), T(0), T(0), T(7), T(0)});
    const auto r = p.run();
    for (std::int64_t j = 0; j < 3; ++j) {
        EXPECT_TRUE(j == 2 ? std::isnan(r.c(0, j)) : is(T(0), r.c(0, j))) << "C(0," << j << ")";
        EXPECT_EQ(r.argmax(0, j), j == 2 ? 0 : -1) << "argmax(0," << j << ")";
    }
    EXPECT_TRUE(std::isnan(r.c(1, 0)));  // 2*5, 0*1, inf*0 = NaN: NaN at k = 2
    EXPECT_EQ(r.argmax(1, 0), 2);
    EXPECT_TRUE(is(inf, r.c(1, 1)));  // 2*0, 0*0, inf*7
    EXPECT_EQ(r.argmax(1, 1), 2);
    EXPECT_TRUE(std::isnan(r.c(1, 2)));  // 2*inf, 0*0, inf*0 = NaN: NaN wins over inf, at k = 2
    EXPECT_EQ(r.argmax(1, 2), 2);
    EXPECT_TRUE(is(T(3), r.c(2, 0)));  // 0*5, 3*1, 0*0
    EXPECT_EQ(r.argmax(2, 0), 1);
    EXPECT_TRUE(is(T(0), r.c(2, 1)));  // all products 0
    EXPECT_EQ(r.argmax(2, 1), -1);
    EXPECT_TRUE(std::isnan(r.c(2, 2)));  // 0*inf first
    EXPECT_EQ(r.argmax(2, 2), 0);
}

// An old C of -0 is read as +0, like every input: no result is -0, accumulated or not, whether the
// product ties it (+0 terms), falls short of it (only the zero's terms) or is empty (K = 0). Small
// and big shapes, so that both the small kernel and the tiled one's vector and edge stores write C.
TYPED_TEST(FloatEdgeValuesGpu, AnOldNegativeZeroIsReadAsPositiveZero) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    const T minus_zero = T(-0.0);
    for (const Shape s : {Shape{3, 2, 5}, Shape{300, 8, 261}}) {
        SCOPED_TRACE(describe(s));
        auto old = make_matrix<T>(s.m, s.n);
        old.fill([&] { return minus_zero; });
        auto plus_zeros = old;
        plus_zeros.fill([] { return T(0); });
        auto a = make_matrix<T>(s.m, s.k), b = make_matrix<T>(s.k, s.n);
        a.fill([&] { return minus_zero; });
        b.fill([&] { return ring == Semiring::MaxMul ? T(3) : minus_zero; });  // every term is +0
        EXPECT_TRUE(exactly_equal("C, +0 terms", plus_zeros, gpu_gemm<S>(a, b, old, {.accumulate = true})));
        EXPECT_TRUE(exactly_equal("reference, +0 terms", plus_zeros, reference_gemm<T>(ring, a, b, old, true)));
        if (ring == Semiring::MaxPlus || ring == Semiring::MaxMin) {  // every term is the zero -inf
            a.fill([] { return -std::numeric_limits<T>::infinity(); });
            EXPECT_TRUE(exactly_equal("C, zero terms", plus_zeros, gpu_gemm<S>(a, b, old, {.accumulate = true})));
        }
        const auto none_a = make_matrix<T>(s.m, 0), none_b = make_matrix<T>(0, s.n);
        EXPECT_TRUE(exactly_equal("C, K = 0", plus_zeros, gpu_gemm<S>(none_a, none_b, old, {.accumulate = true})));
    }
}

}  // namespace
