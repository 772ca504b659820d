#pragma once
// Helpers of the GPU correctness tests: launches on poisoned outputs, the CPU reference on the same
// matrices, and whole checks of random problems against it. The random inputs live in
// support/random_inputs.hpp, the host and device matrices and comparisons in support/host_matrix.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <tropical/gemm.hpp>
#include "reference/reference.hpp"
#include "support/host_matrix.hpp"
#include "support/random_inputs.hpp"

namespace tropical::testing {

// ---------------------------------------------------------------------------------------------
// Launches. Inputs and outputs are uploaded byte for byte (padding holds the poison); an output that
// is overwritten is poisoned on the device again just before the launch, with its own poison byte.

struct Launch {
    bool accumulate = false;
    bool batched_api = false;  // gemm_batched* even for a count of 1
};

template <class S, class T>
HostMatrix<T> gpu_gemm(const HostMatrix<T>& a, const HostMatrix<T>& b, const HostMatrix<T>& c, Launch launch = {}) {
    DeviceMatrix<T> da(a), db(b), dc(c);
    if (!launch.accumulate) dc.fill_bytes(c.poison);
    const GemmOptions options{nullptr, launch.accumulate};
    if (c.count == 1 && !launch.batched_api) gemm<S>(da.view(), db.view(), dc.view(), options);
    else gemm_batched<S>(da.batched(), db.batched(), dc.batched(), c.count, options);
    return dc.download();
}

template <class T>
HostMatrix<T> reference_gemm(Semiring s, const HostMatrix<T>& a, const HostMatrix<T>& b, const HostMatrix<T>& c,
                             bool accumulate = false) {
    HostMatrix<T> out = c;
    for (std::int64_t n = 0; n < c.count; ++n) {
        // Bands of rows on every core for big products (the split-K tests' take seconds on one).
        const reference::HostView<const T> va = a.view(n), vb = b.view(n);
        const reference::HostView<T> vc = out.view(n);
        const double terms = static_cast<double>(vc.rows) * static_cast<double>(vc.cols) * static_cast<double>(va.cols);
        const std::int64_t bands = terms < 1e7 ? 1
                                               : std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1,
                                                                          std::max<std::int64_t>(vc.rows, 1));
        std::vector<std::thread> workers;
        for (std::int64_t t = 0; t < bands; ++t) {
            const std::int64_t r0 = vc.rows * t / bands, r1 = vc.rows * (t + 1) / bands;
            const reference::HostView<const T> band_a{va.data + r0 * va.row_stride, r1 - r0, va.cols, va.row_stride,
                                                      va.col_stride};
            const reference::HostView<T> band_c{vc.data + r0 * vc.row_stride, r1 - r0, vc.cols, vc.row_stride,
                                                vc.col_stride};
            workers.emplace_back([=] { reference::gemm<T>(s, band_a, vb, band_c, accumulate); });
        }
        for (auto& w : workers) w.join();
    }
    return out;
}

template <class S, class T>
std::pair<HostMatrix<T>, HostMatrix<std::int32_t>> gpu_gemm_argmax(const HostMatrix<T>& a, const HostMatrix<T>& b,
                                                                   const HostMatrix<T>& c,
                                                                   const HostMatrix<std::int32_t>& argmax,
                                                                   Launch launch = {}) {
    DeviceMatrix<T> da(a), db(b), dc(c);
    DeviceMatrix<std::int32_t> dm(argmax);
    dc.fill_bytes(c.poison);
    dm.fill_bytes(argmax.poison);
    if (c.count == 1 && !launch.batched_api) gemm_with_argmax<S>(da.view(), db.view(), dc.view(), dm.view());
    else gemm_batched_with_argmax<S>(da.batched(), db.batched(), dc.batched(), dm.batched(), c.count);
    return {dc.download(), dm.download()};
}

