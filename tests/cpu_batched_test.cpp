// The CPU path's batches and gradients: strided batches with gaps, a batch stride of 0 broadcasting
// A, B or both, many small products, counts of 0 and 1; grad_A and grad_B (MaxMul by the product
// rule) single and batched, overwriting and accumulating, on one thread and cut into tasks, equal to
// the reference bit for bit (each thread owns whole rows or columns of the gradient and adds in the
// reference's order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "support/cpu_gemm.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class C>
class CpuBatched : public ::testing::Test {};
TYPED_TEST_SUITE(CpuBatched, AllCases, CaseName);

template <class C>
class CpuBackward : public ::testing::Test {};
TYPED_TEST_SUITE(CpuBackward, FloatCases, CaseName);

Geometries batch_geometry(int combination, std::int64_t count, std::int64_t gap_a, std::int64_t gap_b,
                          std::int64_t gap_c, bool broadcast_a = false, bool broadcast_b = false) {
    Geometries g = with_count(layout_combination(combination, 1), count);
    g.a.gap = gap_a;
    g.b.gap = gap_b;
    g.c.gap = g.argmax.gap = gap_c;
    g.a.broadcast = broadcast_a;
    g.b.broadcast = broadcast_b;
    return g;
}

TYPED_TEST(CpuBatched, BroadcastOperandsAndGaps) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Shape> shapes = {{13, 20, 17}, {6, 7, 270}, {5, 40, 9}};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        const int combination = static_cast<int>(i * 3 + 1) % 8;
        for (const auto& [broadcast_a, broadcast_b] :
             {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
            const Geometries g = batch_geometry(combination, 5, 2, 3, 1, broadcast_a, broadcast_b);
            check_host_products<S, T>(rng, shapes[i], g, broadcast_a ? Values::Ties : Values::Typical, {.threads = 1});
        }
    }
}

// Batches cut into tasks: 3 products on 2 threads (each product cut in two), 2 on 3, many on 2.
TYPED_TEST(CpuBatched, BatchesOnSeveralThreads) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    SplitSmallWork split;
    check_host_products<S, T>(rng, {23, 17, 9}, batch_geometry(2, 3, 1, 0, 2), Values::Typical, {.threads = 2});
    check_host_products<S, T>(rng, {23, 17, 9}, batch_geometry(5, 2, 0, 1, 0, true), Values::Typical, {.threads = 3});
    check_host_products<S, T>(rng, {3, 2, 4}, batch_geometry(7, 300, 1, 2, 3, false, true), Values::Typical,
                              {.threads = 2});
}

// A count of 0 writes nothing; a count of 1 through the batched entry point is a plain product.
TYPED_TEST(CpuBatched, CountZeroAndOne) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    TROPICAL_TEST_RNG(rng);
    const Geometries g = batch_geometry(4, 0, 0, 0, 0);
    const auto a = random_matrix<T>(rng, ring, Values::Typical, 9, 4, g.a);
    const auto b = random_matrix<T>(rng, ring, Values::Typical, 4, 7, g.b);
    const auto c = make_matrix<T>(9, 7, g.c);  // storage for one matrix, all poison
    for (const bool accumulate : {false, true}) {
        HostMatrix<T> out = c;
        host::gemm_batched<S>(host_batched(a), host_batched(b), host_batched(out), 0, {.accumulate = accumulate});
        const auto* bytes = reinterpret_cast<const unsigned char*>(out.storage.data());
        EXPECT_TRUE(
            std::all_of(bytes, bytes + out.storage.size() * sizeof(T), [](unsigned char x) { return x == kPoison; }))
            << "a batch of 0 products wrote to C" << (accumulate ? " (accumulate)" : "");
    }
    const HostLaunch batched_api{.batched_api = true};
    check_host_products<S, T>(rng, {40, 50, 30}, batch_geometry(1, 1, 0, 0, 0), Values::Typical, batched_api);
}

// grad_A (for_a) or grad_B from random grad_C and argmax (-1 now and then) equals the reference's.
template <class S, class T>
void check_host_backward(Rng& rng, bool for_a, const Shape& s, const Geometries& g, HostLaunch launch = {},
                         bool concentrated = false) {
    SCOPED_TRACE(describe(s) + "; " + describe(g) + (for_a ? "; backward A" : "; backward B") +
                 (launch.accumulate ? ", accumulate" : "") + "; threads " + std::to_string(launch.threads));
    constexpr Semiring ring = S::value;
    const auto grad_c = random_gradient<T>(rng, s.m, s.n, g.c);
    const auto argmax = random_argmax(rng, s.m, s.n, s.k, g.argmax, concentrated);
    const auto a = random_matrix<T>(rng, ring, Values::Typical, s.m, s.k, g.a);
    const auto b = random_matrix<T>(rng, ring, Values::Typical, s.k, s.n, g.b);
    auto grad = for_a ? make_matrix<T>(s.m, s.k, g.a) : make_matrix<T>(s.k, s.n, g.b);
    if (launch.accumulate) grad.fill([&] { return static_cast<T>(rng.real(-10.0, 10.0)); });
    const auto expected = reference_backward<T>(ring, for_a, grad_c, argmax, a, b, grad, launch.accumulate).first;
    EXPECT_TRUE(exactly_equal(for_a ? "grad_A" : "grad_B", expected,
                              host_backward<S>(for_a, grad_c, argmax, a, b, grad, launch)));
}

TYPED_TEST(CpuBackward, GradientsMatchTheReferenceExactly) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Shape> shapes = {{1, 1, 1}, {17, 23, 9}, {40, 3, 70}, {5, 0, 4}, {0, 6, 3}};
    int combination = case_index<TypeParam>();
    for (const Shape& s : shapes)
        for (const bool for_a : {true, false})
            for (const bool accumulate : {false, true}) {
                const Geometries g = layout_combination(combination++ % 8, 2);
                check_host_backward<S, T>(rng, for_a, s, g, {.accumulate = accumulate, .threads = 1});
                check_host_backward<S, T>(rng, for_a, s, g, {.accumulate = accumulate, .threads = 1}, true);
            }
}

TYPED_TEST(CpuBackward, BatchesAndThreadsMatchTheReferenceExactly) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    SplitSmallWork split;
    for (const bool for_a : {true, false}) {
        check_host_backward<S, T>(rng, for_a, {31, 29, 12}, layout_combination(3, 0), {.threads = 2}, true);
        check_host_backward<S, T>(rng, for_a, {9, 8, 7}, batch_geometry(6, 3, 1, 2, 0, !for_a, for_a),
                                  {.accumulate = true, .threads = 2});
        check_host_backward<S, T>(rng, for_a, {4, 5, 6}, batch_geometry(1, 40, 0, 3, 1), {.threads = 3});
        check_host_backward<S, T>(rng, for_a, {4, 5, 6}, batch_geometry(2, 1, 0, 0, 0), {.batched_api = true});
    }
}

}  // namespace
