// Batched products and sizes beyond the launch grid's limits: a batch stride of 0 broadcasting A, B
// or both; more than 65535 products in one call (the grid's z limit); batched argmax and backward;
// more rows than 65535 tiles (the grid's y limit); and one output with more than 2^31 elements.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <sstream>
#include <type_traits>
#include <vector>

#include <tropical/device_buffer.hpp>
#include <tropical/error.hpp>
#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class C>
class BatchedGpu : public ::testing::Test {};
TYPED_TEST_SUITE(BatchedGpu, AllCases, CaseName);

template <class C>
class BatchedBackwardGpu : public ::testing::Test {};
TYPED_TEST_SUITE(BatchedBackwardGpu, FloatCases, CaseName);

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

constexpr Launch kBatched{.accumulate = false, .batched_api = true};
constexpr Launch kBatchedAccumulate{.accumulate = true, .batched_api = true};

TYPED_TEST(BatchedGpu, BroadcastOperands) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Shape> shapes = {{33, 20, 17}, {300, 40, 20}, {5, 270, 9}};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        const int combination = static_cast<int>(i * 3 + 1) % 8;
        for (auto [broadcast_a, broadcast_b] :
             {std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
            const Geometries g = batch_geometry(combination, 5, 2, 3, 1, broadcast_a, broadcast_b);
            check_gemm<S, T>(rng, shapes[i], g, Values::Typical, kBatched);
            check_gemm<S, T>(rng, shapes[i], g, Values::Typical, kBatchedAccumulate);
            check_gemm_argmax<S, T>(rng, shapes[i], g, Values::Ties, kBatched);
        }
    }
}

// 70000 products of 2x3x2, every one checked: more than the 65535 blocks a grid has along z.
TYPED_TEST(BatchedGpu, MoreThan65535Products) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const Shape s{2, 2, 3};
    check_gemm<S, T>(rng, s, batch_geometry(0, 70000, 0, 0, 0), Values::Typical, kBatched);
    check_gemm<S, T>(rng, s, batch_geometry(5, 70000, 1, 2, 3), Values::Typical, kBatchedAccumulate);
    check_gemm<S, T>(rng, s, batch_geometry(6, 70000, 0, 0, 1, false, true), Values::Typical, kBatched);
    check_gemm_argmax<S, T>(rng, s, batch_geometry(3, 70000, 2, 0, 1), Values::Ties, kBatched);
}

// A batch of products big enough for the big-tile kernels, with gaps between the matrices.
TYPED_TEST(BatchedGpu, LargeProductsInABatch) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    check_gemm<S, T>(rng, {270, 130, 30}, batch_geometry(2, 3, 5, 0, 7), Values::Typical, kBatched);
    check_gemm_argmax<S, T>(rng, {130, 270, 30}, batch_geometry(7, 3, 0, 5, 7), Values::Typical, kBatched);
}

// A count of 0 writes nothing; a count of 1 through the batched entry point is a plain product.
TYPED_TEST(BatchedGpu, CountZeroAndOne) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    TROPICAL_TEST_RNG(rng);
    const Geometries g = batch_geometry(4, 0, 0, 0, 0);
    const auto a = random_matrix<T>(rng, ring, Values::Typical, 9, 4, g.a);
    const auto b = random_matrix<T>(rng, ring, Values::Typical, 4, 7, g.b);
    const auto c = make_matrix<T>(9, 7, g.c);  // storage for one matrix, all poison
    for (const bool accumulate : {false, true}) {
        const auto actual = gpu_gemm<S>(a, b, c, {.accumulate = accumulate, .batched_api = true});
        const auto* bytes = reinterpret_cast<const unsigned char*>(actual.storage.data());
        EXPECT_TRUE(
            std::all_of(bytes, bytes + actual.storage.size() * sizeof(T), [](unsigned char x) { return x == kPoison; }))
            << "a batch of 0 products wrote to C" << (accumulate ? " (accumulate)" : "");
    }
    check_gemm<S, T>(rng, {40, 50, 30}, batch_geometry(1, 1, 0, 0, 0), Values::Typical, kBatched);
    check_gemm_argmax<S, T>(rng, {40, 50, 30}, batch_geometry(2, 1, 0, 0, 0), Values::Typical, kBatched);
}

