// The LogPlus kernels (kernels/logplus.cuh, kernels/logplus_backward.cuh) against the long-double
// oracle (reference::log_gemm, reference::softmax_backward): fresh random inputs uniform in +-1,
// +-100 and +-1e4, rows where one term dominates by 200 or more, edge values (+-inf, NaN, -0, rows and
// columns of zeros), shapes on each side of both tiles (Small 16 x 16 in slices of 64, Tiled 64 x 64
// in slices of 16), K = 0 and K = 8192, every layout, padded leading dimensions, broadcast batches,
// accumulate, and outputs poisoned first. f32 must be within 1e-5 * max(1, |C|) (README, "LogPlus").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tropical/c_api.h>
#include <tropical/error.hpp>
#include <tropical/gemm.hpp>
#include "reference/reference.hpp"
#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"
#include "support/host_matrix.hpp"
#include "support/logplus_cases.hpp"
#include "support/parallel_batches.hpp"
#include "support/random_inputs.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

struct Shape3 {
    std::int64_t m, n, k, batch = 1;
};

template <class T>
HostMatrix<T> oracle(const HostMatrix<T>& a, const HostMatrix<T>& b, const HostMatrix<T>& c, bool accumulate) {
    HostMatrix<T> out = c;
    for_each_batch_in_parallel(
        c.count, [&](std::int64_t n) { reference::log_gemm<T>(a.view(n), b.view(n), out.view(n), accumulate); });
    return out;
}

template <class T>
HostMatrix<T> on_gpu(const HostMatrix<T>& a, const HostMatrix<T>& b, const HostMatrix<T>& c, bool accumulate,
                     bool batched_api) {
    DeviceMatrix<T> da(a), db(b), dc(c);
    if (!accumulate) dc.fill_bytes(kPoisonFF);  // NaN: a result never written shows
    const GemmOptions options{nullptr, accumulate};
    if (c.count == 1 && !batched_api) gemm<LogPlus>(da.view(), db.view(), dc.view(), options);
    else gemm_batched<LogPlus>(da.batched(), db.batched(), dc.batched(), c.count, options);
    return dc.download();
}

template <class T>
class LogPlusGpu : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LogPlusGpu, FloatTypes);

// Around both tiles (16 and 64), K below, at and above their slices (64 and 16), batches that make the
// Tiled kernel the choice (270 tiles of 64 x 64), broadcast operands.
const std::vector<Shape3> kShapes = {
    {1, 1, 1},     {15, 17, 7},    {16, 16, 64},     {33, 31, 100},     {65, 63, 17, 3},   {5, 9, 0},
    {2, 3, 5, 40}, {64, 256, 256}, {70, 130, 65, 2}, {64, 64, 48, 270}, {63, 65, 17, 270},
};

TYPED_TEST(LogPlusGpu, MatchesTheOracleOnEveryShapeLayoutRangeAndEdgeValue) {
    TROPICAL_REQUIRE_GPU();
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    int round = 0;
    for (const Shape3& s : kShapes)
        for (const double range : {1.0, 100.0, 1e4}) {
            ++round;
            const bool broadcast = s.batch > 1 && round % 2 == 1, accumulate = round % 3 == 0;
            const LogInputs v{range, round % 4 != 1, round % 5 == 2};
            const Geometry ga{round % 2 ? Layout::ColMajor : Layout::RowMajor, round % 3, s.batch, 0, broadcast};
            const Geometry gb{round % 3 ? Layout::RowMajor : Layout::ColMajor, (round + 1) % 2, s.batch, round % 2,
                              false};
            const Geometry gc{round % 5 == 3 ? Layout::ColMajor : Layout::RowMajor, round % 2, s.batch, 1, false};
            SCOPED_TRACE(fmt::format("{}x{}x{} batch {} range {} edges {} dominant {} accumulate {}", s.m, s.n, s.k,
                                     s.batch, range, v.edges, v.dominant, accumulate));
            const auto a = log_inputs<T>(rng, s.m, s.k, ga, v, true);
            const auto b = log_inputs<T>(rng, s.k, s.n, gb, v, false);
            const auto c = log_inputs<T>(rng, s.m, s.n, gc, {range, true, false}, true);
            const auto got = on_gpu(a, b, c, accumulate, round % 2 == 0);
            ASSERT_TRUE(log_elements_close(oracle(a, b, c, accumulate), got));
            ASSERT_TRUE(no_negative_zero(got));
        }
}

