#pragma once
// Helpers of the GPU correctness tests: random host matrices in either layout with padded leading
// dimensions (and batches with gaps or broadcasting), their device mirrors, launches on poisoned
// outputs, the CPU reference on the same matrices, and comparisons that also check that no byte
// outside the matrices (padding between rows, gaps between batches) was written.
//
// Every test draws from a fresh seed (std::random_device), shown on failure through SCOPED_TRACE;
// TROPICAL_TEST_SEED=<seed> replays it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "reference/reference.hpp"
#include <tropical/device_buffer.hpp>
#include <tropical/gemm.hpp>
#include <tropical/matrix.hpp>
#include <tropical/types.hpp>

namespace tropical::testing {

// ---------------------------------------------------------------------------------------------
// Type parameters: one semiring and one element type.

template <class S, class T>
struct Case {
    using Ring = S;
    using Elem = T;
};

using AllCases = ::testing::Types<Case<MaxPlus, float>, Case<MinPlus, float>, Case<MaxMul, float>,        //
                                  Case<MaxPlus, double>, Case<MinPlus, double>, Case<MaxMul, double>,     //
                                  Case<MaxPlus, std::int32_t>, Case<MinPlus, std::int32_t>,               //
                                  Case<MaxMul, std::int32_t>, Case<MaxPlus, std::int64_t>,                //
                                  Case<MinPlus, std::int64_t>, Case<MaxMul, std::int64_t>>;
using FloatCases = ::testing::Types<Case<MaxPlus, float>, Case<MinPlus, float>, Case<MaxMul, float>,
                                    Case<MaxPlus, double>, Case<MinPlus, double>, Case<MaxMul, double>>;

// "f32_maxplus", for the names of typed tests.
struct CaseName {
    template <class C>
    static std::string GetName(int) {
        return std::string(to_string(dtype_of<typename C::Elem>())) + "_" + std::string(to_string(C::Ring::value));
    }
};

// 0..11, so that each type parameter can walk the layouts from a different starting point.
template <class C>
constexpr int case_index() {
    const int t = static_cast<int>(dtype_of<typename C::Elem>());
    const int s = static_cast<int>(C::Ring::value);
    return t * 3 + s;
}

// ---------------------------------------------------------------------------------------------
// Randomness.

inline std::uint64_t test_seed() {
    if (const char* s = std::getenv("TROPICAL_TEST_SEED"); s && *s) return std::strtoull(s, nullptr, 0);
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

class Rng {
public:
    explicit Rng(std::uint64_t seed) : seed_(seed), engine_(seed) {}
    std::uint64_t seed() const { return seed_; }
    // Uniform in [lo, hi].
    std::int64_t integer(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(engine_); }
    double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(engine_); }
    bool chance(double p) { return std::bernoulli_distribution(p)(engine_); }

private:
    std::uint64_t seed_;
    std::mt19937_64 engine_;
};

inline std::string seed_message(std::uint64_t seed) {
    return "random seed " + std::to_string(seed) + " (replay with TROPICAL_TEST_SEED=" + std::to_string(seed) + ")";
}

}  // namespace tropical::testing

// Declares `Rng name` with a fresh seed, reported by every failure in the enclosing scope.
#define TROPICAL_TEST_RNG(name)                                              \
    ::tropical::testing::Rng name(::tropical::testing::test_seed());         \
    SCOPED_TRACE(::tropical::testing::seed_message(name.seed()))

