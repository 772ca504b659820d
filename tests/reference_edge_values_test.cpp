// Tests of the CPU reference (src/reference/reference.hpp) at its edge values: the integer zeros
// absorb across the documented finite range, NaN propagates, infinities follow IEEE, each semiring's
// zero and one, and mismatched shapes are refused. Its algebra: reference_test.cpp.
#include "reference/reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "support/reference_matrix.hpp"

namespace {

using tropical::Semiring;
namespace ref = tropical::reference;
using namespace tropical::testing::reference_tests;

template <class T>
class ReferenceInt : public ::testing::Test {};
using Integers = ::testing::Types<std::int32_t, std::int64_t>;
TYPED_TEST_SUITE(ReferenceInt, Integers);

TYPED_TEST(ReferenceInt, ZerosAbsorbAcrossTheFiniteRange) {
    using T = TypeParam;
    for (Semiring s : kSemirings) {
        SCOPED_TRACE(tropical::to_string(s));
        const T z = ref::zero<T>(s);
        const T lo = ref::FiniteRange<T>::lowest(s), hi = ref::FiniteRange<T>::highest(s);
        for (T x : {lo, T(lo + 1), T(-1), T(0), T(1), T(hi - 1), hi}) {
            if (x < lo) continue;
            const Matrix<T> zx(1, 1, {z}), xx(1, 1, {x});
            Matrix<T> c(1, 1);
            ref::gemm<T>(s, zx.cview(), xx.cview(), c.view());
            EXPECT_EQ(c(0, 0), z) << "zero (x) " << x;
            ref::gemm<T>(s, xx.cview(), zx.cview(), c.view());
            EXPECT_EQ(c(0, 0), z) << x << " (x) zero";
        }
        // zero (x) zero, and no clipping at the ends of the range.
        const Matrix<T> zz(1, 1, {z}), lows(1, 1, {lo}), highs(1, 1, {hi});
        Matrix<T> c(1, 1);
        ref::gemm<T>(s, zz.cview(), zz.cview(), c.view());
        EXPECT_EQ(c(0, 0), z);
        ref::gemm<T>(s, highs.cview(), highs.cview(), c.view());
        EXPECT_EQ(c(0, 0), s == Semiring::MaxMul ? T(hi * hi) : T(hi + hi));
        ref::gemm<T>(s, lows.cview(), lows.cview(), c.view());
        EXPECT_EQ(c(0, 0), s == Semiring::MaxMul ? T(0) : T(lo + lo));
    }
}

TYPED_TEST(ReferenceInt, DocumentedRanges) {
    using T = TypeParam;
    const bool wide = sizeof(T) == 8;
    EXPECT_EQ(ref::FiniteRange<T>::highest(Semiring::MaxPlus), wide ? T(1) << 60 : T(1) << 28);
    EXPECT_EQ(ref::FiniteRange<T>::lowest(Semiring::MinPlus), wide ? -(T(1) << 60) : -(T(1) << 28));
    const T m = ref::FiniteRange<T>::highest(Semiring::MaxMul);
    EXPECT_EQ(ref::FiniteRange<T>::lowest(Semiring::MaxMul), T(0));
    EXPECT_LE(m, std::numeric_limits<T>::max() / m);  // m * m does not overflow
    EXPECT_GT(m + 1, std::numeric_limits<T>::max() / (m + 1));
}

template <class T>
class ReferenceFloat : public ::testing::Test {};
using Floats = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ReferenceFloat, Floats);

TYPED_TEST(ReferenceFloat, NaNPropagates) {
    using T = TypeParam;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    for (Semiring s : kSemirings) {
        SCOPED_TRACE(tropical::to_string(s));
        // The NaN term sits between a better and a worse one; it must win either way.
        const Matrix<T> a(1, 3, {T(1), nan, T(3)}), b(3, 1, {T(1), T(1), T(1)});
        Matrix<T> c(1, 1);
        Matrix<std::int32_t> arg(1, 1);
        ref::gemm<T>(s, a.cview(), b.cview(), c.view());
        EXPECT_TRUE(std::isnan(c(0, 0)));
        ref::gemm_argmax<T>(s, a.cview(), b.cview(), c.view(), arg.view());
        EXPECT_TRUE(std::isnan(c(0, 0)));
        EXPECT_EQ(arg(0, 0), 1);
        // Two NaN terms: the first one is the argmax.
        const Matrix<T> d(1, 3, {T(1), nan, nan});
        ref::gemm_argmax<T>(s, d.cview(), b.cview(), c.view(), arg.view());
        EXPECT_EQ(arg(0, 0), 1);
        // A NaN already in C survives accumulation, and a NaN product overrides a number in C.
        const Matrix<T> one_a(1, 1, {T(2)}), one_b(1, 1, {T(2)});
        Matrix<T> old(1, 1, {nan});
        ref::gemm<T>(s, one_a.cview(), one_b.cview(), old.view(), true);
        EXPECT_TRUE(std::isnan(old(0, 0)));
        Matrix<T> num(1, 1, {T(100)});
        const Matrix<T> nan_a(1, 1, {nan});
        ref::gemm<T>(s, nan_a.cview(), one_b.cview(), num.view(), true);
        EXPECT_TRUE(std::isnan(num(0, 0)));
    }
}

