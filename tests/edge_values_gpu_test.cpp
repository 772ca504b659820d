// The GPU kernels on the values where semirings are easy to get wrong: infinities, NaN, the integer
// zeros (exact and absorbing), the ends of the documented integer ranges, MaxMul with zeros and
// infinities, argmax on NaN, on ties and on rows where nothing beats the zero, and K = 0.
// Each case is checked against the reference and, for small hand-made products, against the value
// worked out by hand.
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

// Random products whose entries are drawn from the specials (and now and then a typical value), in
// several layouts: gemm, accumulate (old C drawn from the specials too) and argmax.
TYPED_TEST(EdgeValuesGpu, SpecialValuesMatchTheReference) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    TROPICAL_TEST_RNG(rng);
    const std::vector<T> values = special_values<T>(ring);
    auto draw = [&]() -> T {
        if (rng.chance(0.2)) return random_value<T>(rng, ring, Values::Typical);
        return values[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(values.size()) - 1))];
    };
    const std::vector<Shape> shapes = {{1, 1, 1}, {9, 11, 4}, {40, 70, 33}, {300, 20, 9}, {17, 19, 1}};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        const Shape s = shapes[i];
        const Geometries g = layout_combination(static_cast<int>(i * 5 + 3) % 8, static_cast<int>(i));
        SCOPED_TRACE(describe(s) + "; " + describe(g));
        auto a = make_matrix<T>(s.m, s.k, g.a);
        auto b = make_matrix<T>(s.k, s.n, g.b);
        auto c = make_matrix<T>(s.m, s.n, g.c);
        const auto argmax = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
        a.fill(draw);
        b.fill(draw);
        EXPECT_TRUE(exactly_equal("C", reference_gemm<T>(ring, a, b, c), gpu_gemm<S>(a, b, c)));
        const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c, argmax);
        const auto [actual_c, actual_argmax] = gpu_gemm_argmax<S>(a, b, c, argmax);
        EXPECT_TRUE(exactly_equal("C (with argmax)", expected_c, actual_c));
        EXPECT_TRUE(exactly_equal("argmax", expected_argmax, actual_argmax));
        c.fill(draw);
        EXPECT_TRUE(exactly_equal("accumulated C", reference_gemm<T>(ring, a, b, c, true),
                                  gpu_gemm<S>(a, b, c, {.accumulate = true})));
    }
}

// K = 0: every output is the zero, every argmax -1, and accumulating leaves C as it was.
TYPED_TEST(EdgeValuesGpu, EmptyInnerDimensionGivesTheZero) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    TROPICAL_TEST_RNG(rng);
    for (const Shape s : {Shape{5, 7, 0}, Shape{300, 20, 0}, Shape{20, 300, 0}}) {
        for (int combination : {0, 7, 2}) {
            const Geometries g = layout_combination(combination, 1);
            SCOPED_TRACE(describe(s) + "; " + describe(g));
            const auto a = make_matrix<T>(s.m, 0, g.a);
            const auto b = make_matrix<T>(0, s.n, g.b);
            const auto c0 = make_matrix<T>(s.m, s.n, g.c);
            auto zeros = c0;
            zeros.fill([&] { return reference::zero<T>(ring); });
            EXPECT_TRUE(exactly_equal("C", zeros, gpu_gemm<S>(a, b, c0)));
            auto minus_one = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
            const auto [c, argmax] = gpu_gemm_argmax<S>(a, b, c0, minus_one);
            minus_one.fill([] { return -1; });
            EXPECT_TRUE(exactly_equal("C (with argmax)", zeros, c));
            EXPECT_TRUE(exactly_equal("argmax", minus_one, argmax));
            auto old = c0;
            old.fill([&] { return random_value<T>(rng, ring, Values::Typical); });
            EXPECT_TRUE(exactly_equal("accumulated C", old, gpu_gemm<S>(a, b, old, {.accumulate = true})));
        }
    }
}

// Rows of A and columns of B that are entirely the zero: their outputs are the zero with argmax -1
// (nothing beats the zero strictly; for MaxMul also products that are 0 because the other side is 0).
TYPED_TEST(EdgeValuesGpu, AllZeroRowsAndColumns) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    const T zero = reference::zero<T>(ring);
    TROPICAL_TEST_RNG(rng);
    const Shape s{70, 45, 37};
    const Geometries g = layout_combination(5, 0);
    auto a = random_matrix<T>(rng, ring, Values::Typical, s.m, s.k, g.a);
    auto b = random_matrix<T>(rng, ring, Values::Typical, s.k, s.n, g.b);
    for (std::int64_t i = 0; i < s.m; i += 3)
        for (std::int64_t k = 0; k < s.k; ++k) a(i, k) = zero;
    for (std::int64_t j = 1; j < s.n; j += 4)
        for (std::int64_t k = 0; k < s.k; ++k) b(k, j) = zero;
    const auto c0 = make_matrix<T>(s.m, s.n, g.c);
    const auto m0 = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
    const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c0, m0);
    const auto [c, argmax] = gpu_gemm_argmax<S>(a, b, c0, m0);
    EXPECT_TRUE(exactly_equal("C", expected_c, c));
    EXPECT_TRUE(exactly_equal("argmax", expected_argmax, argmax));
    EXPECT_TRUE(exactly_equal("C without argmax", expected_c, gpu_gemm<S>(a, b, c0)));
    for (std::int64_t i = 0; i < s.m; ++i)
        for (std::int64_t j = 0; j < s.n; ++j)
            if (i % 3 == 0 || j % 4 == 1) {
                EXPECT_TRUE(is(zero, c(i, j))) << "C(" << i << "," << j << ")";
                EXPECT_EQ(argmax(i, j), -1) << "argmax(" << i << "," << j << ")";
            }
}

