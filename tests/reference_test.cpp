// Tests of the CPU reference (src/reference/reference.hpp) against the algebra it must satisfy and
// against small products worked out by hand. Its edge values (the zeros' absorption over the finite
// range, NaN, infinities, the identities): reference_edge_values_test.cpp.
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

}  // namespace
