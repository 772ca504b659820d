// The Dense kernels (kernels/dense.cuh) and the Wide ones (kernels/wide.cuh): batches of products
// of at most 32 x 32 x 32, and of sides up to 64 with a K up to 32, whose A and B are each one
// contiguous row-major array and C row-major, 16-byte aligned, K and N whole 16-byte vectors, as a
// tensor network's contractions of small tensors make them. Each test first checks that the library
// plans the kernel it means for its shape on this GPU, so that none passes on another path; then C
// against the reference, exactly, with C poisoned: every type and semiring, sides below the tile,
// aligned gaps between the matrices, a broadcast operand, accumulation, and the semirings' edge
// values (NaN, both infinities, -0, the integer range's ends). The kernels' argmax twins take the
// same products with argmax (poisoned too, in either layout): the smallest k that attains each
// result, the first NaN, -1 where no term beats the zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <tropical/context.hpp>
#include <tropical/kernels.hpp>

#include "catalogue/catalogue.hpp"
#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"
#include "support/planned_kernel.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class C>
class DenseGpu : public ::testing::Test {};
TYPED_TEST_SUITE(DenseGpu, AllCases, CaseName);

using Problem = BatchProblem;

// The Wide kernels' shapes here: a side past the Dense tile's 32 (and a quarter of the Wide tile or
// more, a product per multiprocessor at least).
bool wide(const Problem& p) { return p.shape.m > 32 || p.shape.n > 32; }

// The longest K of the type's Wide kernels (their row's bk: two products' operands in 48 KB).
template <class S, class T>
std::int64_t wide_k() {
    const KernelInfo* kernel = find_kernel(KernelOperation::Gemm, KernelVariant::Wide, dtype_of<T>(), S::value);
    return kernel ? detail::row_of(*kernel).tile.bk : 0;
}

template <class S, class T>
void expect_dense(const Problem& p) {
    for (const auto operation : {detail::Operation::Gemm, detail::Operation::GemmArgmax})
        expect_planned<S, T>(operation, p, wide(p) ? KernelVariant::Wide : KernelVariant::Dense);
}

// Row-major operands in one array each, `gap` elements between a batch's matrices (a multiple of
// 4, so that every matrix of every type starts on a 16-byte boundary).
Geometries dense_geometry(std::int64_t count, std::int64_t gap) {
    Geometries g = with_count(Geometries{}, count);
    g.a.gap = g.b.gap = g.c.gap = gap;
    return g;
}

// Each problem planned for its kernel, then plain and accumulating, typical values and ties, every
// other one with aligned gaps between the matrices; with argmax too, its matrices column-major or
// padded in turn (the kernels store it as vectors where its rows are contiguous and aligned, else
// element by element).
template <class S, class T>
void run_problems(Rng& rng, const std::vector<Problem>& problems) {
    for (std::size_t i = 0; i < problems.size(); ++i) {
        const Problem& p = problems[i];
        expect_dense<S, T>(p);
        Geometries g = dense_geometry(p.count, i % 2 ? 4 : 0);
        const Values values = i % 2 ? Values::Ties : Values::Typical;
        check_gemm<S, T>(rng, p.shape, g, values, {.batched_api = true});
        check_gemm<S, T>(rng, p.shape, g, values, {.accumulate = true, .batched_api = true});
        g.argmax.layout = i % 3 == 1 ? Layout::ColMajor : Layout::RowMajor;
        g.argmax.pad = static_cast<std::int64_t>(i % 3), g.argmax.gap = static_cast<std::int64_t>(i % 2);
        check_gemm_argmax<S, T>(rng, p.shape, g, Values::Ties, {.batched_api = true});
    }
}

// 32^3 (the whole tile), 32 x 32 x 8 and 16^3 (one and four products per block at a time), sides
// that put 2, 10 and 64 products in a block, a single product, more products than one wave of
// blocks holds and fewer.
TYPED_TEST(DenseGpu, ManyDenseProducts) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::int64_t sms = multiprocessors();
    const std::vector<Problem> problems = {{{16, 16, 16}, 20 * sms + 3},
                                           {{5, 12, 8}, 300},
                                           {{16, 4, 4}, sms},
                                           {{1, 4, 4}, 1},
                                           {{9, 16, 12}, sms + 1},
                                           {{3, 8, 16}, 7},
                                           {{32, 32, 8}, 8 * sms + 1},
                                           {{32, 32, 32}, sms},
                                           {{31, 8, 24}, 50},
                                           {{1, 4, 4}, 1000},
                                           {{17, 20, 12}, sms + 3}};
    run_problems<S, T>(rng, problems);
}

