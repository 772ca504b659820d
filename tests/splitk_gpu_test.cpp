// The split-K kernels: a long K over too few tiles to fill the GPU is cut into chunks, each
// computed by its own blocks and combined into C with atomics (32-bit types, no argmax, no
// accumulate). Each test first checks that the library plans to split its product on this GPU
// (and the first one that the split-K kernel was loaded), so that none passes on the regular path.
// Against the reference, exactly: uneven chunks and chunks past the end of K, padded and transposed
// operands, a batch, NaN and infinities, integer range ends; and accumulate, which takes the regular
// kernel on the same shape.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <tropical/context.hpp>
#include <tropical/kernels.hpp>

#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"
#include "support/planned_kernel.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

// The 32-bit cases: f64 and i64 have no split-K kernels.
using SplitCases =
    ::testing::Types<Case<MaxPlus, float>, Case<MinPlus, float>, Case<MaxMul, float>, Case<MaxMin, float>,
                     Case<MinMax, float>, Case<MaxPlus, std::int32_t>, Case<MinPlus, std::int32_t>,
                     Case<MaxMul, std::int32_t>, Case<MaxMin, std::int32_t>, Case<MinMax, std::int32_t>>;

template <class C>
class SplitKGpu : public ::testing::Test {};
TYPED_TEST_SUITE(SplitKGpu, SplitCases, CaseName);

// 4 tiles of 128 x 128 with K = 8192; 250 x 250 (still 4 tiles) with K = 9000, whose chunks of
// 9000 / 66 rounded up to whole slices leave the last chunks empty on a 132-multiprocessor GPU.
const std::vector<Shape> kLongK = {{256, 256, 8192}, {250, 250, 9000}};

// Whether the split-K kernel of this case has been loaded on device 0 (by this process, so it
// only shows for the first test of each case that runs).
template <class S, class T>
bool split_kernel_loaded() {
    const std::string name =
        "tropical_splitk_" + std::string(to_string(dtype_of<T>())) + "_" + std::string(to_string(S::value));
    const KernelInfo* kernel = find_kernel(name);
    return kernel && CudaContext::for_device(0).is_loaded(*kernel);
}

// The chunks the library plans for this product on device 0 (1: not split).
template <class S, class T>
std::int64_t planned_splits(const Shape& s, std::int64_t batch = 1, bool accumulate = false) {
    return planned_kernel<S, T>(detail::Operation::Gemm, s, batch, accumulate).k_splits;
}

TYPED_TEST(SplitKGpu, LongInnerDimensionMatchesTheReference) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const Shape& shape : kLongK) ASSERT_GT((planned_splits<S, T>(shape)), 1) << describe(shape);
    for (std::size_t i = 0; i < kLongK.size(); ++i)
        check_gemm<S, T>(rng, kLongK[i], layout_combination(static_cast<int>(i * 5 + 2) % 8, case_index<TypeParam>()),
                         Values::Typical, {}, i % 2 ? kPoisonFF : kPoison);
    EXPECT_TRUE((split_kernel_loaded<S, T>())) << "the product took the regular path";
}

// Exact ties everywhere: every chunk reaches the same maximum, and the atomics must agree on it.
TYPED_TEST(SplitKGpu, TiesAcrossChunks) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    ASSERT_GT((planned_splits<S, T>(kLongK[0])), 1);
    check_gemm<S, T>(rng, kLongK[0], layout_combination(7, 1), Values::Ties);
}

// Three products with K = 12800 over one tile each: the batch index and the chunk share blockIdx.z.
TYPED_TEST(SplitKGpu, Batched) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    Geometries g = with_count(layout_combination(1, 2), 3);
    g.a.gap = 5;
    g.b.gap = 3;
    ASSERT_GT((planned_splits<S, T>({128, 128, 12800}, 3)), 1);
    check_gemm<S, T>(rng, {128, 128, 12800}, g, Values::Typical, {.batched_api = true});
}

// Accumulating into C keeps the regular kernel (its old values do not start at the zero).
TYPED_TEST(SplitKGpu, AccumulateIntoC) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    ASSERT_EQ((planned_splits<S, T>(kLongK[1], 1, true)), 1);
    check_gemm<S, T>(rng, kLongK[1], layout_combination(4, 3), Values::Typical, {.accumulate = true});
}

// NaN, both infinities and (integers) the ends of the range in a few rows and columns: whole rows
// and columns of C become NaN or infinite in some chunks only, and the combination must keep them.
TYPED_TEST(SplitKGpu, EdgeValues) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    TROPICAL_TEST_RNG(rng);
    const Shape s = kLongK[1];
    const Geometries g = layout_combination(6, 2);
    auto a = random_matrix<T>(rng, ring, Values::Typical, s.m, s.k, g.a);
    auto b = random_matrix<T>(rng, ring, Values::Typical, s.k, s.n, g.b);
    const std::vector<T> specials = scattered_specials<T>(ring);
    for (int n = 0; n < 12; ++n) {
        const T v = specials[static_cast<std::size_t>(n) % specials.size()];
        a(rng.integer(0, s.m - 1), rng.integer(0, s.k - 1)) = v;
        b(rng.integer(0, s.k - 1), rng.integer(0, s.n - 1)) = v;
    }
    ASSERT_GT((planned_splits<S, T>(s)), 1);
    const auto c0 = make_matrix<T>(s.m, s.n, g.c);
    EXPECT_TRUE(exactly_equal("C", reference_gemm<T>(ring, a, b, c0), gpu_gemm<S>(a, b, c0)));
}

}  // namespace
