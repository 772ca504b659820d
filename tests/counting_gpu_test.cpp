// The counting kernels against the CPU reference: fresh random (value, count) operands with many
// ties and edge values (-inf, +inf, NaN), every layout of each of the six matrices, padded leading
// dimensions, odd shapes on each side of every kernel's tile (Small 16, Batched 32, Tiled 64), K = 0,
// broadcast batches, accumulate, and outputs poisoned first so that a missed or stray write shows.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <tropical/c_api.h>
#include <tropical/counting.hpp>
#include "support/counting_cases.hpp"
#include "support/gpu.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class T>
CountingMatrix<T> run_gpu(const CountingCase<T>& t, bool through_c_abi) {
    DeviceMatrix<T> av(t.a.values), bv(t.b.values), cv(t.c.values);
    DeviceMatrix<double> ac(t.a.counts), bc(t.b.counts), cc(t.c.counts);
    if (through_c_abi) {
        auto desc = [](const auto& d) {
            const auto v = d.batched();
            return tropical_matrix{v.matrix.data,
                                   v.matrix.rows,
                                   v.matrix.cols,
                                   v.matrix.ld,
                                   v.matrix.layout == Layout::RowMajor ? TROPICAL_ROW_MAJOR : TROPICAL_COL_MAJOR,
                                   v.batch_stride};
        };
        const tropical_matrix m[6] = {desc(av), desc(ac), desc(bv), desc(bc), desc(cv), desc(cc)};
        tropical_options o{nullptr, t.accumulate ? 1 : 0, 0};
        EXPECT_EQ(tropical_counting_gemm(std::is_same_v<T, float> ? TROPICAL_F32 : TROPICAL_F64, &m[0], &m[1], &m[2],
                                         &m[3], &m[4], &m[5], t.batch, &o),
                  TROPICAL_SUCCESS)
            << tropical_last_error_message();
    } else {
        GemmOptions o;
        o.accumulate = t.accumulate;
        counting_gemm_batched<T>(av.batched(), ac.batched(), bv.batched(), bc.batched(), cv.batched(), cc.batched(),
                                 t.batch, o);
    }
    return {cv.download(), cc.download()};
}

// Around each tile: 16 (Small), 32 (Batched), 64 (Tiled; large enough shapes to be chosen on any
// GPU), K below, at and above the slices (8, 16).
const std::vector<CountingShape> kShapes = {
    {1, 1, 1},      {15, 17, 7},     {33, 31, 16},     {5, 9, 0},       {65, 63, 17, 3},
    {2, 3, 5, 500}, {40, 70, 33, 7}, {1100, 1050, 24}, {2100, 2050, 9}, {129, 200, 300, 40},
};

template <class T>
class CountingGpu : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CountingGpu, ValueTypes);

TYPED_TEST(CountingGpu, MatchesTheReferenceOnEveryShapeLayoutAndEdgeValue) {
    TROPICAL_REQUIRE_GPU();
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    int salt = 0;
    for (const auto& s : kShapes)
        for (int combination = 0; combination < 64; combination += (s.m * s.n > 100000 ? 21 : 5)) {
            const bool broadcast = s.batch > 1 && combination % 2 == 1;
            const bool accumulate = combination % 3 == 2;
            const bool edges = combination % 4 != 3;
            SCOPED_TRACE(describe(s, combination, broadcast, accumulate));
            const auto t = make_counting_case<T>(rng, s, counting_geometry(combination, ++salt, s.batch, broadcast),
                                                 edges, accumulate);
            ASSERT_TRUE(counting_matches(t, run_gpu(t, combination % 2 == 0)));
        }
}

// Every layout of all six matrices once, on a shape that crosses tile edges.
TYPED_TEST(CountingGpu, EveryLayoutCombination) {
    TROPICAL_REQUIRE_GPU();
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    const CountingShape s{37, 41, 19, 2};
    for (int combination = 0; combination < 64; ++combination) {
        SCOPED_TRACE(describe(s, combination, false, false));
        const auto t =
            make_counting_case<T>(rng, s, counting_geometry(combination, combination, s.batch, false), true, false);
        ASSERT_TRUE(counting_matches(t, run_gpu(t, false)));
    }
}

}  // namespace
