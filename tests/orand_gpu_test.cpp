// OrAnd on the GPU against the reference: products of bytes and of packed words (the caller's, with
// garbage in the bits past K, and pack_bits' own), argmax, the packing, every layout, K around the
// word size and past a slice, odd shapes, batches with gaps and broadcasts, accumulate, edge values,
// a product large enough that the vector paths and several tiles per block run, and streams.
// (tests/orand_emulation_test.cpp runs the kernels' code on the CPU, where CI has no GPU.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <tropical/device_buffer.hpp>
#include <tropical/error.hpp>
#include <tropical/gemm.hpp>
#include "support/gpu.hpp"
#include "support/orand_inputs.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

// C (and argmax) on the GPU from bytes, from the caller's words, and from words pack_bits made on
// the GPU, each against the reference.
void check(Rng& rng, std::int64_t m, std::int64_t n, std::int64_t k, const Geometries& g, double density,
           bool accumulate = false) {
    SCOPED_TRACE("M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) + "; " + describe(g) +
                 (accumulate ? "; accumulate" : ""));
    OrAndProblem x = orand_problem(rng, m, n, k, density, g);
    if (accumulate) x.c.fill([&] { return static_cast<std::uint8_t>(rng.chance(0.3) ? rng.integer(1, 255) : 0); });
    const std::int64_t count = g.c.count;
    const GemmOptions options{nullptr, accumulate};
    DeviceMatrix<std::uint8_t> da(x.a), db(x.b);

    const auto want = reference_orand(x.a, x.b, x.c, accumulate);
    {
        DeviceMatrix<std::uint8_t> dc(x.c);
        gemm_batched<OrAnd>(da.batched(), db.batched(), dc.batched(), count, options);
        EXPECT_TRUE(exactly_equal("C of bytes", want, dc.download()));
    }
    const auto wa = packed_words(x.a, PackAs::A, words_geometry(g.a, 1), &rng);
    const auto wb = packed_words(x.b, PackAs::B, words_geometry(g.b, 2), &rng);
    DeviceMatrix<std::uint32_t> dwa(wa), dwb(wb);
    {
        DeviceMatrix<std::uint8_t> dc(x.c);
        gemm_packed_batched<OrAnd>(dwa.batched(), dwb.batched(), k, dc.batched(), count, options);
        EXPECT_TRUE(exactly_equal("C of the caller's words", want, dc.download()));
    }
    {
        // pack_bits on the GPU (into poisoned words: the bits past K must come out 0, the padding untouched).
        const auto clean_a = packed_words(x.a, PackAs::A, words_geometry(g.a, 3));
        const auto clean_b = packed_words(x.b, PackAs::B, words_geometry(g.b, 0));
        DeviceMatrix<std::uint32_t> pa(make_matrix<std::uint32_t>(clean_a.rows, clean_a.cols, words_geometry(g.a, 3)));
        DeviceMatrix<std::uint32_t> pb(make_matrix<std::uint32_t>(clean_b.rows, clean_b.cols, words_geometry(g.b, 0)));
        const std::int64_t a_count = g.a.broadcast ? 1 : count, b_count = g.b.broadcast ? 1 : count;
        pack_bits_batched<std::uint8_t>(da.batched(), PackAs::A, pa.batched(), a_count);
        pack_bits_batched<std::uint8_t>(db.batched(), PackAs::B, pb.batched(), b_count);
        EXPECT_TRUE(exactly_equal("words of A", clean_a, pa.download()));
        EXPECT_TRUE(exactly_equal("words of B", clean_b, pb.download()));
        DeviceMatrix<std::uint8_t> dc(x.c);
        gemm_packed_batched<OrAnd>(pa.batched(), pb.batched(), k, dc.batched(), count, options);
        EXPECT_TRUE(exactly_equal("C of pack_bits' words", want, dc.download()));
    }
    if (accumulate) return;
    const auto [want_c, want_argmax] = reference_orand_argmax(x.a, x.b, x.c, x.argmax);
    {
        DeviceMatrix<std::uint8_t> dc(x.c);
        DeviceMatrix<std::int32_t> dm(x.argmax);
        gemm_batched_with_argmax<OrAnd>(da.batched(), db.batched(), dc.batched(), dm.batched(), count);
        EXPECT_TRUE(exactly_equal("C of bytes, with argmax", want_c, dc.download()));
        EXPECT_TRUE(exactly_equal("argmax of bytes", want_argmax, dm.download()));
    }
    {
        DeviceMatrix<std::uint8_t> dc(x.c);
        DeviceMatrix<std::int32_t> dm(x.argmax);
        gemm_packed_batched_with_argmax<OrAnd>(dwa.batched(), dwb.batched(), k, dc.batched(), dm.batched(), count);
        EXPECT_TRUE(exactly_equal("C of words, with argmax", want_c, dc.download()));
        EXPECT_TRUE(exactly_equal("argmax of words", want_argmax, dm.download()));
    }
}