// Equal terms: the smallest k wins, also when the tie is between the last k of one K-slice or tile
// and a later one.
TYPED_TEST(EdgeValuesGpu, ArgmaxTiesPickTheSmallestK) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    const bool min = ring == Semiring::MinPlus || ring == Semiring::MinMax;
    // B holds the semiring's one, so that each term is A's value.
    const T one = reference::one<T>(ring);
    // One row: terms equal to the best at k = 1 and 3 (MinPlus, MinMax: the same with the order reversed).
    {
        const T best = min ? T(1) : T(3), worse = min ? T(3) : T(1);
        Small<S, T> p(1, 4, 1, {worse, best, worse, best}, {one, one, one, one});
        const auto r = p.run();
        EXPECT_EQ(r.argmax(0, 0), 1);
    }
    // All terms equal.
    {
        Small<S, T> p(2, 5, 2, std::vector<T>(10, T(2)), std::vector<T>(10, T(2)));
        const auto r = p.run();
        for (std::int64_t i = 0; i < 2; ++i)
            for (std::int64_t j = 0; j < 2; ++j) EXPECT_EQ(r.argmax(i, j), 0);
    }
    // K = 300: the best value appears first at k = best_k and again at every later k from a set.
    for (const std::int64_t best_k : {0, 7, 8, 15, 16, 127, 128, 200, 299}) {
        SCOPED_TRACE("best first at k = " + std::to_string(best_k));
        const std::int64_t K = 300;
        std::vector<T> av(static_cast<std::size_t>(K), min ? T(5) : T(1)), bv(static_cast<std::size_t>(K), one);
        for (std::int64_t k = best_k; k < K; k += 9) av[static_cast<std::size_t>(k)] = min ? T(1) : T(5);
        Small<S, T> p(1, K, 1, av, bv);
        const auto r = p.run();
        EXPECT_EQ(r.argmax(0, 0), best_k);
        EXPECT_TRUE(is(min ? T(1) : T(5), r.c(0, 0)));
    }
}

// The end of the documented range; for floats in MaxPlus and MinPlus 1e30, whose sums are finite (the
// largest finite floats are among the specials above).
template <class T>
T range_end(Semiring s) {
    if constexpr (std::is_floating_point_v<T>) {
        if (s != Semiring::MaxMul) return T(1e30);
    }
    return reference::FiniteRange<T>::highest(s);
}

