#pragma once
// Host matrices with the memory layout of the device ones (either layout, padded leading dimensions,
// batches with gaps or broadcasting), their device mirrors, and comparisons that also check that no
// byte outside the matrices (padding between rows, gaps between batches) was written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tropical/device_buffer.hpp>
#include <tropical/matrix.hpp>
#include <tropical/types.hpp>
#include "support/random_inputs.hpp"

namespace tropical::testing {

// ---------------------------------------------------------------------------------------------
// Host matrices with the memory layout of the device ones.

inline constexpr unsigned char kPoison = 0xA5;
inline constexpr unsigned char kPoisonFF = 0xFF;  // NaN for floats, -1 for integers (never for argmax)

// Where a matrix lives: layout, leading-dimension padding, and for a batch the count, the gap between
// consecutive matrices (in elements) or a batch stride of 0 (broadcast).
struct Geometry {
    Layout layout = Layout::RowMajor;
    std::int64_t pad = 0;  // ld = (cols for row-major, rows for column-major) + pad
    std::int64_t count = 1;
    std::int64_t gap = 0;    // batch stride = one matrix's lines * ld + gap
    bool broadcast = false;  // batch stride 0
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
HostMatrix<T> make_matrix(std::int64_t rows, std::int64_t cols, const Geometry& g = {},
                          unsigned char poison = kPoison) {
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
    // Replaces every byte with those of `host`, a matrix of the same geometry (new inputs for a
    // launch that keeps its pointers, such as a captured graph).
    void upload(const HostMatrix<T>& host) { buffer_.upload(host.storage); }
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
::testing::AssertionResult compare(const char* what, const HostMatrix<T>& expected, const HostMatrix<T>& actual,
                                   Ok&& ok) {
    if (expected.storage.size() != actual.storage.size())
        return ::testing::AssertionFailure()
               << what << ": " << actual.storage.size() << " elements of storage, expected " << expected.storage.size();
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
            details << "\n  " << what << ": storage element " << e
                    << " is padding (outside every matrix) but was written";
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
        return std::fabs(static_cast<double>(a) - static_cast<double>(e)) <=
               rtol * static_cast<double>(scale.at(b, i, j));
    });
}

template <class T>
constexpr double backward_rtol() {
    return std::is_same_v<T, float> ? 1e-5 : 1e-12;
}

}  // namespace tropical::testing
