#pragma once
// Helpers of the CPU path's tests (tests/cpu_*_test.cpp): the host entry points (tropical/host.hpp)
// on HostMatrix operands, with every output poisoned before the call, as the GPU tests do, and the
// shapes that reach every edge of the packing and of the register tiles.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tropical/host.hpp>
#include "cpu/host.hpp"
#include "cpu/product.hpp"
#include "cpu/targets.hpp"
#include "support/gemm_test_util.hpp"

namespace tropical::testing {

struct HostLaunch {
    bool accumulate = false;
    bool batched_api = false;  // gemm_batched* even for a count of 1
    int threads = 0;
};

template <class T>
MatrixView<T> host_view(HostMatrix<T>& m) {
    return {m.storage.data(), m.rows, m.cols, m.ld, m.layout};
}
template <class T>
MatrixView<const T> host_view(const HostMatrix<T>& m) {
    return {m.storage.data(), m.rows, m.cols, m.ld, m.layout};
}
template <class T>
BatchedView<T> host_batched(HostMatrix<T>& m) {
    return batched(host_view(m), m.batch_stride);
}
template <class T>
BatchedView<const T> host_batched(const HostMatrix<T>& m) {
    return batched(host_view(m), m.batch_stride);
}

// Every byte of an output that is overwritten, elements and padding alike, set to its poison.
template <class T>
HostMatrix<T> poisoned(HostMatrix<T> m) {
    if (!m.storage.empty()) std::memset(static_cast<void*>(m.storage.data()), m.poison, m.storage.size() * sizeof(T));
    return m;
}

template <class S, class T>
HostMatrix<T> host_gemm(const HostMatrix<T>& a, const HostMatrix<T>& b, const HostMatrix<T>& c,
                        HostLaunch launch = {}) {
    HostMatrix<T> out = launch.accumulate ? c : poisoned(c);
    const host::Options options{launch.accumulate, launch.threads};
    if (c.count == 1 && !launch.batched_api) host::gemm<S>(host_view(a), host_view(b), host_view(out), options);
    else host::gemm_batched<S>(host_batched(a), host_batched(b), host_batched(out), c.count, options);
    return out;
}

template <class S, class T>
std::pair<HostMatrix<T>, HostMatrix<std::int32_t>> host_gemm_argmax(const HostMatrix<T>& a, const HostMatrix<T>& b,
                                                                    const HostMatrix<T>& c,
                                                                    const HostMatrix<std::int32_t>& argmax,
                                                                    HostLaunch launch = {}) {
    std::pair<HostMatrix<T>, HostMatrix<std::int32_t>> out{poisoned(c), poisoned(argmax)};
    const host::Options options{false, launch.threads};
    if (c.count == 1 && !launch.batched_api)
        host::gemm_with_argmax<S>(host_view(a), host_view(b), host_view(out.first), host_view(out.second), options);
    else
        host::gemm_batched_with_argmax<S>(host_batched(a), host_batched(b), host_batched(out.first),
                                          host_batched(out.second), c.count, options);
    return out;
}

template <class S, class T>
HostMatrix<T> host_backward(bool for_a, const HostMatrix<T>& grad_c, const HostMatrix<std::int32_t>& argmax,
                            const HostMatrix<T>& a, const HostMatrix<T>& b, const HostMatrix<T>& grad,
                            HostLaunch launch = {}) {
    HostMatrix<T> out = launch.accumulate ? grad : poisoned(grad);
    const host::Options options{launch.accumulate, launch.threads};
    const bool single = grad.count == 1 && !launch.batched_api;
    if (for_a) {
        if (single)
            host::gemm_backward_a<S>(host_view(grad_c), host_view(argmax), host_view(a), host_view(b), host_view(out),
                                     options);
        else
            host::gemm_batched_backward_a<S>(host_batched(grad_c), host_batched(argmax), host_batched(a),
                                             host_batched(b), host_batched(out), grad.count, options);
    } else {
        if (single)
            host::gemm_backward_b<S>(host_view(grad_c), host_view(argmax), host_view(a), host_view(b), host_view(out),
                                     options);
        else
            host::gemm_batched_backward_b<S>(host_batched(grad_c), host_batched(argmax), host_batched(a),
                                             host_batched(b), host_batched(out), grad.count, options);
    }
    return out;
}

// Shapes around the register tiles of every target (MR from 1 to 8 rows, NR from 1 to 48 columns:
// sizes 1, tile - 1, tile, tile + 1 and primes), around the cache blocks (K past 128, 256 and 512
// terms, M past an A block of 252 rows), and empty ones.
inline std::vector<Shape> edge_shapes() {
    return {{1, 1, 1},   {5, 7, 3},    {6, 8, 2},   {7, 9, 4},   {2, 16, 5},   {3, 17, 1},  {13, 15, 11},
            {8, 31, 6},  {12, 33, 2},  {17, 47, 3}, {25, 49, 7}, {61, 23, 13}, {4, 5, 129}, {3, 6, 257},
            {2, 3, 513}, {9, 10, 300}, {257, 5, 3}, {0, 5, 3},   {4, 0, 3},    {4, 5, 0}};
}

// Small problems cut into tasks as large ones are (several threads, bands of rows or columns), for
// the life of a scope.
class SplitSmallWork {
public:
    SplitSmallWork() { cpu::set_work_per_thread_scale(0); }
    ~SplitSmallWork() { cpu::set_work_per_thread_scale(1); }
    SplitSmallWork(const SplitSmallWork&) = delete;
    SplitSmallWork& operator=(const SplitSmallWork&) = delete;
};

// The kernels on one SIMD target for the life of a scope.
class ForcedTarget {
public:
    explicit ForcedTarget(std::int64_t target) { cpu::force_target(target); }
    ~ForcedTarget() { cpu::force_target(0); }
    ForcedTarget(const ForcedTarget&) = delete;
    ForcedTarget& operator=(const ForcedTarget&) = delete;
};

// A matrix whose elements are special values, now and then a typical one.
template <class T>
HostMatrix<T> special_matrix(Rng& rng, Semiring s, std::int64_t rows, std::int64_t cols, const Geometry& g) {
    const std::vector<T> values = special_values_with_negative_zero<T>(s);
    auto m = make_matrix<T>(rows, cols, g);
    m.fill([&]() -> T {
        if (rng.chance(0.2)) return random_value<T>(rng, s, Values::Typical);
        return values[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(values.size()) - 1))];
    });
    return m;
}

