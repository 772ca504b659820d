#pragma once
// Helpers of the edge-value GPU tests (tests/edge_values*_gpu_test.cpp): their type-parameterised
// suites, small products from literal values, and comparisons that name both values.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "support/gemm_test_util.hpp"

namespace tropical::testing {

template <class C>
class EdgeValuesGpu : public ::testing::Test {};
TYPED_TEST_SUITE(EdgeValuesGpu, AllCases, CaseName);

template <class C>
class FloatEdgeValuesGpu : public ::testing::Test {};
TYPED_TEST_SUITE(FloatEdgeValuesGpu, FloatCases, CaseName);

// A row-major M x K times K x N product from literal values, run on the GPU with and without argmax.
template <class S, class T>
struct Small {
    HostMatrix<T> a, b;
    Small(std::int64_t m, std::int64_t k, std::int64_t n, const std::vector<T>& av, const std::vector<T>& bv)
        : a(make_matrix<T>(m, k, {Layout::RowMajor, 1})), b(make_matrix<T>(k, n, {Layout::ColMajor, 2})) {
        EXPECT_EQ(static_cast<std::int64_t>(av.size()), m * k);
        EXPECT_EQ(static_cast<std::int64_t>(bv.size()), k * n);
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < k; ++j) a(i, j) = av[static_cast<std::size_t>(i * k + j)];
        for (std::int64_t i = 0; i < k; ++i)
            for (std::int64_t j = 0; j < n; ++j) b(i, j) = bv[static_cast<std::size_t>(i * n + j)];
    }
    // GPU results, also checked against the reference (C of gemm and of gemm_with_argmax alike).
    struct Result {
        HostMatrix<T> c;
        HostMatrix<std::int32_t> argmax;
    };
    Result run() const {
        const auto c0 = make_matrix<T>(a.rows, b.cols, {Layout::RowMajor, 3});
        const auto m0 = make_matrix<std::int32_t>(a.rows, b.cols, {Layout::ColMajor, 1});
        const auto expected_c = reference_gemm<T>(S::value, a, b, c0);
        const auto [expected_c2, expected_argmax] = reference_gemm_argmax<T>(S::value, a, b, c0, m0);
        const auto c = gpu_gemm<S>(a, b, c0);
        const auto [c2, argmax] = gpu_gemm_argmax<S>(a, b, c0, m0);
        EXPECT_TRUE(exactly_equal("C", expected_c, c));
        EXPECT_TRUE(exactly_equal("C (with argmax)", expected_c2, c2));
        EXPECT_TRUE(exactly_equal("argmax", expected_argmax, argmax));
        EXPECT_TRUE(exactly_equal("C of gemm and of gemm_with_argmax", c, c2));
        return {c, argmax};
    }
};

template <class T>
::testing::AssertionResult is(T expected, T actual) {
    if (same_value(expected, actual)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "expected " << show(expected) << ", got " << show(actual);
}

}  // namespace tropical::testing