// The integer zeros are exact and absorbing, and sums at the ends of the documented range are exact.
TYPED_TEST(EdgeValuesGpu, ZerosAbsorbAndRangeEndsAreExact) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    const T zero = reference::zero<T>(ring);
    const T hi = range_end<T>(ring);
    if (reference::is_bottleneck(ring)) {
        // No sentinel here: every value of the type is an input, the zero absorbs (a row of zeros
        // gives the zero, argmax -1) and the one (the opposite end) leaves the other value as it is.
        const T one = reference::one<T>(ring);
        Small<S, T> p(2, 3, 2, {zero, zero, zero, one, T(5), zero}, {one, T(7), T(3), one, zero, zero});
        const auto r = p.run();
        for (std::int64_t j = 0; j < 2; ++j) {
            EXPECT_TRUE(is(zero, r.c(0, j))) << "C(0," << j << ")";
            EXPECT_EQ(r.argmax(0, j), -1);
        }
        EXPECT_TRUE(is(one, r.c(1, 0)));  // one (x) one
        EXPECT_EQ(r.argmax(1, 0), 0);
        const bool max_min = ring == Semiring::MaxMin;
        EXPECT_TRUE(is(max_min ? T(7) : T(5), r.c(1, 1)));  // max(7, 5) or min(7, 5)
        EXPECT_EQ(r.argmax(1, 1), max_min ? 0 : 1);
        return;
    }
    if constexpr (std::is_floating_point_v<T>) {
        if (ring == Semiring::MaxMul) {
            // 0 is the zero; a product of the largest finite values overflows to +inf.
            Small<S, T> p(1, 2, 2, {T(0), hi}, {T(5), T(0), hi, T(2)});
            const auto r = p.run();
            EXPECT_TRUE(is(std::numeric_limits<T>::infinity(), r.c(0, 0)));
            EXPECT_EQ(r.argmax(0, 0), 1);
            EXPECT_TRUE(is(T(hi * T(2)), r.c(0, 1)));
            return;
        }
    }
    if (ring == Semiring::MaxMul) {
        // The largest documented products, and zeros.
        Small<S, T> p(2, 2, 2, {hi, T(0), T(0), T(0)}, {hi, T(0), T(1), T(0)});
        const auto r = p.run();
        EXPECT_TRUE(is(T(hi * hi), r.c(0, 0)));
        EXPECT_EQ(r.argmax(0, 0), 0);
        EXPECT_TRUE(is(T(0), r.c(0, 1)));
        EXPECT_EQ(r.argmax(0, 1), -1);
        EXPECT_TRUE(is(T(0), r.c(1, 0)));
        EXPECT_EQ(r.argmax(1, 0), -1);
        return;
    }
    const T lo = -hi;
    // Rows of A: [zero, zero], [hi, zero], [lo, lo], [zero, lo]; columns of B: [hi, hi], [lo, zero], [zero, lo].
    Small<S, T> p(4, 2, 3, {zero, zero, hi, zero, lo, lo, zero, lo}, {hi, lo, zero, hi, zero, lo});
    const auto r = p.run();
    // Row 0: every term involves the zero.
    for (std::int64_t j = 0; j < 3; ++j) {
        EXPECT_TRUE(is(zero, r.c(0, j))) << "C(0," << j << ")";
        EXPECT_EQ(r.argmax(0, j), -1);
    }
    // Row 1: hi + hi, hi + lo, and zero for the last column (hi (x) zero, zero (x) lo).
    EXPECT_TRUE(is(T(hi + hi), r.c(1, 0)));
    EXPECT_EQ(r.argmax(1, 0), 0);
    EXPECT_TRUE(is(T(hi + lo), r.c(1, 1)));
    EXPECT_EQ(r.argmax(1, 1), 0);
    EXPECT_TRUE(is(zero, r.c(1, 2)));
    EXPECT_EQ(r.argmax(1, 2), -1);
    // Row 2: lo + hi twice (k = 0 first), lo + lo, lo + lo.
    EXPECT_TRUE(is(T(lo + hi), r.c(2, 0)));
    EXPECT_EQ(r.argmax(2, 0), 0);
    EXPECT_TRUE(is(T(lo + lo), r.c(2, 1)));
    EXPECT_EQ(r.argmax(2, 1), 0);
    EXPECT_TRUE(is(T(lo + lo), r.c(2, 2)));
    EXPECT_EQ(r.argmax(2, 2), 1);
    // Row 3: [zero, lo] against [hi, hi]: lo + hi at k = 1.
    EXPECT_TRUE(is(T(lo + hi), r.c(3, 0)));
    EXPECT_EQ(r.argmax(3, 0), 1);
}

// The extremes of the range in big random products: sums near +-2 * range everywhere, none clipped.
TYPED_TEST(EdgeValuesGpu, RangeEndsInLargeProducts) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    if constexpr (std::is_floating_point_v<T>) {
        GTEST_SKIP() << "integers only";
    } else {
        TROPICAL_TEST_RNG(rng);
        const T lo = reference::FiniteRange<T>::lowest(ring), hi = reference::FiniteRange<T>::highest(ring);
        const T zero = reference::zero<T>(ring);
        auto draw = [&]() -> T {
            const std::int64_t r = rng.integer(0, 9);
            if (r < 4) return lo;
            if (r < 8) return hi;
            if (r < 9) return zero;
            return static_cast<T>(rng.integer(lo, hi));
        };
        for (const Shape s : {Shape{300, 270, 24}, Shape{50, 60, 70}}) {
            for (int combination : {0, 6}) {
                const Geometries g = layout_combination(combination, 2);
                SCOPED_TRACE(describe(s) + "; " + describe(g));
                auto a = make_matrix<T>(s.m, s.k, g.a);
                auto b = make_matrix<T>(s.k, s.n, g.b);
                a.fill(draw);
                b.fill(draw);
                const auto c0 = make_matrix<T>(s.m, s.n, g.c);
                const auto m0 = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
                EXPECT_TRUE(exactly_equal("C", reference_gemm<T>(ring, a, b, c0), gpu_gemm<S>(a, b, c0)));
                const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c0, m0);
                const auto [c, argmax] = gpu_gemm_argmax<S>(a, b, c0, m0);
                EXPECT_TRUE(exactly_equal("C (with argmax)", expected_c, c));
                EXPECT_TRUE(exactly_equal("argmax", expected_argmax, argmax));
            }
        }
    }
}

// IEEE (x): -inf + +inf = NaN, 0 * inf = NaN; a NaN term makes the result NaN and its argmax is the
// first NaN term's k, even after a better finite term; NaN in the old C survives accumulation.

}  // namespace