// K = 8192 on both kernels (Small: one product; Tiled: a batch of 140, factored at +-1 and +-10), the
// oracle on a sample of results: the blocked sums keep f32 within 1e-5 * max(1, |C|) at every range.
TYPED_TEST(LogPlusGpu, LongSumsStayWithinTheBound) {
    TROPICAL_REQUIRE_GPU();
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    for (const Shape3 s : {Shape3{40, 24, 8192, 1}, Shape3{128, 64, 8192, 140}})
        for (const double range : {1.0, 10.0, 100.0, 1e4}) {
            SCOPED_TRACE(fmt::format("{}x{}x{} batch {} range {}", s.m, s.n, s.k, s.batch, range));
            const Geometry g{Layout::RowMajor, 0, s.batch, 0, false};
            const auto a = log_inputs<T>(rng, s.m, s.k, g, {range, false, range == 100.0}, true);
            const auto b = log_inputs<T>(rng, s.k, s.n, g, {range, false, false}, false);
            const auto c = make_matrix<T>(s.m, s.n, g);
            const auto got = on_gpu(a, b, c, false, true);
            for (int sample = 0; sample < 200; ++sample) {
                const std::int64_t n = rng.integer(0, s.batch - 1), i = rng.integer(0, s.m - 1),
                                   j = rng.integer(0, s.n - 1);
                T want = 0;
                const auto va = a.view(n), vb = b.view(n);
                reference::log_gemm<T>({va.data + i * va.row_stride, 1, s.k, va.row_stride, va.col_stride},
                                       {vb.data + j * vb.col_stride, s.k, 1, vb.row_stride, vb.col_stride},
                                       {&want, 1, 1, 1, 1});
                ASSERT_TRUE(log_equal(want, got.at(n, i, j)))
                    << fmt::format("C[{}][{},{}] = {} but the oracle gives {}", n, i, j, got.at(n, i, j), want);
            }
        }
}

// The Tiled f32 kernel factors a tile whose values span a few tens (kernels/logplus_factored.cuh) and
// runs the straight loop on the others: ranges on both sides of the limit (+-10: factored; +-20 and
// +-50: not), tiles of each kind in one product (rows of a wide range below rows of a narrow one), values
// far from 0 with a narrow span, zeros (-inf, -0, rows of -inf) in factored tiles, every layout,
// accumulate, a broadcast batch, and K = 8192 within the bound.
TYPED_TEST(LogPlusGpu, FactoredAndStraightTilesMatchTheOracle) {
    TROPICAL_REQUIRE_GPU();
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    int round = 0;
    // (Batches of enough 64 x 64 tiles for the Tiled kernel on an H200.)
    for (const Shape3& s : {Shape3{128, 64, 16, 140}, Shape3{250, 250, 77, 24}, Shape3{256, 120, 40, 70}})
        for (const double range : {1.0, 10.0, 20.0, 50.0}) {
            ++round;
            const bool broadcast = s.batch > 1 && round % 2 == 0, accumulate = round % 3 == 0;
            const LogInputs v{range, round % 2 == 0, false, true};
            const Geometry ga{round % 2 ? Layout::ColMajor : Layout::RowMajor, round % 3, s.batch, 0, broadcast};
            const Geometry gb{round % 4 < 2 ? Layout::RowMajor : Layout::ColMajor, round % 2, s.batch, 1, false};
            const Geometry gc{Layout::RowMajor, 0, s.batch, 0, false};
            SCOPED_TRACE(fmt::format("{}x{}x{} batch {} range {} zeros {} accumulate {}", s.m, s.n, s.k, s.batch, range,
                                     v.edges, accumulate));
            auto a = log_inputs<T>(rng, s.m, s.k, ga, v, true);
            const auto b = log_inputs<T>(rng, s.k, s.n, gb, v, false);
            for (std::int64_t n = 0; n < a.distinct(); ++n)
                for (std::int64_t i = 0; i < s.m; ++i)
                    for (std::int64_t k = 0; k < s.k; ++k) {
                        T& x = a.at(n, i, k);
                        if (i >= 128 && round % 2 == 1) x = static_cast<T>(rng.real(-300, 300));  // straight tiles
                        else if (round % 4 == 2 && std::isfinite(x)) x += T(1e6);                 // far from 0, narrow
                    }
            const auto c = log_inputs<T>(rng, s.m, s.n, gc, {range, false, false}, true);
            const auto got = on_gpu(a, b, c, accumulate, round % 2 == 0);
            ASSERT_TRUE(log_elements_close(oracle(a, b, c, accumulate), got));
            ASSERT_TRUE(no_negative_zero(got));
        }
}

