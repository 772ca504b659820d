#pragma once
// Row-major host matrices for the tests of the CPU reference (tests/reference_*test.cpp), products
// and identities of a semiring made by the reference, random matrices of small integers, and an
// element-by-element comparison.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <random>
#include <vector>

#include "reference/reference.hpp"

namespace tropical::testing::reference_tests {

using tropical::Semiring;
namespace ref = tropical::reference;

inline constexpr Semiring kSemirings[] = {Semiring::MaxPlus, Semiring::MinPlus, Semiring::MaxMul};

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

}  // namespace tropical::testing::reference_tests