template <class T>
std::pair<HostMatrix<T>, HostMatrix<std::int32_t>> reference_gemm_argmax(Semiring s, const HostMatrix<T>& a,
                                                                         const HostMatrix<T>& b, const HostMatrix<T>& c,
                                                                         const HostMatrix<std::int32_t>& argmax) {
    std::pair<HostMatrix<T>, HostMatrix<std::int32_t>> out{c, argmax};
    for (std::int64_t n = 0; n < c.count; ++n)
        reference::gemm_argmax<T>(s, a.view(n), b.view(n), out.first.view(n), out.second.view(n));
    return out;
}

// A random argmax for an M x N output over K terms: -1 now and then, and when `concentrated` half of
// the entries on k = 0, so that many atomics meet on one gradient element.
inline HostMatrix<std::int32_t> random_argmax(Rng& rng, std::int64_t rows, std::int64_t cols, std::int64_t k,
                                              const Geometry& g = {}, bool concentrated = false) {
    auto m = make_matrix<std::int32_t>(rows, cols, g);
    m.fill([&]() -> std::int32_t {
        if (k == 0 || rng.chance(0.1)) return -1;
        if (concentrated && rng.chance(0.5)) return 0;
        return static_cast<std::int32_t>(rng.integer(0, k - 1));
    });
    return m;
}

// Gradients: values uniform in [-10, 10].
template <class T>
HostMatrix<T> random_gradient(Rng& rng, std::int64_t rows, std::int64_t cols, const Geometry& g = {}) {
    auto m = make_matrix<T>(rows, cols, g);
    m.fill([&] { return static_cast<T>(rng.real(-10.0, 10.0)); });
    return m;
}

template <class T>
HostMatrix<T> magnitudes(const HostMatrix<T>& m) {
    HostMatrix<T> out = m;
    out.for_each([&](std::int64_t b, std::int64_t i, std::int64_t j) { out.at(b, i, j) = std::fabs(m.at(b, i, j)); });
    return out;
}

// grad (M x K for A, K x N for B): the gradient of one operand from (grad_c, argmax, a, b); the
// semiring reads what it needs of a and b (MaxMul the other operand, MaxMin and MinMax both).
template <class S, class T>
HostMatrix<T> gpu_backward(bool for_a, const HostMatrix<T>& grad_c, const HostMatrix<std::int32_t>& argmax,
                           const HostMatrix<T>& a, const HostMatrix<T>& b, const HostMatrix<T>& grad,
                           Launch launch = {}) {
    DeviceMatrix<T> dg(grad_c), da(a), db(b), dgrad(grad);
    DeviceMatrix<std::int32_t> dm(argmax);
    if (!launch.accumulate) dgrad.fill_bytes(grad.poison);
    const GemmOptions options{nullptr, launch.accumulate};
    const bool single = grad.count == 1 && !launch.batched_api;
    if (for_a) {
        if (single) gemm_backward_a<S>(dg.view(), dm.view(), da.view(), db.view(), dgrad.view(), options);
        else
            gemm_batched_backward_a<S>(dg.batched(), dm.batched(), da.batched(), db.batched(), dgrad.batched(),
                                       grad.count, options);
    } else {
        if (single) gemm_backward_b<S>(dg.view(), dm.view(), da.view(), db.view(), dgrad.view(), options);
        else
            gemm_batched_backward_b<S>(dg.batched(), dm.batched(), da.batched(), db.batched(), dgrad.batched(),
                                       grad.count, options);
    }
    return dgrad.download();
}

// {expected, scale}: the reference gradient, and what the same routing gives on magnitudes (of
// grad_C, and for MaxMul of the factors; MaxMin and MinMax route by the operands' signed values).
template <class T>
std::pair<HostMatrix<T>, HostMatrix<T>> reference_backward(Semiring s, bool for_a, const HostMatrix<T>& grad_c,
                                                           const HostMatrix<std::int32_t>& argmax,
                                                           const HostMatrix<T>& a, const HostMatrix<T>& b,
                                                           const HostMatrix<T>& grad, bool accumulate) {
    HostMatrix<T> expected = grad, scale = magnitudes(grad);
    if (!accumulate)
        grad.for_each(
            [&](std::int64_t n, std::int64_t i, std::int64_t j) { expected.at(n, i, j) = scale.at(n, i, j) = T(0); });
    const bool product = s == Semiring::MaxMul;
    const HostMatrix<T> abs_grad_c = magnitudes(grad_c), abs_a = product ? magnitudes(a) : a,
                        abs_b = product ? magnitudes(b) : b;
    for (std::int64_t n = 0; n < grad.count; ++n) {
        reference::backward<T>(s, for_a, grad_c.view(n), argmax.view(n), a.view(n), b.view(n), expected.view(n));
        reference::backward<T>(s, for_a, abs_grad_c.view(n), argmax.view(n), abs_a.view(n), abs_b.view(n),
                               scale.view(n));
    }
    return {std::move(expected), std::move(scale)};
}

