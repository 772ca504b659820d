// The CPU path on the values where semirings are easy to get wrong: infinities, NaN, -0, the integer
// zeros (exact and absorbing) and the ends of the documented integer ranges, argmax on NaN, on ties
// (also across K blocks) and where nothing beats the zero, and K = 0. Each case is checked against
// the reference, and small hand-made ones against the value worked out by hand.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "support/cpu_gemm.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class C>
class CpuEdgeValues : public ::testing::Test {};
TYPED_TEST_SUITE(CpuEdgeValues, AllCases, CaseName);

template <class C>
class CpuFloatEdgeValues : public ::testing::Test {};
TYPED_TEST_SUITE(CpuFloatEdgeValues, FloatCases, CaseName);

// A row-major product from literal values, run plain and with argmax, both checked against the
// reference; returns C and the argmax.
template <class S, class T>
std::pair<HostMatrix<T>, HostMatrix<std::int32_t>> small(std::int64_t m, std::int64_t k, std::int64_t n,
                                                         const std::vector<T>& av, const std::vector<T>& bv) {
    auto a = make_matrix<T>(m, k, {Layout::RowMajor, 1});
    auto b = make_matrix<T>(k, n, {Layout::ColMajor, 2});
    for (std::int64_t i = 0; i < m * k; ++i) a(i / k, i % k) = av[static_cast<std::size_t>(i)];
    for (std::int64_t i = 0; i < k * n; ++i) b(i / n, i % n) = bv[static_cast<std::size_t>(i)];
    const auto c0 = make_matrix<T>(m, n);
    const auto m0 = make_matrix<std::int32_t>(m, n, {Layout::ColMajor, 1});
    const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(S::value, a, b, c0, m0);
    const auto result = host_gemm_argmax<S>(a, b, c0, m0);
    EXPECT_TRUE(exactly_equal("C", reference_gemm<T>(S::value, a, b, c0), host_gemm<S>(a, b, c0)));
    EXPECT_TRUE(exactly_equal("C (with argmax)", expected_c, result.first));
    EXPECT_TRUE(exactly_equal("argmax", expected_argmax, result.second));
    return result;
}

template <class T>
::testing::AssertionResult same_bits(T expected, T actual) {
    if (same_value(expected, actual)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "expected " << show(expected) << ", got " << show(actual);
}

TYPED_TEST(CpuEdgeValues, SpecialValuesMatchTheReference) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Shape> shapes = {{1, 1, 1}, {9, 11, 4}, {40, 70, 33}, {300, 20, 9}, {17, 19, 1}, {5, 6, 600}};
    for (std::size_t i = 0; i < shapes.size(); ++i)
        check_host_products<S, T>(rng, shapes[i],
                                  layout_combination(static_cast<int>(i * 5 + 3) % 8, static_cast<int>(i)),
                                  Values::Typical, {}, /*specials=*/true);
}

// K = 0: every output is the zero, every argmax -1, and accumulating gives C (+) zero.
TYPED_TEST(CpuEdgeValues, EmptyInnerDimensionGivesTheZero) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    TROPICAL_TEST_RNG(rng);
    for (const Shape s : {Shape{5, 7, 0}, Shape{300, 20, 0}}) {
        const Geometries g = layout_combination(6, 1);
        const auto a = make_matrix<T>(s.m, 0, g.a);
        const auto b = make_matrix<T>(0, s.n, g.b);
        auto c = make_matrix<T>(s.m, s.n, g.c);
        auto zeros = c;
        zeros.fill([&] { return reference::zero<T>(ring); });
        EXPECT_TRUE(exactly_equal("C", zeros, host_gemm<S>(a, b, c)));
        auto minus_one = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
        const auto [c2, argmax] = host_gemm_argmax<S>(a, b, c, minus_one);
        minus_one.fill([] { return -1; });
        EXPECT_TRUE(exactly_equal("C (with argmax)", zeros, c2));
        EXPECT_TRUE(exactly_equal("argmax", minus_one, argmax));
        c = special_matrix<T>(rng, ring, s.m, s.n, g.c);
        EXPECT_TRUE(exactly_equal("accumulated C", reference_gemm<T>(ring, a, b, c, true),
                                  host_gemm<S>(a, b, c, {.accumulate = true})));
    }
}