// C = A (x) B on the CPU equals the reference exactly (plain, and with launch.accumulate), and so do
// C and argmax from gemm_with_argmax.
// With `specials`, the operands (and the old C) are drawn from special_values_with_negative_zero() instead.
template <class S, class T>
void check_host_products(Rng& rng, const Shape& s, const Geometries& g, Values values = Values::Typical,
                         HostLaunch launch = {}, bool specials = false) {
    SCOPED_TRACE(describe(s) + "; " + describe(g) + "; threads " + std::to_string(launch.threads) +
                 (specials ? "; special values" : ""));
    constexpr Semiring ring = S::value;
    const auto a =
        specials ? special_matrix<T>(rng, ring, s.m, s.k, g.a) : random_matrix<T>(rng, ring, values, s.m, s.k, g.a);
    const auto b =
        specials ? special_matrix<T>(rng, ring, s.k, s.n, g.b) : random_matrix<T>(rng, ring, values, s.k, s.n, g.b);
    auto c = make_matrix<T>(s.m, s.n, g.c);
    EXPECT_TRUE(exactly_equal("C", reference_gemm<T>(ring, a, b, c), host_gemm<S>(a, b, c, launch)));
    const auto argmax = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
    const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c, argmax);
    const auto [actual_c, actual_argmax] = host_gemm_argmax<S>(a, b, c, argmax, launch);
    EXPECT_TRUE(exactly_equal("C (with argmax)", expected_c, actual_c));
    EXPECT_TRUE(exactly_equal("argmax", expected_argmax, actual_argmax));
    if (specials) c = special_matrix<T>(rng, ring, s.m, s.n, g.c);
    else c.fill([&] { return random_value<T>(rng, ring, values); });
    HostLaunch accumulate = launch;
    accumulate.accumulate = true;
    EXPECT_TRUE(
        exactly_equal("accumulated C", reference_gemm<T>(ring, a, b, c, true), host_gemm<S>(a, b, c, accumulate)));
}

}  // namespace tropical::testing
