// Tests of the CPU reference (src/reference/reference.hpp) against the algebra it must satisfy and
// against small products worked out by hand.
#include "reference/reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

using tropical::Semiring;
namespace ref = tropical::reference;

constexpr Semiring kSemirings[] = {Semiring::MaxPlus, Semiring::MinPlus, Semiring::MaxMul};

// A row-major matrix that owns its storage.
template <class T>
struct Matrix {
    std::int64_t rows, cols;
    std::vector<T> data;

    Matrix(std::int64_t r, std::int64_t c, T fill = T{})
        : rows(r), cols(c), data(static_cast<std::size_t>(r * c), fill) {}
    Matrix(std::int64_t r, std::int64_t c, std::initializer_list<T> values) : rows(r), cols(c), data(values) {
        EXPECT_EQ(static_cast<std::int64_t>(data.size()), r * c);
    }
    ref::HostView<T> view() { return {data.data(), rows, cols, cols, 1}; }
    ref::HostView<const T> cview() const { return {data.data(), rows, cols, cols, 1}; }
    T& operator()(std::int64_t i, std::int64_t j) { return data[static_cast<std::size_t>(i * cols + j)]; }
    T operator()(std::int64_t i, std::int64_t j) const { return data[static_cast<std::size_t>(i * cols + j)]; }
};

template <class T>
Matrix<T> product(Semiring s, const Matrix<T>& a, const Matrix<T>& b) {
    Matrix<T> c(a.rows, b.cols);
    ref::gemm<T>(s, a.cview(), b.cview(), c.view());
    return c;
}

template <class T>
Matrix<T> identity(Semiring s, std::int64_t n) {
    Matrix<T> e(n, n, ref::zero<T>(s));
    for (std::int64_t i = 0; i < n; ++i) e(i, i) = ref::one<T>(s);
    return e;
}

// Small integers, so that float sums and products are exact and associativity holds bit for bit.
// MaxMul gets non-negative values; the others include zeros of the semiring now and then.
template <class T>
Matrix<T> random_matrix(Semiring s, std::int64_t rows, std::int64_t cols, std::mt19937& rng) {
    Matrix<T> m(rows, cols);
    std::uniform_int_distribution<int> value(s == Semiring::MaxMul ? 0 : -9, 9);
    std::uniform_int_distribution<int> coin(0, 7);
    for (T& x : m.data) x = coin(rng) == 0 ? ref::zero<T>(s) : static_cast<T>(value(rng));
    return m;
}

template <class T>
void expect_same(const Matrix<T>& x, const Matrix<T>& y) {
    ASSERT_EQ(x.rows, y.rows);
    ASSERT_EQ(x.cols, y.cols);
    for (std::int64_t i = 0; i < x.rows; ++i)
        for (std::int64_t j = 0; j < x.cols; ++j) EXPECT_EQ(x(i, j), y(i, j)) << "at (" << i << ", " << j << ")";
}

template <class T>
class ReferenceTyped : public ::testing::Test {};
using Elements = ::testing::Types<float, double, std::int32_t, std::int64_t>;
TYPED_TEST_SUITE(ReferenceTyped, Elements);

TYPED_TEST(ReferenceTyped, IdentityIsNeutralOnBothSides) {
    using T = TypeParam;
    std::mt19937 rng(1);
    for (Semiring s : kSemirings) {
        const Matrix<T> a = random_matrix<T>(s, 5, 7, rng);
        expect_same(product(s, identity<T>(s, 5), a), a);
        expect_same(product(s, a, identity<T>(s, 7)), a);
    }
}

TYPED_TEST(ReferenceTyped, Associative) {
    using T = TypeParam;
    std::mt19937 rng(2);
    for (Semiring s : kSemirings) {
        for (int trial = 0; trial < 20; ++trial) {
            const Matrix<T> a = random_matrix<T>(s, 4, 6, rng);
            const Matrix<T> b = random_matrix<T>(s, 6, 3, rng);
            const Matrix<T> c = random_matrix<T>(s, 3, 5, rng);
            expect_same(product(s, product(s, a, b), c), product(s, a, product(s, b, c)));
        }
    }
}