// ---------------------------------------------------------------------------------------------
// Whole checks: random operands of one problem, GPU against the reference.

struct Shape {
    std::int64_t m, n, k;
};

inline std::string describe(const Shape& s) {
    return "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k);
}

// Operand geometries of one problem (A, B, C, and argmax where there is one).
struct Geometries {
    Geometry a, b, c, argmax;
};

// The 8 combinations of layouts, with padding that differs per operand and per `salt`.
inline Geometries layout_combination(int combination, int salt = 0) {
    Geometries g;
    g.a.layout = (combination & 1) ? Layout::ColMajor : Layout::RowMajor;
    g.b.layout = (combination & 2) ? Layout::ColMajor : Layout::RowMajor;
    g.c.layout = (combination & 4) ? Layout::ColMajor : Layout::RowMajor;
    g.argmax.layout = ((combination + salt) & 1) ? flip(g.c.layout) : g.c.layout;
    g.a.pad = (salt + combination) % 4;
    g.b.pad = (salt + 2 * combination + 1) % 5;
    g.c.pad = (salt + combination + 1) % 3;
    g.argmax.pad = ((salt + combination) / 2) % 3;
    return g;
}

inline std::string describe(const Geometries& g) {
    std::ostringstream out;
    out << "A " << to_string(g.a.layout) << " pad " << g.a.pad << ", B " << to_string(g.b.layout) << " pad " << g.b.pad
        << ", C " << to_string(g.c.layout) << " pad " << g.c.pad << ", argmax " << to_string(g.argmax.layout) << " pad "
        << g.argmax.pad;
    if (g.c.count != 1)
        out << "; count " << g.c.count << ", A " << (g.a.broadcast ? "broadcast" : "gap " + std::to_string(g.a.gap))
            << ", B " << (g.b.broadcast ? "broadcast" : "gap " + std::to_string(g.b.gap)) << ", C gap " << g.c.gap;
    return out.str();
}

// Sets the batch count of every operand of `g`.
inline Geometries with_count(Geometries g, std::int64_t count) {
    g.a.count = g.b.count = g.c.count = g.argmax.count = count;
    return g;
}

// Operands of ties with the semiring's edge values (scattered_specials) written at `per_product`
// random places of each product's A and B, and the last row of the first product's A at the zero
// (its results are the zero, with argmax -1).
template <class T>
std::pair<HostMatrix<T>, HostMatrix<T>> edge_operands(Rng& rng, Semiring ring, const Shape& s, const Geometries& g,
                                                      int per_product) {
    const std::vector<T> specials = scattered_specials<T>(ring);
    auto a = random_matrix<T>(rng, ring, Values::Ties, s.m, s.k, g.a);
    auto b = random_matrix<T>(rng, ring, Values::Ties, s.k, s.n, g.b);
    const std::int64_t count = g.a.count;
    for (int n = 0; n < per_product * static_cast<int>(count); ++n) {
        const T v = specials[static_cast<std::size_t>(n) % specials.size()];
        const std::int64_t p = rng.integer(0, count - 1);
        a.at(p, rng.integer(0, s.m - 1), rng.integer(0, s.k - 1)) = v;
        b.at(p, rng.integer(0, s.k - 1), rng.integer(0, s.n - 1)) = v;
    }
    for (std::int64_t k = 0; k < s.k; ++k) a(s.m - 1, k) = reference::zero<T>(ring);
    return {std::move(a), std::move(b)};
}