// The rules one by one, on a 1 x 1 x 3 product: a NaN term wins over +inf, +inf over finite terms,
// -inf + +inf is NaN, a sum of zeros is -inf; -0 reads as +0 (log(exp(0) * 3)).
TYPED_TEST(LogPlusGpu, TheSpecialValueRules) {
    TROPICAL_REQUIRE_GPU();
    using T = TypeParam;
    const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
    struct Rule {
        std::vector<T> a, b;
        T want;
    };
    const std::vector<Rule> rules = {
        {{1, 2, 3}, {0, 0, 0}, T(std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)))},
        {{-inf, -inf, -inf}, {0, 0, 0}, -inf},
        {{inf, 0, 0}, {0, 0, 0}, inf},
        {{inf, nan, 0}, {0, 0, 0}, nan},
        {{nan, inf, 0}, {0, 0, 0}, nan},
        {{inf, 1, 1}, {-inf, 0, 0}, nan},
        {{T(-0.0), T(-0.0), T(-0.0)}, {T(-0.0), T(-0.0), T(-0.0)}, T(std::log(3.0))},
        {{1000, 0, -1000}, {0, 0, 0}, T(1000)},
    };
    for (const Rule& r : rules) {
        auto a = make_matrix<T>(1, 3), b = make_matrix<T>(3, 1), c = make_matrix<T>(1, 1);
        for (int k = 0; k < 3; ++k) a(0, k) = r.a[k], b(k, 0) = r.b[k];
        const T got = on_gpu(a, b, c, false, false)(0, 0);
        EXPECT_TRUE(log_equal(r.want, got)) << got << " for " << r.want;
    }
}

template <class T>
HostMatrix<T> oracle_gradient(bool of_a, const HostMatrix<T>& g, const HostMatrix<T>& c, const HostMatrix<T>& a,
                              const HostMatrix<T>& b, HostMatrix<T> grad, bool accumulate) {
    for_each_batch_in_parallel(grad.count, [&](std::int64_t n) {
        if (!accumulate)
            for (std::int64_t i = 0; i < grad.rows; ++i)
                for (std::int64_t j = 0; j < grad.cols; ++j) grad.at(n, i, j) = 0;
        reference::softmax_backward<T>(of_a, g.view(n), c.view(n), a.view(n), b.view(n), grad.view(n));
    });
    return grad;
}

// The gradients against reference::softmax_backward, relative to the sum of the terms' magnitudes.
// A gradient (of A or B) on the GPU against reference::softmax_backward, within `tolerance` of the sum
// of the terms' magnitudes; A in layout ga, B in gb, C in gc, grad_C in gg, the gradient as B (of A) or
// as A (of B).
template <class T>
void check_gradient(Rng& rng, const Shape3& s, bool of_a, bool accumulate, const LogInputs& v, const Geometry& ga,
                    const Geometry& gb, const Geometry& gc, const Geometry& gg) {
    const double tolerance = std::is_same_v<T, float> ? 2e-4 : 1e-11;
    const auto a = log_inputs<T>(rng, s.m, s.k, ga, v, true);
    const auto b = log_inputs<T>(rng, s.k, s.n, gb, v, false);
    auto c = make_matrix<T>(s.m, s.n, gc);
    c = oracle(a, b, c, false);  // the forward's C
    auto grad_c = make_matrix<T>(s.m, s.n, gg);
    grad_c.fill([&] { return static_cast<T>(rng.real(-1, 1)); });
    auto grad = of_a ? make_matrix<T>(s.m, s.k, gb) : make_matrix<T>(s.k, s.n, ga);
    grad.fill([&] { return static_cast<T>(rng.real(-1, 1)); });
    auto abs_grad_c = grad_c;
    for (auto& x : abs_grad_c.storage) x = std::abs(x);
    const auto want = oracle_gradient(of_a, grad_c, c, a, b, grad, accumulate);
    const auto scale = oracle_gradient(of_a, abs_grad_c, c, a, b, grad, false);
    DeviceMatrix<T> dg(grad_c), dc(c), da(a), db(b), dgrad(grad);
    if (!accumulate) dgrad.fill_bytes(kPoisonFF);
    const GemmOptions options{nullptr, accumulate};
    if (s.batch == 1) {
        if (of_a) gemm_backward_a<LogPlus>(dg.view(), dc.view(), da.view(), db.view(), dgrad.view(), options);
        else gemm_backward_b<LogPlus>(dg.view(), dc.view(), da.view(), db.view(), dgrad.view(), options);
    } else if (of_a) {
        gemm_batched_backward_a<LogPlus>(dg.batched(), dc.batched(), da.batched(), db.batched(), dgrad.batched(),
                                         s.batch, options);
    } else {
        gemm_batched_backward_b<LogPlus>(dg.batched(), dc.batched(), da.batched(), db.batched(), dgrad.batched(),
                                         s.batch, options);
    }
    const auto got = dgrad.download();
    for (std::int64_t n = 0; n < grad.count; ++n)
        for (std::int64_t i = 0; i < grad.rows; ++i)
            for (std::int64_t j = 0; j < grad.cols; ++j) {
                const double w = want.at(n, i, j), x = got.at(n, i, j);
                const double bound = tolerance * (std::abs(double(scale.at(n, i, j))) + 1e-30) +
                                     (accumulate ? tolerance * std::abs(double(grad.at(n, i, j))) : 0.0);
                if (std::isnan(w)) ASSERT_TRUE(std::isnan(x)) << n << " " << i << " " << j;
                else ASSERT_LE(std::abs(x - w), bound) << fmt::format("grad[{}][{},{}]", n, i, j);
            }
}

