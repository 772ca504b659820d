#pragma once
// Inputs and comparisons of the LogPlus tests (tests/cpu_logplus_test.cpp,
// tests/cpu_logplus_backward_test.cpp): uniform operands, operands full of special values, and
// results compared with the long-double reference within LogPlus's documented error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "support/host_matrix.hpp"
#include "support/random_inputs.hpp"

namespace tropical::testing {

// Elements uniform in [-range, range].
template <class T>
HostMatrix<T> uniform_matrix(Rng& rng, std::int64_t rows, std::int64_t cols, const Geometry& g, double range) {
    auto m = make_matrix<T>(rows, cols, g);
    m.fill([&] { return static_cast<T>(rng.real(-range, range)); });
    return m;
}

// Elements that are, with probability p, NaN, +-inf, -0 or 0 (-inf the likeliest), else uniform in [-5, 5].
template <class T>
HostMatrix<T> log_special_matrix(Rng& rng, std::int64_t rows, std::int64_t cols, const Geometry& g, double p) {
    constexpr T inf = std::numeric_limits<T>::infinity();
    const std::vector<T> specials = {-inf, -inf, -inf, -inf, inf, std::numeric_limits<T>::quiet_NaN(), T(-0.0), T(0)};
    auto m = make_matrix<T>(rows, cols, g);
    m.fill([&]() -> T {
        if (!rng.chance(p)) return static_cast<T>(rng.real(-5.0, 5.0));
        return specials[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(specials.size()) - 1))];
    });
    return m;
}

// LogPlus's documented error: 1e-5 max(1, |C|) for f32, 1e-12 for f64.
template <class T>
constexpr double log_tolerance() {
    return std::is_same_v<T, float> ? 1e-5 : 1e-12;
}

// Equal where either is NaN or infinite (bits of the infinities, any NaN), else within
// log_tolerance() * max(1, |expected|); padding untouched. `worst` gets the largest relative error.
template <class T>
::testing::AssertionResult log_close(const char* what, const HostMatrix<T>& expected, const HostMatrix<T>& actual,
                                     double* worst = nullptr) {
    return compare_impl::compare(what, expected, actual, [&](std::int64_t, std::int64_t, std::int64_t, T e, T a) {
        if (!std::isfinite(e) || !std::isfinite(a)) return same_value(e, a);
        const double error = std::fabs(static_cast<double>(a) - static_cast<double>(e)) /
                             std::max(1.0, std::fabs(static_cast<double>(e)));
        if (worst) *worst = std::max(*worst, error);
        return error <= log_tolerance<T>();
    });
}

// No element is -0.
template <class T>
::testing::AssertionResult no_negative_zero(const HostMatrix<T>& m) {
    std::int64_t found = 0;
    m.for_each([&](std::int64_t b, std::int64_t i, std::int64_t j) {
        const T x = m.at(b, i, j);
        found += x == T(0) && std::signbit(x);
    });
    if (found == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << found << " elements are -0";
}

}  // namespace tropical::testing