// C = A (x) B (or C = C (+) A (x) B) on the GPU equals the reference exactly.
template <class S, class T>
void check_gemm(Rng& rng, const Shape& s, const Geometries& g, Values values = Values::Typical, Launch launch = {},
                unsigned char poison = kPoison) {
    SCOPED_TRACE(describe(s) + "; " + describe(g) + (launch.accumulate ? "; accumulate" : ""));
    constexpr Semiring ring = S::value;
    const auto a = random_matrix<T>(rng, ring, values, s.m, s.k, g.a);
    const auto b = random_matrix<T>(rng, ring, values, s.k, s.n, g.b);
    auto c = make_matrix<T>(s.m, s.n, g.c, poison);
    if (launch.accumulate) c.fill([&] { return random_value<T>(rng, ring, Values::Typical); });
    const auto expected = reference_gemm<T>(ring, a, b, c, launch.accumulate);
    const auto actual = gpu_gemm<S>(a, b, c, launch);
    EXPECT_TRUE(exactly_equal("C", expected, actual));
}

// C and argmax from gemm_with_argmax equal the reference exactly.
template <class S, class T>
void check_gemm_argmax(Rng& rng, const Shape& s, const Geometries& g, Values values = Values::Typical,
                       Launch launch = {}, unsigned char poison = kPoison) {
    SCOPED_TRACE(describe(s) + "; " + describe(g) + "; with argmax");
    constexpr Semiring ring = S::value;
    const auto a = random_matrix<T>(rng, ring, values, s.m, s.k, g.a);
    const auto b = random_matrix<T>(rng, ring, values, s.k, s.n, g.b);
    const auto c = make_matrix<T>(s.m, s.n, g.c, poison);
    const auto argmax = make_matrix<std::int32_t>(s.m, s.n, g.argmax, kPoison);
    const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c, argmax);
    const auto [actual_c, actual_argmax] = gpu_gemm_argmax<S>(a, b, c, argmax, launch);
    EXPECT_TRUE(exactly_equal("C", expected_c, actual_c));
    EXPECT_TRUE(exactly_equal("argmax", expected_argmax, actual_argmax));
}

// Backward for A (g.a is grad_A's geometry) or for B (g.b is grad_B's), from random grad_C and argmax
// (g.c and g.argmax), against the reference within backward_rtol.
template <class S, class T>
void check_backward(Rng& rng, bool for_a, const Shape& s, const Geometries& g, Launch launch = {},
                    bool concentrated = false, unsigned char poison = kPoison) {
    SCOPED_TRACE(describe(s) + "; " + describe(g) + (for_a ? "; backward A" : "; backward B") +
                 (launch.accumulate ? ", accumulate" : "") + (concentrated ? ", concentrated argmax" : ""));
    constexpr Semiring ring = S::value;
    const auto grad_c = random_gradient<T>(rng, s.m, s.n, g.c);
    const auto argmax = random_argmax(rng, s.m, s.n, s.k, g.argmax, concentrated);
    // The operands, which the semiring reads as it needs them (grad shares its operand's geometry).
    const auto a = random_matrix<T>(rng, ring, Values::Typical, s.m, s.k, g.a);
    const auto b = random_matrix<T>(rng, ring, Values::Typical, s.k, s.n, g.b);
    auto grad = for_a ? make_matrix<T>(s.m, s.k, g.a, poison) : make_matrix<T>(s.k, s.n, g.b, poison);
    if (launch.accumulate) grad.fill([&] { return static_cast<T>(rng.real(-10.0, 10.0)); });
    const auto [expected, scale] = reference_backward<T>(ring, for_a, grad_c, argmax, a, b, grad, launch.accumulate);
    const auto actual = gpu_backward<S>(for_a, grad_c, argmax, a, b, grad, launch);
    EXPECT_TRUE(close(for_a ? "grad_A" : "grad_B", expected, actual, scale, backward_rtol<T>()));
}

}  // namespace tropical::testing
