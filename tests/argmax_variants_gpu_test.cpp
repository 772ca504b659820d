// The argmax variants: products with argmax take the Tiled, Batched (short K), Serial (a long K over
// too few tiles), Small or SplitK argmax kernel by their shape (src/gemm/plan.cpp; the Tiny ones are tests/tiny_gpu_test.cpp's). Each test
// first checks that the library plans the variant it means to test on this GPU, so that none passes
// on another path; then C and argmax against the reference, exactly: ties (the smallest k wins,
// also across the slices whose rescan finds it, across tile edges, across the SplitK kernels'
// groups of threads and across the Serial kernels' chunks of K), NaN, infinities and integer
// range ends, odd shapes, every layout, batches.
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

using ArgmaxCases = ::testing::Types<Case<MaxPlus, float>, Case<MinPlus, float>, Case<MaxMul, float>,
                                     Case<MaxMin, float>, Case<MinMax, float>, Case<MaxPlus, std::int32_t>,
                                     Case<MinPlus, std::int32_t>, Case<MaxMul, std::int32_t>,
                                     Case<MaxMin, std::int32_t>, Case<MinMax, std::int32_t>, Case<MaxPlus, double>,
                                     Case<MinMax, double>, Case<MaxPlus, std::int64_t>, Case<MaxMin, std::int64_t>>;

template <class C>
class ArgmaxVariantsGpu : public ::testing::Test {};
TYPED_TEST_SUITE(ArgmaxVariantsGpu, ArgmaxCases, CaseName);

// The argmax kernel's variant the library plans for this product on device 0.
template <class S, class T>
KernelVariant planned_variant(const Shape& s, std::int64_t batch = 1) {
    return planned_kernel<S, T>(detail::Operation::GemmArgmax, s, batch).kernel->variant;
}

// 32-bit types have Batched and Serial argmax kernels; 64-bit types take their Tiled one for those
// shapes.
template <class T>
constexpr KernelVariant kShortKBatchedVariant = sizeof(T) == 4 ? KernelVariant::Batched : KernelVariant::Tiled;
template <class T>
constexpr KernelVariant kSerialVariant = sizeof(T) == 4 ? KernelVariant::Serial : KernelVariant::Tiled;

// A product of `rows` 64 x 64 tiles of rows by as many columns of them as make at least one tile per
// multiprocessor of device 0 (and fewer than its 3 block slots each), less `short_m` rows and
// `short_n` columns: a shape the Serial argmax kernels split.
Shape serial_shape(std::int64_t rows, std::int64_t k, std::int64_t short_m, std::int64_t short_n) {
    const std::int64_t sms = CudaContext::for_device(0).multiprocessor_count();
    return {64 * rows - short_m, 64 * ((sms + rows - 1) / rows) - short_n, k};
}

// A single small product, odd sides, K beyond 16: the Small argmax kernel (fewer 64 x 64 tiles than
// SMs; a K below two Small slices, or enough 32 x 32 tiles for the SMs of an H100 or H200). Five
// columns: one more than the Column kernels take (tests/column_gpu_test.cpp).
TYPED_TEST(ArgmaxVariantsGpu, SmallProducts) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Shape> shapes = {{1, 1, 17}, {33, 31, 63}, {500, 450, 70}, {17, 250, 33}, {100, 5, 40}};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        ASSERT_EQ((planned_variant<S, T>(shapes[i])), KernelVariant::Small) << describe(shapes[i]);
        check_gemm_argmax<S, T>(rng, shapes[i],
                                layout_combination(static_cast<int>(i) * 3 % 8, case_index<TypeParam>()),
                                i % 2 ? Values::Ties : Values::Typical);
    }
}

// A few small products with a longer K: the SplitK argmax kernel (fewer 32 x 32 tiles than SMs), whose
// groups of threads each take 16 of every 64 k. Ties everywhere, so that equal values meet in
// different groups and the smallest k must win there; K not a multiple of the slice; a chain step
// of a Viterbi decoder (64 x 256 x 256), 5 rows times a matrix and a matrix times 5 columns (one
// more than the Vector and Column kernels take: tests/vector_gpu_test.cpp, column_gpu_test.cpp); a
// batch.
TYPED_TEST(ArgmaxVariantsGpu, SplitKProducts) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<std::pair<Shape, std::int64_t>> problems = {
        {{33, 31, 70}, 1},    {{256, 256, 256}, 1}, {{100, 5, 513}, 1}, {{64, 256, 256}, 1},
        {{5, 1024, 1024}, 1}, {{17, 40, 129}, 3},   {{32, 32, 64}, 5}};
    for (std::size_t i = 0; i < problems.size(); ++i) {
        const auto& [s, batch] = problems[i];
        ASSERT_EQ((planned_variant<S, T>(s, batch)), KernelVariant::SplitK) << describe(s) << " x " << batch;
        Geometries g = with_count(layout_combination(static_cast<int>(i) * 3 % 8, case_index<TypeParam>()), batch);
        check_gemm_argmax<S, T>(rng, s, g, i % 3 == 2 ? Values::Typical : Values::Ties, {.batched_api = batch > 1});
    }
}