namespace tropical::testing {

// What random values look like.
enum class Values {
    Typical,  // floats uniform in [-10, 10] ([0, 10] for MaxMul); integers mostly small, some across
              // the documented range and at its ends; now and then the semiring's zero
    Ties,     // {0, 1, 2} and now and then the zero: many exact ties, for the argmax rule
};

template <class T>
T random_value(Rng& rng, Semiring s, Values values) {
    const T zero = reference::zero<T>(s);
    if (values == Values::Ties) {
        if (rng.chance(0.1)) return zero;
        return static_cast<T>(rng.integer(0, 2));
    }
    if constexpr (std::is_floating_point_v<T>) {
        if (rng.chance(0.02)) return zero;
        return static_cast<T>(rng.real(s == Semiring::MaxMul ? 0.0 : -10.0, 10.0));
    } else {
        const T lo = reference::FiniteRange<T>::lowest(s);
        const T hi = reference::FiniteRange<T>::highest(s);
        const double u = rng.real(0.0, 1.0);
        if (u < 0.02) return zero;
        if (u < 0.03) return rng.chance(0.5) ? lo : hi;
        if (u < 0.15) return static_cast<T>(rng.integer(lo, hi));
        return static_cast<T>(rng.integer(s == Semiring::MaxMul ? 0 : -100, 100));
    }
}

// ---------------------------------------------------------------------------------------------
// Host matrices with the memory layout of the device ones.

inline constexpr unsigned char kPoison = 0xA5;
inline constexpr unsigned char kPoisonFF = 0xFF;  // NaN for floats, -1 for integers (never for argmax)

// Where a matrix lives: layout, leading-dimension padding, and for a batch the count, the gap between
// consecutive matrices (in elements) or a batch stride of 0 (broadcast).
struct Geometry {
    Layout layout = Layout::RowMajor;
    std::int64_t pad = 0;   // ld = (cols for row-major, rows for column-major) + pad
    std::int64_t count = 1;
    std::int64_t gap = 0;   // batch stride = one matrix's lines * ld + gap
    bool broadcast = false; // batch stride 0
};

inline Layout flip(Layout l) { return l == Layout::RowMajor ? Layout::ColMajor : Layout::RowMajor; }

template <class T>
struct HostMatrix {
    std::int64_t rows = 0, cols = 0, ld = 0;
    Layout layout = Layout::RowMajor;
    std::int64_t count = 1;
    std::int64_t batch_stride = 0;
    unsigned char poison = kPoison;  // every byte that is no element holds this
    std::vector<T> storage;

    std::int64_t row_stride() const { return layout == Layout::RowMajor ? ld : 1; }
    std::int64_t col_stride() const { return layout == Layout::RowMajor ? 1 : ld; }
    std::size_t index(std::int64_t b, std::int64_t i, std::int64_t j) const {
        return static_cast<std::size_t>(b * batch_stride + i * row_stride() + j * col_stride());
    }
    T& at(std::int64_t b, std::int64_t i, std::int64_t j) { return storage[index(b, i, j)]; }
    const T& at(std::int64_t b, std::int64_t i, std::int64_t j) const { return storage[index(b, i, j)]; }
    T& operator()(std::int64_t i, std::int64_t j) { return at(0, i, j); }
    const T& operator()(std::int64_t i, std::int64_t j) const { return at(0, i, j); }

    reference::HostView<T> view(std::int64_t b = 0) {
        return {storage.data() + b * batch_stride, rows, cols, row_stride(), col_stride()};
    }
    reference::HostView<const T> view(std::int64_t b = 0) const {
        return {storage.data() + b * batch_stride, rows, cols, row_stride(), col_stride()};
    }

    // Matrices really stored: a broadcast batch stores one.
    std::int64_t distinct() const { return batch_stride == 0 ? std::min<std::int64_t>(count, 1) : count; }

