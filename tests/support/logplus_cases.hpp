#pragma once
// Inputs and comparisons of the LogPlus tests (tests/cpu_logplus_test.cpp,
// tests/cpu_logplus_backward_test.cpp, tests/logplus_gpu_test.cpp, tests/logplus_emulation_test.cpp
// and the contraction tests): uniform operands, operands with special values, and results compared
// with the long-double reference within LogPlus's documented error.
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

// What a GPU or emulated case's operands hold (log_inputs).
struct LogInputs {
    double range = 10;        // uniform in [-range, range]
    bool edges = false;       // now and then -inf, +inf, NaN, -0 and whole rows / columns of -inf
    bool dominant = false;    // each row of A has one entry 250 above its others
    bool zeros_only = false;  // edges are -inf, -0 and rows of -inf only (no NaN, no +inf): what a
                              // factored tile may hold (kernels/logplus_factored.cuh)
};

// An operand as `v` says: A (is_a; its dominant entries, its row 1 of zeros) or B (its column 1).
template <class T>
HostMatrix<T> log_inputs(Rng& rng, std::int64_t rows, std::int64_t cols, const Geometry& g, const LogInputs& v,
                         bool is_a) {
    constexpr T inf = std::numeric_limits<T>::infinity();
    auto m = make_matrix<T>(rows, cols, g);
    m.fill([&]() -> T {
        if (v.edges) {
            const double u = rng.real(0, 1);
            if (u < 0.03) return -inf;
            if (u < 0.035) return T(-0.0);
            if (v.zeros_only) return static_cast<T>(rng.real(-v.range, v.range));
            if (u < 0.037) return inf;
            if (u < 0.038) return std::numeric_limits<T>::quiet_NaN();
        }
        return static_cast<T>(rng.real(-v.range, v.range));
    });
    if (v.dominant && is_a)
        for (std::int64_t b = 0; b < m.distinct(); ++b)
            for (std::int64_t i = 0; i < rows && cols > 0; ++i) m.at(b, i, rng.integer(0, cols - 1)) = T(v.range + 250);
    if (v.edges && rows > 2 && cols > 2)  // a row of A (or column of B) of zeros
        for (std::int64_t b = 0; b < m.distinct(); ++b)
            for (std::int64_t e = 0; e < (is_a ? cols : rows); ++e) (is_a ? m.at(b, 1, e) : m.at(b, e, 1)) = -inf;
    return m;
}

// LogPlus's documented error: 1e-5 max(1, |C|) for f32, 1e-12 for f64.
template <class T>
constexpr double log_tolerance() {
    return std::is_same_v<T, float> ? 1e-5 : 1e-12;
}

// One result against the reference's: the same where either is NaN or infinite (bits of the
// infinities, any NaN), else within tolerance * max(1, |expected|). `error` gets the relative error.
template <class T>
bool log_equal(T expected, T actual, double tolerance = log_tolerance<T>(), double* error = nullptr) {
    if (!std::isfinite(expected) || !std::isfinite(actual)) return same_value(expected, actual);
    const double e = std::fabs(static_cast<double>(actual) - static_cast<double>(expected)) /
                     std::max(1.0, std::fabs(static_cast<double>(expected)));
    if (error) *error = e;
    return e <= tolerance;
}

// log_equal element by element, padding untouched. `worst` gets the largest relative error.
template <class T>
::testing::AssertionResult log_close(const char* what, const HostMatrix<T>& expected, const HostMatrix<T>& actual,
                                     double* worst = nullptr) {
    return compare_impl::compare(what, expected, actual, [&](std::int64_t, std::int64_t, std::int64_t, T e, T a) {
        double error = 0;
        const bool ok = log_equal(e, a, log_tolerance<T>(), &error);
        if (worst) *worst = std::max(*worst, error);
        return ok;
    });
}

// log_equal on the elements alone (not the padding), within `tolerance`; the first that differs named.
template <class T>
::testing::AssertionResult log_elements_close(const HostMatrix<T>& expected, const HostMatrix<T>& actual,
                                              double tolerance = log_tolerance<T>()) {
    for (std::int64_t b = 0; b < expected.count; ++b)
        for (std::int64_t i = 0; i < expected.rows; ++i)
            for (std::int64_t j = 0; j < expected.cols; ++j)
                if (!log_equal(expected.at(b, i, j), actual.at(b, i, j), tolerance))
                    return ::testing::AssertionFailure()
                           << "[" << b << "][" << i << "," << j << "] = " << actual.at(b, i, j)
                           << " but the oracle gives " << expected.at(b, i, j) << " (tolerance " << tolerance
                           << " x max(1, |C|))";
    return ::testing::AssertionSuccess();
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