// Many products with a short K: the Batched argmax kernel (32-bit types), with K not a multiple of
// its slice, K over one and more chunks of its panel (16 slices of 8: a chunk ending on the last
// slice, a last chunk of one short slice), and ties so that the rescan must find the first k of a
// slice.
TYPED_TEST(ArgmaxVariantsGpu, BatchedShortK) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::int64_t count = 2 * CudaContext::for_device(0).multiprocessor_count();
    // Tiles 3/4 full or more.
    const std::vector<Shape> shapes = {{64, 64, 61}, {60, 64, 128}, {64, 50, 256}, {50, 64, 129}};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        ASSERT_EQ((planned_variant<S, T>(shapes[i], count)), kShortKBatchedVariant<T>) << describe(shapes[i]);
        Geometries g = with_count(layout_combination(static_cast<int>(i) * 5 + 1, case_index<TypeParam>()), count);
        g.a.gap = 3;
        g.c.gap = 1;
        check_gemm_argmax<S, T>(rng, shapes[i], g, i % 2 ? Values::Ties : Values::Typical, {.batched_api = true});
    }
}

// One product that fills the GPU with a short K (Batched for 32-bit types) and one with a long K,
// both with ties across slices and tile edges. The long one's 256 tiles fill fewer than the block
// slots of a GPU of 86 to 256 multiprocessors, so the 32-bit types split its K (Serial); a batch of 28
// products of 16 tiles each fills more than those of up to 149 (the 32-bit Tiled kernels).
TYPED_TEST(ArgmaxVariantsGpu, LargeProducts) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    // At least one 64 x 64 tile per multiprocessor on a GPU of up to 208 (short) and 256 (long).
    const Shape short_k{1000, 777, 300}, long_k{1024, 1000, 1100}, many{256, 250, 1030};
    const std::int64_t count = 28;
    ASSERT_EQ((planned_variant<S, T>(short_k)), kShortKBatchedVariant<T>);
    ASSERT_EQ((planned_variant<S, T>(long_k)), kSerialVariant<T>);
    ASSERT_EQ((planned_variant<S, T>(many, count)), KernelVariant::Tiled);
    check_gemm_argmax<S, T>(rng, short_k, layout_combination(3, case_index<TypeParam>()), Values::Ties);
    check_gemm_argmax<S, T>(rng, long_k, layout_combination(6, case_index<TypeParam>()), Values::Ties);
    if constexpr (sizeof(T) == 4)  // (64-bit types took their Tiled kernel above)
        check_gemm_argmax<S, T>(rng, many, with_count(layout_combination(1, case_index<TypeParam>()), count),
                                Values::Typical, {.batched_api = true});
}

// A long K over too few 64 x 64 tiles: the Serial argmax kernels (32-bit types) compute chunks of K
// in separate blocks and merge their (value, k) pairs into C and argmax, a tile at a time. Ties, so
// that equal values meet in different chunks and the smallest k must win; odd sides (tiles cut at
// the edges, where the merge goes element by element); a last chunk shorter than a slice's multiple;
// several chunks over a batch; every layout. The outputs are poisoned first, so the kernel's fill of
// the zero and -1 is tested too.
TYPED_TEST(ArgmaxVariantsGpu, SerialChunksOfK) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    // On a GPU of 132 multiprocessors: K = 384 in 3 chunks of 128; K = 300 in chunks of 152 and 148; a
    // batch of 9 products of 16 tiles with K = 1000 in 5 chunks of 200.
    const std::vector<std::pair<Shape, std::int64_t>> problems = {
        {serial_shape(12, 384, 0, 0), 1}, {serial_shape(12, 300, 3, 5), 1}, {{256, 255, 1000}, 9}};
    for (std::size_t i = 0; i < problems.size(); ++i) {
        const auto& [s, batch] = problems[i];
        ASSERT_EQ((planned_variant<S, T>(s, batch)), kSerialVariant<T>) << describe(s) << " x " << batch;
        Geometries g = with_count(layout_combination(static_cast<int>(i) * 3 + 2, case_index<TypeParam>()), batch);
        check_gemm_argmax<S, T>(rng, s, g, i == 1 ? Values::Typical : Values::Ties, {.batched_api = batch > 1});
    }
}

// NaN, both infinities, -0 and (integers) the ends of the range in some rows and columns, on each
// variant: the first NaN wins, and -1 stays where nothing beats the zero.
TYPED_TEST(ArgmaxVariantsGpu, EdgeValues) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    TROPICAL_TEST_RNG(rng);
    const std::int64_t count = 2 * CudaContext::for_device(0).multiprocessor_count();
    // SplitK, Small (K below two Small slices), Batched and Serial (or Tiled for 64-bit types).
    const std::vector<std::pair<Shape, std::int64_t>> problems = {
        {{70, 50, 90}, 1}, {{40, 36, 50}, 1}, {{64, 64, 77}, count}, {serial_shape(12, 320, 1, 2), 1}};
    for (const auto& [s, batch] : problems) {
        const Geometries g = with_count(layout_combination(5, case_index<TypeParam>()), batch);
        const auto [a, b] = edge_operands<T>(rng, ring, s, g, 24);
        const auto c0 = make_matrix<T>(s.m, s.n, g.c);
        const auto m0 = make_matrix<std::int32_t>(s.m, s.n, g.argmax, kPoison);
        const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c0, m0);
        const auto [actual_c, actual_argmax] = gpu_gemm_argmax<S>(a, b, c0, m0, {.batched_api = batch > 1});
        EXPECT_TRUE(exactly_equal("C", expected_c, actual_c)) << describe(s) << " x " << batch;
        EXPECT_TRUE(exactly_equal("argmax", expected_argmax, actual_argmax)) << describe(s) << " x " << batch;
    }
}

}  // namespace