    template <class F>
    void for_each(F&& f) const {
        for (std::int64_t b = 0; b < distinct(); ++b)
            for (std::int64_t i = 0; i < rows; ++i)
                for (std::int64_t j = 0; j < cols; ++j) f(b, i, j);
    }
    template <class G>
    void fill(G&& value) {
        for_each([&](std::int64_t b, std::int64_t i, std::int64_t j) { at(b, i, j) = value(); });
    }
    // 1 where storage holds an element, 0 for padding.
    std::vector<char> element_mask() const {
        std::vector<char> mask(storage.size(), 0);
        for_each([&](std::int64_t b, std::int64_t i, std::int64_t j) { mask[index(b, i, j)] = 1; });
        return mask;
    }
};

// A matrix (or batch) whose every byte is `poison`; fill its elements afterwards.
template <class T>
HostMatrix<T> make_matrix(std::int64_t rows, std::int64_t cols, const Geometry& g = {}, unsigned char poison = kPoison) {
    HostMatrix<T> m;
    m.rows = rows;
    m.cols = cols;
    m.layout = g.layout;
    m.ld = (g.layout == Layout::RowMajor ? cols : rows) + g.pad;
    m.count = g.count;
    m.poison = poison;
    const std::int64_t lines = g.layout == Layout::RowMajor ? rows : cols;
    const std::int64_t one = lines * m.ld;
    m.batch_stride = g.broadcast ? 0 : one + g.gap;
    const std::int64_t size = (g.broadcast || g.count <= 1) ? one : (g.count - 1) * m.batch_stride + one;
    m.storage.resize(static_cast<std::size_t>(size));
    if (!m.storage.empty()) std::memset(static_cast<void*>(m.storage.data()), poison, m.storage.size() * sizeof(T));
    return m;
}

// A copy of `m` whose padding bytes are `poison`.
template <class T>
HostMatrix<T> with_poison(HostMatrix<T> m, unsigned char poison) {
    const std::vector<char> mask = m.element_mask();
    auto* bytes = reinterpret_cast<unsigned char*>(m.storage.data());
    for (std::size_t e = 0; e < mask.size(); ++e)
        if (!mask[e]) std::memset(bytes + e * sizeof(T), poison, sizeof(T));
    m.poison = poison;
    return m;
}

template <class T>
HostMatrix<T> random_matrix(Rng& rng, Semiring s, Values values, std::int64_t rows, std::int64_t cols,
                            const Geometry& g = {}) {
    auto m = make_matrix<T>(rows, cols, g);
    m.fill([&] { return random_value<T>(rng, s, values); });
    return m;
}

// ---------------------------------------------------------------------------------------------
// Device mirrors.

template <class T>
class DeviceMatrix {
public:
    // Allocates and uploads every byte of `host`, padding included.
    explicit DeviceMatrix(const HostMatrix<T>& host) : meta_(host), buffer_(std::span<const T>(host.storage)) {
        meta_.storage.clear();
        meta_.storage.shrink_to_fit();
    }
    MatrixView<T> view() const { return {buffer_.data(), meta_.rows, meta_.cols, meta_.ld, meta_.layout}; }
    BatchedView<T> batched() const { return {view(), meta_.batch_stride}; }
    void fill_bytes(unsigned char byte) { buffer_.fill_bytes(byte); }
    HostMatrix<T> download() const {
        HostMatrix<T> out = meta_;
        out.storage = buffer_.to_host();
        return out;
    }
    const DeviceBuffer<T>& buffer() const { return buffer_; }

private:
    HostMatrix<T> meta_;
    DeviceBuffer<T> buffer_;
};

// ---------------------------------------------------------------------------------------------
// Comparisons.

template <class T>
std::string show(T x) {
    std::ostringstream out;
    if constexpr (std::is_floating_point_v<T>) {
        out.precision(std::numeric_limits<T>::max_digits10);
        out << x;
    } else {
        out << static_cast<long long>(x);
    }
    return out.str();
}

// Bit for bit; any NaN matches any NaN.
template <class T>
bool same_value(T expected, T actual) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
        return std::memcmp(&expected, &actual, sizeof(T)) == 0;
    } else {
        return expected == actual;
    }
}