// The Wide kernels: several rounds of the resident blocks, 64 x 64 x 16, K of 32, 8 and 4 (the
// unrolled and the general loops), sides below the tile and not multiples of 4 (rows of a thread past
// M), about half and a quarter of the tile; two and three narrow products per block at a time, with
// a last group short of products; a batch of exactly one product per multiprocessor; a K past the
// type's Wide rows' is left to other kernels. (The 64-bit types' Tiled kernels take 64 x 64 tiles
// that fill the GPU twice, so those shapes keep fewer products.)
TYPED_TEST(DenseGpu, ManyWideProducts) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::int64_t sms = multiprocessors();
    std::vector<Problem> problems = {
        {{44, 64, 16}, 9 * sms + 5}, {{64, 64, 16}, sms + 5},    {{64, 64, 32}, sms},
        {{61, 60, 8}, sms + 1},      {{37, 64, 20}, sms + 2},    {{36, 60, 4}, 2 * sms},
        {{16, 64, 12}, sms + 3},     {{40, 52, 28}, sms + 9},    {{64, 40, 12}, 3 * sms},
        {{24, 64, 16}, 5 * sms + 1}, {{40, 40, 8}, 3 * sms + 1}, {{33, 36, 4}, 7 * sms + 2},
        {{20, 64, 8}, sms}};
    std::erase_if(problems, [](const Problem& p) { return p.shape.k > wide_k<S, T>(); });
    run_problems<S, T>(rng, problems);
}

// One operand shared by every product of the batch (a batch stride of 0), as an einsum's broadcast
// makes it.
TYPED_TEST(DenseGpu, BroadcastOperand) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const Problem& p : {Problem{{12, 16, 8}, multiprocessors() + 5}, Problem{{64, 48, 16}, multiprocessors() + 5},
                             Problem{{24, 64, 8}, 3 * multiprocessors()}}) {
        expect_dense<S, T>(p);
        for (const bool broadcast_a : {true, false}) {
            Geometries g = dense_geometry(p.count, 0);
            (broadcast_a ? g.a : g.b).broadcast = true;
            check_gemm<S, T>(rng, p.shape, g, Values::Typical, {.batched_api = true});
        }
    }
}

// NaN, both infinities, -0 and (integers) the ends of the range scattered over a batch, and a row of
// A at the zero: C matches the reference bit for bit, plain and accumulating onto edge values, and
// with argmax.
template <class S, class T>
void check_edge_values(Rng& rng, const Problem& p) {
    constexpr Semiring ring = S::value;
    expect_dense<S, T>(p);
    const Geometries g = dense_geometry(p.count, 0);
    const Shape& s = p.shape;
    const auto [a, b] = edge_operands<T>(rng, ring, s, g, 8);
    const auto c0 = make_matrix<T>(s.m, s.n, g.c);
    EXPECT_TRUE(exactly_equal("C", reference_gemm<T>(ring, a, b, c0), gpu_gemm<S>(a, b, c0, {.batched_api = true})));
    const auto [old_a, old_b] = edge_operands<T>(rng, ring, s, g, 8);
    auto old_c = make_matrix<T>(s.m, s.n, g.c);
    for (std::size_t e = 0; e < old_c.storage.size(); ++e) old_c.storage[e] = old_a.storage[e % old_a.storage.size()];
    EXPECT_TRUE(exactly_equal("accumulated C", reference_gemm<T>(ring, a, b, old_c, true),
                              gpu_gemm<S>(a, b, old_c, {.accumulate = true, .batched_api = true})));
    const auto argmax = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
    const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c0, argmax);
    const auto [actual_c, actual_argmax] = gpu_gemm_argmax<S>(a, b, c0, argmax, {.batched_api = true});
    EXPECT_TRUE(exactly_equal("C with argmax", expected_c, actual_c));
    EXPECT_TRUE(exactly_equal("argmax", expected_argmax, actual_argmax));
}

TYPED_TEST(DenseGpu, EdgeValues) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const Problem& p : {Problem{{16, 16, 16}, multiprocessors()}, Problem{{32, 32, 8}, multiprocessors()},
                             Problem{{64, 64, 16}, multiprocessors()}, Problem{{48, 44, 12}, multiprocessors()},
                             Problem{{40, 40, 8}, 2 * multiprocessors() + 1}})
        check_edge_values<S, T>(rng, p);
}

}  // namespace