// The README's example, worked out by hand.
TYPED_TEST(CpuEdgeValues, TheReadmeExample) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    const auto [c, argmax] = small<S, T>(2, 2, 2, {1, 2, 3, 4}, {5, 6, 7, 8});
    std::vector<T> want;
    switch (S::value) {
    case Semiring::MaxPlus: want = {9, 10, 11, 12}; break;
    case Semiring::MinPlus: want = {6, 7, 8, 9}; break;
    case Semiring::MaxMul: want = {14, 16, 28, 32}; break;
    case Semiring::MaxMin: want = {2, 2, 4, 4}; break;
    case Semiring::MinMax: want = {5, 6, 5, 6}; break;
    case Semiring::Counting: break;  // not a SemiringTag: its own tests (counting_test.cpp)
    case Semiring::OrAnd: break;     // not among these cases: tests/cpu_orand_test.cpp
    case Semiring::LogPlus: break;   // not among these cases: tests/cpu_logplus_test.cpp
    }
    for (int e = 0; e < 4; ++e) EXPECT_TRUE(same_bits(want[static_cast<std::size_t>(e)], c(e / 2, e % 2)));
    const bool min = S::value == Semiring::MinPlus || S::value == Semiring::MinMax;
    EXPECT_EQ(argmax(0, 0), min ? 0 : 1);
}

// Rows of A and columns of B that are entirely the zero give the zero and argmax -1.
TYPED_TEST(CpuEdgeValues, AllZeroRowsAndColumnsGiveTheZero) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    const T zero = reference::zero<T>(ring);
    TROPICAL_TEST_RNG(rng);
    const Shape s{70, 45, 300};
    const Geometries g = layout_combination(5, 0);
    auto a = random_matrix<T>(rng, ring, Values::Typical, s.m, s.k, g.a);
    auto b = random_matrix<T>(rng, ring, Values::Typical, s.k, s.n, g.b);
    for (std::int64_t i = 0; i < s.m; i += 3)
        for (std::int64_t k = 0; k < s.k; ++k) a(i, k) = zero;
    for (std::int64_t j = 1; j < s.n; j += 4)
        for (std::int64_t k = 0; k < s.k; ++k) b(k, j) = zero;
    const auto c0 = make_matrix<T>(s.m, s.n, g.c);
    const auto m0 = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
    const auto [c, argmax] = host_gemm_argmax<S>(a, b, c0, m0);
    const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c0, m0);
    EXPECT_TRUE(exactly_equal("C", expected_c, c));
    EXPECT_TRUE(exactly_equal("argmax", expected_argmax, argmax));
    for (std::int64_t i = 0; i < s.m; ++i)
        for (std::int64_t j = 0; j < s.n; ++j)
            if (i % 3 == 0 || j % 4 == 1) {
                EXPECT_TRUE(same_bits(zero, c(i, j))) << "C(" << i << "," << j << ")";
                EXPECT_EQ(argmax(i, j), -1) << "argmax(" << i << "," << j << ")";
            }
}

// Equal best terms at k and at a later k (the same K block, and the next ones of every target's
// block sizes): the smallest k wins.
TYPED_TEST(CpuEdgeValues, ArgmaxTiesAcrossKBlocksPickTheSmallestK) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    const bool min = ring == Semiring::MinPlus || ring == Semiring::MinMax;
    const std::int64_t k = 1100;
    for (const auto& [first, second] :
         {std::pair{3, 100}, std::pair{127, 128}, std::pair{255, 256}, std::pair{200, 700}, std::pair{511, 1099}}) {
        // A holds the semiring's one, so that each term is B's value.
        std::vector<T> av(static_cast<std::size_t>(k), reference::one<T>(ring));
        std::vector<T> bv(static_cast<std::size_t>(k), min ? T(9) : T(2));
        const T best = min ? T(1) : T(7);
        bv[static_cast<std::size_t>(first)] = bv[static_cast<std::size_t>(second)] = best;
        const auto [c, argmax] = small<S, T>(1, k, 1, av, bv);
        EXPECT_EQ(argmax(0, 0), first) << "tie between k = " << first << " and k = " << second;
    }
}

// Integers: sums at the ends of the documented range are exact, and the zero absorbs whatever it
// meets (also the largest finite values).
TYPED_TEST(CpuEdgeValues, IntegerRangeEndsAndZerosAreExact) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    if constexpr (std::is_integral_v<T>) {
        constexpr Semiring ring = S::value;
        const T zero = reference::zero<T>(ring);
        const T hi = reference::FiniteRange<T>::highest(ring), lo = reference::FiniteRange<T>::lowest(ring);
        if (ring == Semiring::MaxMul) {
            const auto [c, argmax] = small<S, T>(1, 2, 2, {hi, 0}, {hi, 3, 0, hi});
            EXPECT_TRUE(same_bits(T(hi * hi), c(0, 0)));
            EXPECT_TRUE(same_bits(T(3 * hi), c(0, 1)));
        } else {
            const auto [c, argmax] = small<S, T>(1, 3, 3, {hi, lo, zero}, {hi, lo, zero, lo, hi, zero, hi, zero, lo});
            // (+) over k of {hi (x) hi, lo (x) lo, zero}, {hi (x) lo, lo (x) hi, zero}, {zero, zero, zero}
            if (reference::is_bottleneck(ring)) {
                // Every value of the type is an input; min and max neither wrap nor clip.
                const bool max_min = ring == Semiring::MaxMin;
                EXPECT_TRUE(same_bits(max_min ? hi : lo, c(0, 0)));
                EXPECT_TRUE(same_bits(max_min ? lo : hi, c(0, 1)));
            } else {
                EXPECT_TRUE(same_bits(ring == Semiring::MaxPlus ? T(2 * hi) : T(2 * lo), c(0, 0)));
                EXPECT_TRUE(same_bits(T(0), c(0, 1)));
            }
            EXPECT_TRUE(same_bits(zero, c(0, 2)));
            EXPECT_EQ(argmax(0, 2), -1);
        }
    }
}