TYPED_TEST(ReferenceFloat, Infinities) {
    using T = TypeParam;
    const T inf = std::numeric_limits<T>::infinity();
    Matrix<T> c(1, 1);
    Matrix<std::int32_t> arg(1, 1);
    auto run = [&](Semiring s, std::initializer_list<T> av, std::initializer_list<T> bv) {
        const Matrix<T> a(1, static_cast<std::int64_t>(av.size()), av);
        const Matrix<T> b(static_cast<std::int64_t>(bv.size()), 1, bv);
        ref::gemm_argmax<T>(s, a.cview(), b.cview(), c.view(), arg.view());
        Matrix<T> plain(1, 1);
        ref::gemm<T>(s, a.cview(), b.cview(), plain.view());
        if (!std::isnan(c(0, 0))) EXPECT_EQ(plain(0, 0), c(0, 0));
        else EXPECT_TRUE(std::isnan(plain(0, 0)));
    };
    // MaxPlus: -inf is the zero (absorbing, never an argmax); +inf is an ordinary top value.
    run(Semiring::MaxPlus, {-inf, T(1)}, {T(5), T(2)});
    EXPECT_EQ(c(0, 0), T(3));
    EXPECT_EQ(arg(0, 0), 1);
    run(Semiring::MaxPlus, {-inf, -inf}, {T(5), T(2)});
    EXPECT_EQ(c(0, 0), -inf);
    EXPECT_EQ(arg(0, 0), -1);
    run(Semiring::MaxPlus, {T(1), inf}, {T(5), T(2)});
    EXPECT_EQ(c(0, 0), inf);
    EXPECT_EQ(arg(0, 0), 1);
    run(Semiring::MaxPlus, {T(1), -inf}, {T(5), inf});  // -inf + inf = NaN
    EXPECT_TRUE(std::isnan(c(0, 0)));
    EXPECT_EQ(arg(0, 0), 1);
    // MinPlus mirrors it.
    run(Semiring::MinPlus, {inf, T(1)}, {T(5), T(2)});
    EXPECT_EQ(c(0, 0), T(3));
    EXPECT_EQ(arg(0, 0), 1);
    run(Semiring::MinPlus, {inf, inf}, {T(5), T(2)});
    EXPECT_EQ(c(0, 0), inf);
    EXPECT_EQ(arg(0, 0), -1);
    run(Semiring::MinPlus, {T(1), -inf}, {T(5), T(2)});
    EXPECT_EQ(c(0, 0), -inf);
    EXPECT_EQ(arg(0, 0), 1);
    run(Semiring::MinPlus, {inf, T(1)}, {-inf, T(2)});
    EXPECT_TRUE(std::isnan(c(0, 0)));
    EXPECT_EQ(arg(0, 0), 0);
    // MaxMul: inf is an ordinary top value, 0 * inf = NaN.
    run(Semiring::MaxMul, {T(2), inf}, {T(3), T(1)});
    EXPECT_EQ(c(0, 0), inf);
    EXPECT_EQ(arg(0, 0), 1);
    run(Semiring::MaxMul, {T(2), T(0)}, {T(3), inf});
    EXPECT_TRUE(std::isnan(c(0, 0)));
    EXPECT_EQ(arg(0, 0), 1);
}

TEST(Reference, ZeroAndOne) {
    EXPECT_EQ(ref::zero<float>(Semiring::MaxPlus), -std::numeric_limits<float>::infinity());
    EXPECT_EQ(ref::zero<double>(Semiring::MinPlus), std::numeric_limits<double>::infinity());
    EXPECT_EQ(ref::zero<std::int32_t>(Semiring::MaxPlus), std::numeric_limits<std::int32_t>::min());
    EXPECT_EQ(ref::zero<std::int64_t>(Semiring::MinPlus), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(ref::zero<float>(Semiring::MaxMul), 0.0f);
    EXPECT_EQ(ref::one<std::int32_t>(Semiring::MaxPlus), 0);
    EXPECT_EQ(ref::one<double>(Semiring::MaxMul), 1.0);
    static_assert(ref::zero<std::int32_t>(Semiring::MinPlus) == std::numeric_limits<std::int32_t>::max());
}

TEST(Reference, RejectsMismatchedShapes) {
    Matrix<float> a(2, 3), b(4, 2), c(2, 2);
    EXPECT_THROW(ref::gemm<float>(Semiring::MaxPlus, a.cview(), b.cview(), c.view()), std::invalid_argument);
}

}  // namespace