// More rows than 65535 tiles (the grid's y limit) for both tile heights (128 and 64 rows).
TYPED_TEST(BatchedGpu, RowsBeyondTheGridLimit) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    // One type per tile height is enough: f32 (128 rows) and f64 (64 rows).
    constexpr bool covering = (std::is_same_v<T, float> && S::value == Semiring::MaxPlus) ||
                              (std::is_same_v<T, double> && S::value == Semiring::MinPlus);
    if (!covering) GTEST_SKIP() << "covered by f32_maxplus and f64_minplus";
    TROPICAL_TEST_RNG(rng);
    const Shape s{8'400'000, 2, 1};
    check_gemm<S, T>(rng, s, layout_combination(4, 0), Values::Typical);
    check_gemm_argmax<S, T>(rng, s, layout_combination(1, 0), Values::Typical);
}

// Backward over batches: with gaps (one memset per matrix when zeroing), without (one memset for all),
// accumulating, many products, and argmax concentrated on k = 0.
TYPED_TEST(BatchedBackwardGpu, MatchesTheReference) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (bool for_a : {true, false}) {
        check_backward<S, T>(rng, for_a, {33, 20, 17}, batch_geometry(0, 7, 0, 0, 0), kBatched);
        check_backward<S, T>(rng, for_a, {33, 20, 17}, batch_geometry(5, 7, 3, 4, 5), kBatched, false, kPoisonFF);
        check_backward<S, T>(rng, for_a, {40, 270, 12}, batch_geometry(3, 3, 1, 2, 0), kBatchedAccumulate);
        check_backward<S, T>(rng, for_a, {2, 2, 3}, batch_geometry(6, 70000, 1, 0, 2), kBatched, false, kPoisonFF);
        check_backward<S, T>(rng, for_a, {64, 50, 4}, batch_geometry(1, 5, 0, 3, 0), kBatched, true);
        // The operand read for MaxMul broadcast over the batch.
        check_backward<S, T>(rng, for_a, {20, 30, 10}, batch_geometry(2, 4, 0, 0, 0, !for_a, for_a), kBatched);
    }
}

// Batched argmax from the GPU feeding the batched backward kernels.
TYPED_TEST(BatchedBackwardGpu, FromTheForwardArgmax) {
    TROPICAL_REQUIRE_GPU();
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    constexpr Semiring ring = S::value;
    TROPICAL_TEST_RNG(rng);
    const Shape s{30, 40, 25};
    const Geometries g = batch_geometry(3, 6, 1, 2, 3);
    const auto a = random_matrix<T>(rng, ring, Values::Ties, s.m, s.k, g.a);
    const auto b = random_matrix<T>(rng, ring, Values::Ties, s.k, s.n, g.b);
    const auto c0 = make_matrix<T>(s.m, s.n, g.c);
    const auto m0 = make_matrix<std::int32_t>(s.m, s.n, g.argmax);
    const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c0, m0);
    const auto [c, argmax] = gpu_gemm_argmax<S>(a, b, c0, m0, kBatched);
    EXPECT_TRUE(exactly_equal("C", expected_c, c));
    ASSERT_TRUE(exactly_equal("argmax", expected_argmax, argmax));
    const auto grad_c = random_gradient<T>(rng, s.m, s.n, g.c);
    for (bool for_a : {true, false}) {
        const auto grad = for_a ? make_matrix<T>(s.m, s.k, g.a) : make_matrix<T>(s.k, s.n, g.b);
        const auto [expected, scale] = reference_backward<T>(ring, for_a, grad_c, argmax, a, b, grad, false);
        const auto actual = gpu_backward<S>(for_a, grad_c, argmax, a, b, grad, kBatched);
        EXPECT_TRUE(close(for_a ? "grad_A" : "grad_B", expected, actual, scale, backward_rtol<T>()));
    }
}