TYPED_TEST(ReferenceTyped, EmptyInnerDimensionGivesZeroAndNoArgmax) {
    using T = TypeParam;
    for (Semiring s : kSemirings) {
        Matrix<T> a(2, 0), b(0, 3), c(2, 3, T(5));
        Matrix<std::int32_t> arg(2, 3, 7);
        ref::gemm<T>(s, a.cview(), b.cview(), c.view());
        for (T x : c.data) EXPECT_EQ(x, ref::zero<T>(s));
        c = Matrix<T>(2, 3, T(5));
        ref::gemm_argmax<T>(s, a.cview(), b.cview(), c.view(), arg.view());
        for (T x : c.data) EXPECT_EQ(x, ref::zero<T>(s));
        for (std::int32_t k : arg.data) EXPECT_EQ(k, -1);
    }
}

TYPED_TEST(ReferenceTyped, AccumulateCombinesWithOldC) {
    using T = TypeParam;
    // MaxPlus: [1 2] x [[3],[0]] = max(4, 2) = 4; MinPlus: min(4, 2) = 2; MaxMul: max(3, 0) = 3.
    const Matrix<T> a(1, 2, {T(1), T(2)}), b(2, 1, {T(3), T(0)});
    const struct {
        Semiring s;
        T old_c, expected;
    } cases[] = {{Semiring::MaxPlus, T(5), T(5)}, {Semiring::MaxPlus, T(3), T(4)}, {Semiring::MinPlus, T(1), T(1)},
                 {Semiring::MinPlus, T(3), T(2)}, {Semiring::MaxMul, T(7), T(7)},  {Semiring::MaxMul, T(1), T(3)}};
    for (const auto& t : cases) {
        Matrix<T> c(1, 1, t.old_c);
        ref::gemm<T>(t.s, a.cview(), b.cview(), c.view(), /*accumulate=*/true);
        EXPECT_EQ(c(0, 0), t.expected) << tropical::to_string(t.s);
        // Accumulating an empty product keeps C as it was.
        Matrix<T> e(1, 0), f(0, 1), g(1, 1, t.old_c);
        ref::gemm<T>(t.s, e.cview(), f.cview(), g.view(), true);
        EXPECT_EQ(g(0, 0), t.old_c);
    }
}

TYPED_TEST(ReferenceTyped, ArgmaxPicksSmallestKOnTies) {
    using T = TypeParam;
    // The comments list the terms for k = 0..3; the best value is attained twice, at k = 1 and k = 2.
    const Matrix<T> a(1, 4, {T(0), T(1), T(2), T(1)}), b(4, 1, {T(1), T(2), T(1), T(1)});
    Matrix<T> c(1, 1);
    Matrix<std::int32_t> arg(1, 1);
    ref::gemm_argmax<T>(Semiring::MaxPlus, a.cview(), b.cview(), c.view(), arg.view());  // 1, 3, 3, 2
    EXPECT_EQ(c(0, 0), T(3));
    EXPECT_EQ(arg(0, 0), 1);
    const Matrix<T> p(1, 4, {T(3), T(1), T(2), T(1)}), q(4, 1, {T(1), T(1), T(0), T(5)});
    ref::gemm_argmax<T>(Semiring::MinPlus, p.cview(), q.cview(), c.view(), arg.view());  // 4, 2, 2, 6
    EXPECT_EQ(c(0, 0), T(2));
    EXPECT_EQ(arg(0, 0), 1);
    const Matrix<T> m(1, 4, {T(1), T(2), T(4), T(1)}), n(4, 1, {T(3), T(4), T(2), T(8)});
    ref::gemm_argmax<T>(Semiring::MaxMul, m.cview(), n.cview(), c.view(), arg.view());  // 3, 8, 8, 8
    EXPECT_EQ(c(0, 0), T(8));
    EXPECT_EQ(arg(0, 0), 1);
}