namespace compare_impl {

// Compares elements with `ok(b, i, j, expected, actual)` and every other byte with the poison.
template <class T, class Ok>
::testing::AssertionResult compare(const char* what, const HostMatrix<T>& expected, const HostMatrix<T>& actual, Ok&& ok) {
    if (expected.storage.size() != actual.storage.size())
        return ::testing::AssertionFailure() << what << ": " << actual.storage.size() << " elements of storage, expected "
                                             << expected.storage.size();
    constexpr int kShown = 8;
    std::int64_t bad = 0, bad_padding = 0;
    std::ostringstream details;
    expected.for_each([&](std::int64_t b, std::int64_t i, std::int64_t j) {
        const T e = expected.at(b, i, j), a = actual.at(b, i, j);
        if (ok(b, i, j, e, a)) return;
        if (bad++ < kShown) {
            details << "\n  " << what;
            if (expected.count > 1) details << "[batch " << b << "]";
            details << "(" << i << "," << j << "): expected " << show(e) << ", got " << show(a);
        }
    });
    const std::vector<char> mask = expected.element_mask();
    const auto* bytes = reinterpret_cast<const unsigned char*>(actual.storage.data());
    for (std::size_t e = 0; e < actual.storage.size(); ++e) {
        if (mask[e]) continue;
        bool clean = true;
        for (std::size_t k = 0; k < sizeof(T); ++k) clean = clean && bytes[e * sizeof(T) + k] == expected.poison;
        if (!clean && bad_padding++ < kShown)
            details << "\n  " << what << ": storage element " << e << " is padding (outside every matrix) but was written";
    }
    if (bad == 0 && bad_padding == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << what << " (" << expected.rows << "x" << expected.cols << ", "
                                         << to_string(expected.layout) << ", ld " << expected.ld << ", count "
                                         << expected.count << "): " << bad << " wrong elements, " << bad_padding
                                         << " padding elements written" << details.str();
}

}  // namespace compare_impl

// Every element equal (bit for bit; NaN matches NaN), every padding byte still the poison.
template <class T>
::testing::AssertionResult exactly_equal(const char* what, const HostMatrix<T>& expected, const HostMatrix<T>& actual) {
    return compare_impl::compare(what, expected, actual,
                           [](std::int64_t, std::int64_t, std::int64_t, T e, T a) { return same_value(e, a); });
}

// |actual - expected| <= rtol * scale element-wise (scale: the sum of the magnitudes that went into
// each element, so cancellation does not make the test flaky); padding untouched.
template <class T>
::testing::AssertionResult close(const char* what, const HostMatrix<T>& expected, const HostMatrix<T>& actual,
                                 const HostMatrix<T>& scale, double rtol) {
    return compare_impl::compare(what, expected, actual, [&](std::int64_t b, std::int64_t i, std::int64_t j, T e, T a) {
        if (same_value(e, a)) return true;
        return std::fabs(static_cast<double>(a) - static_cast<double>(e)) <= rtol * static_cast<double>(scale.at(b, i, j));
    });
}

template <class T>
constexpr double backward_rtol() {
    return std::is_same_v<T, float> ? 1e-5 : 1e-12;
}

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
        const std::int64_t bands =
            terms < 1e7 ? 1 : std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, std::max<std::int64_t>(vc.rows, 1));
        std::vector<std::thread> workers;
        for (std::int64_t t = 0; t < bands; ++t) {
            const std::int64_t r0 = vc.rows * t / bands, r1 = vc.rows * (t + 1) / bands;
            const reference::HostView<const T> band_a{va.data + r0 * va.row_stride, r1 - r0, va.cols, va.row_stride, va.col_stride};
            const reference::HostView<T> band_c{vc.data + r0 * vc.row_stride, r1 - r0, vc.cols, vc.row_stride, vc.col_stride};
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

// grad (M x K for A, K x N for B): the gradient of one operand; `other` is the other operand.
// For A: grad_a from (grad_c, argmax, b); for B: grad_b from (grad_c, argmax, a).
template <class S, class T>
HostMatrix<T> gpu_backward(bool for_a, const HostMatrix<T>& grad_c, const HostMatrix<std::int32_t>& argmax,
                           const HostMatrix<T>& other, const HostMatrix<T>& grad, Launch launch = {}) {
    DeviceMatrix<T> dg(grad_c), dother(other), dgrad(grad);
    DeviceMatrix<std::int32_t> dm(argmax);
    if (!launch.accumulate) dgrad.fill_bytes(grad.poison);
    const GemmOptions options{nullptr, launch.accumulate};
    const bool single = grad.count == 1 && !launch.batched_api;
    if (for_a) {
        if (single) gemm_backward_a<S>(dg.view(), dm.view(), dother.view(), dgrad.view(), options);
        else gemm_batched_backward_a<S>(dg.batched(), dm.batched(), dother.batched(), dgrad.batched(), grad.count, options);
    } else {
        if (single) gemm_backward_b<S>(dg.view(), dm.view(), dother.view(), dgrad.view(), options);
        else gemm_batched_backward_b<S>(dg.batched(), dm.batched(), dother.batched(), dgrad.batched(), grad.count, options);
    }
    return dgrad.download();
}

// {expected, scale}: the reference gradient, and what the same routing gives on magnitudes.
template <class T>
std::pair<HostMatrix<T>, HostMatrix<T>> reference_backward(Semiring s, bool for_a, const HostMatrix<T>& grad_c,
                                                           const HostMatrix<std::int32_t>& argmax,
                                                           const HostMatrix<T>& other, const HostMatrix<T>& grad,
                                                           bool accumulate) {
    HostMatrix<T> expected = grad, scale = magnitudes(grad);
    if (!accumulate)
        grad.for_each([&](std::int64_t b, std::int64_t i, std::int64_t j) { expected.at(b, i, j) = scale.at(b, i, j) = T(0); });
    const HostMatrix<T> abs_grad_c = magnitudes(grad_c), abs_other = magnitudes(other);
    for (std::int64_t n = 0; n < grad.count; ++n) {
        if (for_a) {
            reference::backward_a<T>(s, grad_c.view(n), argmax.view(n), other.view(n), expected.view(n));
            reference::backward_a<T>(s, abs_grad_c.view(n), argmax.view(n), abs_other.view(n), scale.view(n));
        } else {
            reference::backward_b<T>(s, grad_c.view(n), argmax.view(n), other.view(n), expected.view(n));
            reference::backward_b<T>(s, abs_grad_c.view(n), argmax.view(n), abs_other.view(n), scale.view(n));
        }
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
        out << "; count " << g.c.count << ", A " << (g.a.broadcast ? "broadcast" : "gap " + std::to_string(g.a.gap)) << ", B "
            << (g.b.broadcast ? "broadcast" : "gap " + std::to_string(g.b.gap)) << ", C gap " << g.c.gap;
    return out.str();
}

// Sets the batch count of every operand of `g`.
inline Geometries with_count(Geometries g, std::int64_t count) {
    g.a.count = g.b.count = g.c.count = g.argmax.count = count;
    return g;
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
    // The operand that is read (for MaxMul): B for grad_A, A for grad_B.
    const auto other = for_a ? random_matrix<T>(rng, ring, Values::Typical, s.k, s.n, g.b)
                             : random_matrix<T>(rng, ring, Values::Typical, s.m, s.k, g.a);
    auto grad = for_a ? make_matrix<T>(s.m, s.k, g.a, poison) : make_matrix<T>(s.k, s.n, g.b, poison);
    if (launch.accumulate) grad.fill([&] { return static_cast<T>(rng.real(-10.0, 10.0)); });
    const auto [expected, scale] = reference_backward<T>(ring, for_a, grad_c, argmax, other, grad, launch.accumulate);
    const auto actual = gpu_backward<S>(for_a, grad_c, argmax, other, grad, launch);
    EXPECT_TRUE(close(for_a ? "grad_A" : "grad_B", expected, actual, scale, backward_rtol<T>()));
}

}  // namespace tropical::testing