// Compares one line (row or column) of a huge output with the reference for that line.
template <class T>
void expect_line(const char* what, std::int64_t line, const std::vector<T>& expected, const std::vector<T>& actual) {
    std::int64_t bad = 0;
    std::ostringstream details;
    for (std::size_t e = 0; e < expected.size(); ++e)
        if (!same_value(expected[e], actual[e]) && bad++ < 5)
            details << "\n  element " << e << ": expected " << show(expected[e]) << ", got " << show(actual[e]);
    EXPECT_EQ(bad, 0) << what << " line " << line << ": " << bad << " wrong elements" << details.str();
}

// One product whose C has 65536 x 32769 > 2^31 elements (8.6 GB of i32; another 8.6 GB for the
// argmax): element offsets past 2^31 must not wrap. K = 1 keeps it cheap; whole rows (row-major C)
// and whole columns (column-major C) are checked, among them the last ones, which lie past 2^31.
TEST(HugeOutputGpu, MoreThan2To31Elements) {
    TROPICAL_REQUIRE_GPU();
    TROPICAL_TEST_RNG(rng);
    using T = std::int32_t;
    using S = MaxPlus;
    constexpr Semiring ring = S::value;
    constexpr std::int64_t M = 65536, N = 32769;
    static_assert(M * N > (std::int64_t{1} << 31));
    const T zero = reference::zero<T>(ring);
    std::vector<T> a(M), b(N);
    for (auto& x : a) x = rng.chance(0.01) ? zero : static_cast<T>(rng.integer(-(1 << 27), 1 << 27));
    for (auto& x : b) x = rng.chance(0.01) ? zero : static_cast<T>(rng.integer(-(1 << 27), 1 << 27));
    a.back() = 12345;
    b.back() = -777;
    const DeviceBuffer<T> da{std::span<const T>(a)}, db{std::span<const T>(b)};
    std::optional<DeviceBuffer<T>> dc;
    std::optional<DeviceBuffer<std::int32_t>> dm;
    try {
        dc.emplace(static_cast<std::size_t>(M * N));
        dm.emplace(static_cast<std::size_t>(M * N));
    } catch (const OutOfMemory& e) {
        GTEST_SKIP() << "not enough free GPU memory for two outputs of 8.6 GB: " << e.what();
    }

    std::vector<std::int64_t> rows = {0, 1, M / 2, M - 3, M - 2, M - 1};
    std::vector<std::int64_t> cols = {0, 1, N / 2, N - 3, N - 2, N - 1};
    for (int r = 0; r < 10; ++r) {
        rows.push_back(rng.integer(0, M - 1));
        cols.push_back(rng.integer(0, N - 1));
    }

    // Row-major C: rows 65534 and 65535 start past element 2^31.
    dc->fill_bytes(kPoison);
    gemm<S>(da.row_major(M, 1), db.row_major(1, N), dc->row_major(M, N));
    for (const std::int64_t i : rows) {
        SCOPED_TRACE("row " + std::to_string(i));
        std::vector<T> expected(N), actual(N);
        reference::gemm<T>(ring, {a.data() + i, 1, 1, 1, 1}, {b.data(), 1, N, N, 1}, {expected.data(), 1, N, N, 1});
        dc->download(actual, static_cast<std::size_t>(i * N));
        expect_line("C (row-major)", i, expected, actual);
    }

    // Column-major C and argmax: the last column starts at element 2^31.
    dc->fill_bytes(kPoisonFF);
    dm->fill_bytes(kPoison);
    gemm_with_argmax<S>(da.col_major(M, 1), db.col_major(1, N), dc->col_major(M, N), dm->col_major(M, N));
    for (const std::int64_t j : cols) {
        SCOPED_TRACE("column " + std::to_string(j));
        std::vector<T> expected(M), actual(M);
        std::vector<std::int32_t> expected_argmax(M), actual_argmax(M);
        reference::gemm_argmax<T>(ring, {a.data(), M, 1, 1, M}, {b.data() + j, 1, 1, 1, 1},
                                  {expected.data(), M, 1, 1, M}, {expected_argmax.data(), M, 1, 1, M});
        dc->download(actual, static_cast<std::size_t>(j * M));
        dm->download(actual_argmax, static_cast<std::size_t>(j * M));
        expect_line("C (column-major)", j, expected, actual);
        expect_line("argmax (column-major)", j, expected_argmax, actual_argmax);
    }
}

}  // namespace