TYPED_TEST(LogPlusGpu, GradientsMatchTheOracle) {
    TROPICAL_REQUIRE_GPU();
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    int round = 0;
    for (const Shape3& s : {Shape3{1, 1, 1}, Shape3{15, 17, 7}, Shape3{33, 47, 29, 3}, Shape3{64, 256, 256},
                            Shape3{70, 65, 130, 2}, Shape3{64, 48, 64, 270}, Shape3{4, 5, 0}})
        for (const bool of_a : {true, false}) {
            ++round;
            const bool accumulate = round % 3 == 0, edges = round % 4 == 1;
            SCOPED_TRACE(fmt::format("{}x{}x{} batch {} of {} accumulate {} edges {}", s.m, s.n, s.k, s.batch,
                                     of_a ? "A" : "B", accumulate, edges));
            const Geometry g{round % 2 ? Layout::ColMajor : Layout::RowMajor, round % 3, s.batch, 0, false};
            const Geometry gt{round % 2 ? Layout::RowMajor : Layout::ColMajor, 1, s.batch, 2, false};
            check_gradient<T>(rng, s, of_a, accumulate, {20, edges, false}, g, gt, g, gt);
        }
}

// The Tiled f32 gradients factor a tile whose values allow it (kernels/logplus_factored_backward.cuh: grad_C and C
// in one layout, Cv's rows and O's columns spanning a few tens, no NaN or +inf): ranges on both sides
// of the limit, zeros (-inf, -0, rows of -inf: C = -inf weighs 0), both layouts, accumulate; batches of
// enough 64 x 64 tiles for the Tiled kernels on an H200.
TYPED_TEST(LogPlusGpu, FactoredGradientsMatchTheOracle) {
    TROPICAL_REQUIRE_GPU();
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    int round = 0;
    for (const Shape3& s : {Shape3{256, 256, 256, 9}, Shape3{250, 260, 200, 12}})
        for (const double range : {1.0, 10.0, 40.0})
            for (const bool of_a : {true, false}) {
                ++round;
                const bool accumulate = round % 3 == 0;
                const LogInputs v{range, round % 2 == 0, false, true};
                SCOPED_TRACE(fmt::format("{}x{}x{} batch {} range {} of {} accumulate {} zeros {}", s.m, s.n, s.k,
                                         s.batch, range, of_a ? "A" : "B", accumulate, v.edges));
                const Geometry g{round % 4 < 2 ? Layout::RowMajor : Layout::ColMajor, 0, s.batch, 0, false};
                const Geometry gt{round % 4 < 2 ? Layout::ColMajor : Layout::RowMajor, 0, s.batch, 0, false};
                check_gradient<T>(rng, s, of_a, accumulate, v, g, gt, g, g);
            }
}

// LogPlus's (+) combines its terms: an argmax is refused, by name, in C++ and through the C ABI.
TYPED_TEST(LogPlusGpu, ArgmaxIsRefusedByName) {
    using T = TypeParam;
    std::vector<T> host(4, T(0));
    const MatrixView<const T> in{host.data(), 2, 2, 2, Layout::RowMajor};
    std::vector<T> out(4);
    std::vector<std::int32_t> idx(4);
    try {
        gemm_with_argmax<LogPlus>(in, in, MatrixView<T>{out.data(), 2, 2, 2, Layout::RowMajor},
                                  MatrixView<std::int32_t>{idx.data(), 2, 2, 2, Layout::RowMajor});
        FAIL() << "an argmax of LogPlus was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("logplus"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("no argmax"), std::string::npos) << e.what();
    }
}

}  // namespace