// NaN: any NaN term makes the result NaN, with the argmax of the first NaN term, whatever comes
// after it; a NaN old C stays NaN when accumulating.
TYPED_TEST(CpuFloatEdgeValues, NaNPropagatesWithTheFirstNaNsArgmax) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
    const auto [c, argmax] = small<S, T>(2, 4, 1, {1, nan, 3, nan, 5, 6, 7, 8}, {100, 1, 1, 1});
    EXPECT_TRUE(std::isnan(c(0, 0)));
    EXPECT_EQ(argmax(0, 0), 1);
    EXPECT_FALSE(std::isnan(c(1, 0)));
    // inf against the other infinity (MaxPlus/MinPlus) or zero (MaxMul) makes a NaN term; min and
    // max (MaxMin, MinMax) make none.
    const T clash = S::value == Semiring::MaxMul ? T(0) : -inf;
    const auto [c2, argmax2] = small<S, T>(1, 3, 1, {2, inf, 3}, {1, clash, 1});
    if (reference::is_bottleneck(S::value)) {
        EXPECT_FALSE(std::isnan(c2(0, 0)));
    } else {
        EXPECT_TRUE(std::isnan(c2(0, 0)));
        EXPECT_EQ(argmax2(0, 0), 1);
    }
    auto a = make_matrix<T>(1, 1), b = make_matrix<T>(1, 1), old = make_matrix<T>(1, 1);
    a(0, 0) = b(0, 0) = T(1);
    old(0, 0) = nan;
    EXPECT_TRUE(std::isnan(host_gemm<S>(a, b, old, {.accumulate = true})(0, 0)));
}

// -0 is read as +0, in A, B and an old C alike: no result is -0, accumulated or not.
TYPED_TEST(CpuFloatEdgeValues, NegativeZeroIsReadAsPositiveZero) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    const T plus_zero = T(0), minus_zero = T(-0.0);
    if (S::value == Semiring::MaxMul) {
        // -1 * 0 = -0 (outside the domain): the result is the zero +0.
        const auto [c, argmax] = small<S, T>(1, 2, 1, {-1, minus_zero}, {0, 5});
        EXPECT_TRUE(same_bits(plus_zero, c(0, 0)));
        EXPECT_EQ(argmax(0, 0), -1);
    } else {
        const auto [c, argmax] = small<S, T>(1, 1, 1, {minus_zero}, {minus_zero});
        EXPECT_TRUE(same_bits(plus_zero, c(0, 0)));
        EXPECT_EQ(argmax(0, 0), 0);
    }
    auto a = make_matrix<T>(1, 1), b = make_matrix<T>(1, 1), old = make_matrix<T>(1, 1);
    a(0, 0) = minus_zero;
    b(0, 0) = S::value == Semiring::MaxMul ? T(3) : minus_zero;
    old(0, 0) = minus_zero;
    EXPECT_TRUE(same_bits(plus_zero, reference_gemm<T>(S::value, a, b, old, true)(0, 0)));
    EXPECT_TRUE(same_bits(plus_zero, host_gemm<S>(a, b, old, {.accumulate = true})(0, 0)));
    // An old -0 that the product does not beat (the zero of MaxPlus and MaxMin is -inf): +0 too,
    // and with K = 0, where C_old (+) the zero is all there is.
    if (S::value == Semiring::MaxPlus || S::value == Semiring::MaxMin) {
        a(0, 0) = -std::numeric_limits<T>::infinity();
        EXPECT_TRUE(same_bits(plus_zero, reference_gemm<T>(S::value, a, b, old, true)(0, 0)));
        EXPECT_TRUE(same_bits(plus_zero, host_gemm<S>(a, b, old, {.accumulate = true})(0, 0)));
    }
    const auto none_a = make_matrix<T>(1, 0), none_b = make_matrix<T>(0, 1);
    EXPECT_TRUE(same_bits(plus_zero, reference_gemm<T>(S::value, none_a, none_b, old, true)(0, 0)));
    EXPECT_TRUE(same_bits(plus_zero, host_gemm<S>(none_a, none_b, old, {.accumulate = true})(0, 0)));
}

}  // namespace