TEST(OrAndGpu, EveryLayoutAndK) {
    TROPICAL_TEST_RNG(rng);
    for (int combination = 0; combination < 8; ++combination)
        for (const std::int64_t k : orand_ks())
            check(rng, 130 + combination, 70 + 61 * (combination % 2), k, layout_combination(combination, combination),
                  k > 64 ? 0.02 : 0.15);
}

TEST(OrAndGpu, Accumulate) {
    TROPICAL_TEST_RNG(rng);
    for (int combination : {0, 3, 6}) check(rng, 150, 90, 200, layout_combination(combination), 0.01, true);
}

TEST(OrAndGpu, BatchesWithGapsAndBroadcasts) {
    TROPICAL_TEST_RNG(rng);
    for (int combination : {1, 4, 6}) {
        Geometries g = with_count(layout_combination(combination, 1), 5);
        g.a.gap = 3, g.c.gap = 5, g.argmax.gap = 2;
        g.b.broadcast = combination == 4;
        g.a.broadcast = combination == 6;
        check(rng, 40, 135, 77, g, 0.05);
    }
    // Many small products: the grid's z runs over the batch.
    check(rng, 16, 16, 64, with_count(layout_combination(0), 70000), 0.05);
}

TEST(OrAndGpu, LargeAlignedProductsTakeTheVectorPaths) {
    TROPICAL_TEST_RNG(rng);
    for (int combination : {0, 5})
        for (const double density : {0.5, 0.004}) {
            Geometries g = layout_combination(combination);
            g.a.pad = g.b.pad = g.c.pad = g.argmax.pad = 0;
            check(rng, 1024, 768, 2048, g, density);
        }
}

TEST(OrAndGpu, EdgeValues) {
    TROPICAL_TEST_RNG(rng);
    for (const std::int64_t k : {1, 31, 32, 33, 95, 600}) {
        SCOPED_TRACE("K=" + std::to_string(k));
        const Geometries g = layout_combination(static_cast<int>(k % 8));
        const auto argmax_of = [&](const OrAndProblem& x) {
            DeviceMatrix<std::uint8_t> da(x.a), db(x.b), dc(x.c);
            DeviceMatrix<std::int32_t> dm(x.argmax);
            gemm_with_argmax<OrAnd>(da.view(), db.view(), dc.view(), dm.view());
            const auto [want_c, want_argmax] = reference_orand_argmax(x.a, x.b, x.c, x.argmax);
            const auto got = dm.download();
            EXPECT_TRUE(exactly_equal("C", want_c, dc.download()));
            EXPECT_TRUE(exactly_equal("argmax", want_argmax, got));
            return got;
        };
        EXPECT_EQ(argmax_of(orand_problem(rng, 67, 131, k, 0.0, g))(66, 130), -1);
        EXPECT_EQ(argmax_of(orand_problem(rng, 67, 131, k, 1.0, g))(66, 130), 0);
        OrAndProblem last = orand_problem(rng, 67, 131, k, 0.0, g);
        for (std::int64_t i = 0; i < 67; ++i) last.a(i, k - 1) = 0x10;
        for (std::int64_t j = 0; j < 131; ++j) last.b(k - 1, j) = 0x01;
        EXPECT_EQ(argmax_of(last)(66, 130), k - 1);
    }
}

TEST(OrAndGpu, RefusesGradientsAndMismatchedTypes) {
    DeviceBuffer<std::uint8_t> u(16);
    DeviceBuffer<float> f(16);
    DeviceBuffer<std::int32_t> idx(16);
    EXPECT_THROW(detail::product(Semiring::OrAnd, DType::F32, detail::operand<const float>(f.row_major(4, 4)),
                                 detail::operand<const float>(f.row_major(4, 4)), detail::operand(f.row_major(4, 4)),
                                 nullptr, 1, {}),
                 Unsupported);
    EXPECT_THROW(detail::backward(detail::Gradient::OfB, Semiring::OrAnd, DType::U8,
                                  detail::operand<const std::uint8_t>(u.row_major(4, 4)),
                                  detail::operand<const std::int32_t>(idx.row_major(4, 4)), {}, {},
                                  detail::operand(u.row_major(4, 4)), 1, {}),
                 Unsupported);
}

}  // namespace