TYPED_TEST(ReferenceTyped, ArgmaxIsMinusOneWhenNothingBeatsTheZero) {
    using T = TypeParam;
    for (Semiring s : kSemirings) {
        const T z = ref::zero<T>(s);
        // Every term involves a zero (for MaxMul, terms equal to the zero 0 do not beat it either).
        const Matrix<T> a(1, 3, {z, T(1), z}), b(3, 1, {T(2), z, T(1)});
        Matrix<T> c(1, 1);
        Matrix<std::int32_t> arg(1, 1);
        ref::gemm_argmax<T>(s, a.cview(), b.cview(), c.view(), arg.view());
        EXPECT_EQ(c(0, 0), z) << tropical::to_string(s);
        EXPECT_EQ(arg(0, 0), -1) << tropical::to_string(s);
    }
    if constexpr (std::is_signed_v<T>) {
        // MaxMul outside its domain: negative terms lose to the zero 0.
        const Matrix<T> a(1, 2, {T(-1), T(2)}), b(2, 1, {T(3), T(-4)});
        Matrix<T> c(1, 1);
        Matrix<std::int32_t> arg(1, 1);
        ref::gemm_argmax<T>(Semiring::MaxMul, a.cview(), b.cview(), c.view(), arg.view());
        EXPECT_EQ(c(0, 0), T(0));
        EXPECT_EQ(arg(0, 0), -1);
        ref::gemm<T>(Semiring::MaxMul, a.cview(), b.cview(), c.view());
        EXPECT_EQ(c(0, 0), T(0));
    }
}

// Backward, worked by hand. A (2x2), B (2x2):
//   A = [1 4; 3 2], B = [2 1; 5 3]; terms for C[i,j] are A[i,0]B[0,j] and A[i,1]B[1,j].
//   MaxPlus: C = [max(3,9) max(2,7); max(5,7) max(4,5)] = [9 7; 7 5], argmax = [1 1; 1 1]
//   MinPlus: C = [min(3,9) min(2,7); min(5,7) min(4,5)] = [3 2; 5 4], argmax = [0 0; 0 0]
//   MaxMul:  C = [max(2,20) max(1,12); max(6,10) max(3,6)] = [20 12; 10 6], argmax = [1 1; 1 1]
// with grad_C = [1 10; 100 1000].
TYPED_TEST(ReferenceTyped, BackwardByHand) {
    using T = TypeParam;
    const Matrix<T> a(2, 2, {T(1), T(4), T(3), T(2)}), b(2, 2, {T(2), T(1), T(5), T(3)});
    const Matrix<T> g(2, 2, {T(1), T(10), T(100), T(1000)});
    const struct {
        Semiring s;
        Matrix<T> c;
        Matrix<std::int32_t> arg;
        Matrix<T> grad_a, grad_b;
    } cases[] = {
        // grad_A[i,1] += g[i,0] + g[i,1]; grad_B[1,j] += g[0,j] + g[1,j].
        {Semiring::MaxPlus, Matrix<T>(2, 2, {T(9), T(7), T(7), T(5)}), Matrix<std::int32_t>(2, 2, {1, 1, 1, 1}),
         Matrix<T>(2, 2, {T(0), T(11), T(0), T(1100)}), Matrix<T>(2, 2, {T(0), T(0), T(101), T(1010)})},
        {Semiring::MinPlus, Matrix<T>(2, 2, {T(3), T(2), T(5), T(4)}), Matrix<std::int32_t>(2, 2, {0, 0, 0, 0}),
         Matrix<T>(2, 2, {T(11), T(0), T(1100), T(0)}), Matrix<T>(2, 2, {T(101), T(1010), T(0), T(0)})},
        // grad_A[i,1] += g[i,j] * B[1,j]: row 0: 1*5 + 10*3 = 35; row 1: 100*5 + 1000*3 = 3500.
        // grad_B[1,j] += g[i,j] * A[i,1]: col 0: 1*4 + 100*2 = 204; col 1: 10*4 + 1000*2 = 2040.
        {Semiring::MaxMul, Matrix<T>(2, 2, {T(20), T(12), T(10), T(6)}), Matrix<std::int32_t>(2, 2, {1, 1, 1, 1}),
         Matrix<T>(2, 2, {T(0), T(35), T(0), T(3500)}), Matrix<T>(2, 2, {T(0), T(0), T(204), T(2040)})},
        // MaxMin: C = [max(1,4) max(1,3); max(2,2) max(1,2)] = [4 3; 2 2], argmax [1 1; 0 1] (a tie at
        // (1,0): k = 0). The gradient goes to the operand that was the min: A[0,1]=4 < B[1,0]=5 (A),
        // A[0,1]=4 > B[1,1]=3 (B), A[1,0]=3 > B[0,0]=2 (B), A[1,1]=2 < B[1,1]=3 (A).
        {Semiring::MaxMin, Matrix<T>(2, 2, {T(4), T(3), T(2), T(2)}), Matrix<std::int32_t>(2, 2, {1, 1, 0, 1}),
         Matrix<T>(2, 2, {T(0), T(1), T(0), T(1000)}), Matrix<T>(2, 2, {T(100), T(0), T(0), T(10)})},
        // MinMax: C = [min(2,5) min(1,4); min(3,5) min(3,3)] = [2 1; 3 3], argmax all 0 (a tie at (1,1)).
        // The gradient goes to the max at k = 0: B[0,0]=2 > A[0,0]=1 (B); A[0,0]=1 = B[0,1]=1 (a tie: A);
        // A[1,0]=3 > B[0,0]=2 and > B[0,1]=1 (A, twice).
        {Semiring::MinMax, Matrix<T>(2, 2, {T(2), T(1), T(3), T(3)}), Matrix<std::int32_t>(2, 2, {0, 0, 0, 0}),
         Matrix<T>(2, 2, {T(10), T(0), T(1100), T(0)}), Matrix<T>(2, 2, {T(1), T(0), T(0), T(0)})},
    };
    for (const auto& t : cases) {
        SCOPED_TRACE(tropical::to_string(t.s));
        Matrix<T> c(2, 2);
        Matrix<std::int32_t> arg(2, 2);
        ref::gemm_argmax<T>(t.s, a.cview(), b.cview(), c.view(), arg.view());
        expect_same(c, t.c);
        expect_same(arg, t.arg);
        Matrix<T> grad_a(2, 2, T(0)), grad_b(2, 2, T(0));
        ref::backward_a<T>(t.s, g.cview(), arg.cview(), a.cview(), b.cview(), grad_a.view());
        ref::backward_b<T>(t.s, g.cview(), arg.cview(), a.cview(), b.cview(), grad_b.view());
        expect_same(grad_a, t.grad_a);
        expect_same(grad_b, t.grad_b);
        // Backward accumulates into what is there.
        ref::backward_a<T>(t.s, g.cview(), arg.cview(), a.cview(), b.cview(), grad_a.view());
        for (std::int64_t i = 0; i < 2; ++i)
            for (std::int64_t j = 0; j < 2; ++j) EXPECT_EQ(grad_a(i, j), T(2) * t.grad_a(i, j));
    }
}

