// The Tiny kernels (16 x 16 tiles, slices of 8): many products with a side or K of at most 16, as a
// tensor network's contractions make them, and single products with a K of at most 16. Each test
// first checks that the library plans the Tiny kernel for its shape on this GPU, so that none passes
// on another path; then C (and argmax) against the reference, exactly, with outputs poisoned:
// every type and semiring, K not a multiple of the slice, ties across slices and tile edges (the
// smallest k wins), the semirings' edge values, layouts, gaps between a batch's matrices, a
// broadcast operand and accumulation.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <tropical/context.hpp>
#include <tropical/kernels.hpp>

#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"
#include "support/planned_kernel.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class C>
class TinyGpu : public ::testing::Test {};
TYPED_TEST_SUITE(TinyGpu, AllCases, CaseName);

using Problem = BatchProblem;

// The planned variant of a product and of its argmax twin on device 0.
template <class S, class T>
void expect_tiny(const Problem& p) {
    for (const auto op : {detail::Operation::Gemm, detail::Operation::GemmArgmax})
        expect_planned<S, T>(op, p, KernelVariant::Tiny);
}

// Batches of tiny products (K is not whole 16-byte vectors: such products in one array each are the
// Dense kernels'): 16 x 16 x 15 (one tile, two slices), 32 x 32 x 7 (four tiles, one slice), odd
// sides, and a K beyond 16 over sides that leave the Small tile mostly empty. Plain, accumulating
// and with argmax; gaps between the matrices; typical values and ties.
TYPED_TEST(TinyGpu, ManyTinyProducts) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::int64_t sms = multiprocessors();
    const std::vector<Problem> problems = {
        {{16, 16, 15}, 2 * sms + 3}, {{32, 32, 7}, sms}, {{5, 13, 7}, 300}, {{20, 12, 31}, sms + 1}, {{1, 1, 1}, sms}};
    for (std::size_t i = 0; i < problems.size(); ++i) {
        const Problem& p = problems[i];
        expect_tiny<S, T>(p);
        Geometries g = with_count(layout_combination(static_cast<int>(i) * 3 + 1, case_index<TypeParam>()), p.count);
        g.a.gap = static_cast<std::int64_t>(i % 3);
        g.c.gap = 1;
        const Values values = i % 2 ? Values::Ties : Values::Typical;
        check_gemm<S, T>(rng, p.shape, g, values, {.batched_api = true});
        check_gemm<S, T>(rng, p.shape, g, values, {.accumulate = true, .batched_api = true});
        check_gemm_argmax<S, T>(rng, p.shape, g, Values::Ties, {.batched_api = true});
    }
}

// One operand shared by every product of the batch (a batch stride of 0), as an einsum's broadcast
// makes it.
TYPED_TEST(TinyGpu, BroadcastOperand) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const Problem p{{12, 16, 11}, multiprocessors() + 5};
    expect_tiny<S, T>(p);
    for (const bool broadcast_a : {true, false}) {
        Geometries g = with_count(layout_combination(broadcast_a ? 2 : 5, case_index<TypeParam>()), p.count);
        (broadcast_a ? g.a : g.b).broadcast = true;
        check_gemm<S, T>(rng, p.shape, g, Values::Typical, {.batched_api = true});
        check_gemm_argmax<S, T>(rng, p.shape, g, Values::Ties, {.batched_api = true});
    }
}

// Single products with a K of at most 16: one slice or two, tiles cut by M and N, every layout.
TYPED_TEST(TinyGpu, SingleProductsWithShortK) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Shape> shapes = {{1, 1, 1}, {17, 250, 1}, {256, 256, 8}, {100, 3, 16}, {33, 47, 9}};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        expect_tiny<S, T>({shapes[i], 1});
        const Geometries g = layout_combination(static_cast<int>(i) * 5 % 8, case_index<TypeParam>());
        check_gemm<S, T>(rng, shapes[i], g, i % 2 ? Values::Ties : Values::Typical);
        check_gemm_argmax<S, T>(rng, shapes[i], g, i % 2 ? Values::Typical : Values::Ties);
    }
}

// NaN, both infinities, -0 and (integers) the ends of the range scattered over a batch, and a row of
// A at the zero: the first NaN wins, -1 stays where nothing beats the zero, C matches bit for bit.
TYPED_TEST(TinyGpu, EdgeValues) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    TROPICAL_TEST_RNG(rng);
    const Problem p{{16, 15, 13}, multiprocessors()};
    expect_tiny<S, T>(p);
    const Geometries g = with_count(layout_combination(6, case_index<TypeParam>()), p.count);
    const Shape& s = p.shape;
    const auto [a, b] = edge_operands<T>(rng, ring, s, g, 8);
    const auto c0 = make_matrix<T>(s.m, s.n, g.c);
    const auto m0 = make_matrix<std::int32_t>(s.m, s.n, g.argmax, kPoison);
    const auto expected_c = reference_gemm<T>(ring, a, b, c0);
    EXPECT_TRUE(exactly_equal("C", expected_c, gpu_gemm<S>(a, b, c0, {.batched_api = true})));
    const auto [expected_argmax_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c0, m0);
    const auto [actual_c, actual_argmax] = gpu_gemm_argmax<S>(a, b, c0, m0, {.batched_api = true});
    EXPECT_TRUE(exactly_equal("C with argmax", expected_argmax_c, actual_c));
    EXPECT_TRUE(exactly_equal("argmax", expected_argmax, actual_argmax));
}

}  // namespace