TYPED_TEST(ReferenceTyped, BackwardSkipsMissingArgmax) {
    using T = TypeParam;
    const Matrix<T> a(1, 2, {T(1), T(2)}), b(2, 1, {T(3), T(4)}), g(1, 1, {T(5)});
    for (std::int32_t k : {-1, 2, 1000}) {
        const Matrix<std::int32_t> arg(1, 1, {k});
        // The gradients live inside larger buffers, so that a write past K would land in view.
        std::vector<T> storage_a(2048, T(0)), storage_b(2048, T(0));
        const ref::HostView<T> grad_a{storage_a.data(), 1, 2, 0, 1};
        const ref::HostView<T> grad_b{storage_b.data(), 2, 1, 1, 0};
        ref::backward_a<T>(Semiring::MaxMul, g.cview(), arg.cview(), a.cview(), b.cview(), grad_a);
        ref::backward_b<T>(Semiring::MaxMul, g.cview(), arg.cview(), a.cview(), b.cview(), grad_b);
        for (T x : storage_a) EXPECT_EQ(x, T(0)) << "k = " << k;
        for (T x : storage_b) EXPECT_EQ(x, T(0)) << "k = " << k;
    }
}

TYPED_TEST(ReferenceTyped, StridedViews) {
    using T = TypeParam;
    // The same 2x3 matrix stored column-major with a leading dimension of 4.
    std::vector<T> storage(12, T(-77));
    const Matrix<T> a(2, 3, {T(1), T(2), T(3), T(4), T(5), T(6)});
    for (std::int64_t i = 0; i < 2; ++i)
        for (std::int64_t j = 0; j < 3; ++j) storage[static_cast<std::size_t>(j * 4 + i)] = a(i, j);
    const ref::HostView<const T> col_major{storage.data(), 2, 3, 1, 4};
    const Matrix<T> b(3, 2, {T(1), T(0), T(0), T(1), T(2), T(2)});
    for (Semiring s : kSemirings) {
        Matrix<T> c1(2, 2), c2(2, 2);
        ref::gemm<T>(s, a.cview(), b.cview(), c1.view());
        ref::gemm<T>(s, col_major, b.cview(), c2.view());
        expect_same(c1, c2);
    }
}

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
