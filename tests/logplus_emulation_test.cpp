// The LogPlus kernels' device code (kernels/logplus.cuh, kernels/logplus_backward.cuh) run on the CPU
// by tests/support/device_emulation.hpp, against the long-double oracle: products and gradients as
// the host plans them (validate, plan: the kernel, its grid and parameters), on the Tiled rows (the
// plan's choice on a one-multiprocessor device) and the Small rows with their 16 or 8 groups of
// threads merged at the end (on an H200-sized one), f32 and f64, values spanning +-1 and +-100 with
// edge values (+-inf, NaN, -0, a row of zeros), accumulate, a broadcast batch, outputs poisoned. CI
// has no GPU: this is where the loops' references, rescales, merges and special values are checked
// there (tests/logplus_gpu_test.cpp runs them on a GPU, with the emulation's exp2 being the SFU's).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tropical/gemm.hpp>
#include <tropical/kernels.hpp>
#include "catalogue/catalogue.hpp"
#include "gemm/plan.hpp"
#include "reference/reference.hpp"
#include "request/request.hpp"
#include "request/validate.hpp"
#include "support/host_matrix.hpp"
#include "support/logplus_cases.hpp"
#include "support/random_inputs.hpp"
#include "support/sanitizers.hpp"

#include "support/emulated_device_code.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

constexpr detail::DeviceLimits kOneMultiprocessor{1, 227 * 1024};  // every filled tile is Tiled's
constexpr detail::DeviceLimits kH200{132, 227 * 1024};             // a few tiles go to Small

// The emulated kernel of a planned row, checked against the catalogue's tile.
template <class Variant, class Tile, int THREADS>
bool tile_is(const detail::CatalogueRow& row) {
    const auto& t = row.tile;
    return t.bm == Tile::bm && t.bn == Tile::bn && t.bk == Tile::bk && t.tm == Tile::tm && t.tn == Tile::tn &&
           t.sk == Tile::sk && row.threads == THREADS;
}

template <class T>
void launch(const detail::LaunchPlan& p) {
    const detail::CatalogueRow& row = detail::row_of(*p.choice.kernel);
    const tg_emu::Index grid{p.grid[0], p.grid[1], p.grid[2]};
    const bool forward = row.operation == KernelOperation::Gemm, tiled = row.variant == KernelVariant::Tiled;
    constexpr bool f32 = std::is_same_v<T, float>;
    using TiledForward = std::conditional_t<f32, tg::Tile<64, 64, 32, 4, 4, 32>, tg::Tile<64, 64, 16, 4, 4, 16>>;
    using SmallForward = std::conditional_t<f32, tg::Tile<16, 8, 128, 4, 4, 4>, tg::Tile<16, 16, 64, 2, 4, 8>>;
    using TiledGradient = std::conditional_t<f32, tg::Tile<64, 64, 16, 4, 4, 16>, tg::Tile<64, 64, 8, 4, 4, 8>>;
    using SmallGradient = std::conditional_t<f32, tg::Tile<16, 16, 64, 4, 4, 4>, tg::Tile<16, 16, 32, 4, 4, 2>>;
    if (forward && tiled) {
        ASSERT_TRUE((tile_is<tg::Tiled, TiledForward, 256>(row))) << p.choice.kernel->name;
        tg_emu::launch(grid, 256, [&] { tg::product<tg::Tiled, false, tg::LogPlus, T, TiledForward, 256>(p.product); });
    } else if (forward) {
        ASSERT_TRUE((tile_is<tg::Small, SmallForward, 256>(row))) << p.choice.kernel->name;
        tg_emu::launch(grid, 256, [&] { tg::product<tg::Small, false, tg::LogPlus, T, SmallForward, 256>(p.product); });
    } else if (tiled) {
        ASSERT_TRUE((tile_is<tg::Tiled, TiledGradient, 256>(row))) << p.choice.kernel->name;
        tg_emu::launch(grid, 256, [&] { tg::log_gradient<tg::Tiled, T, TiledGradient, 256>(p.log_backward); });
    } else {
        ASSERT_TRUE((tile_is<tg::Small, SmallGradient, 256>(row))) << p.choice.kernel->name;
        tg_emu::launch(grid, 256, [&] { tg::log_gradient<tg::Small, T, SmallGradient, 256>(p.log_backward); });
    }
}

template <class T>
detail::OperandRef ref(HostMatrix<T>& m) {
    return {m.storage.data(), m.rows, m.cols, m.ld, m.layout, m.batch_stride};
}

// Runs a planned request on the emulated device; the plan must pick `variant`.
template <class T>
void run(detail::Request& q, const detail::DeviceLimits& device, KernelVariant variant) {
    const detail::ValidatedRequest v = detail::validate(q);
    ASSERT_TRUE(detail::has_work(q, v.shape));
    const detail::LaunchPlan p = detail::plan(q, v.shape, device);
    ASSERT_EQ(p.choice.kernel->variant, variant) << p.choice.kernel->name;
    launch<T>(p);
}

struct Case {
    std::int64_t m, n, k, batch;
    KernelVariant variant;
    double range;
    bool edges;
};

std::string describe(const Case& c) {
    return fmt::format("{}x{}x{} batch {} {} range {} edges {}", c.m, c.n, c.k, c.batch, to_string(c.variant), c.range,
                       c.edges);
}

// Tiled on a one-multiprocessor device, Small on an H200; K within one slice and across several. (f32's
// Tiled tiles are factored at +-1, straight at +-100 or with NaN or +inf.)
std::vector<Case> cases() {
    std::vector<Case> all = {
        {5, 7, 3, 1, KernelVariant::Small, 1, true},        {17, 33, 70, 1, KernelVariant::Small, 100, true},
        {16, 16, 150, 2, KernelVariant::Small, 100, false}, {128, 64, 64, 1, KernelVariant::Tiled, 100, true},
        {120, 60, 50, 2, KernelVariant::Tiled, 1, false},
    };
    if (under_address_sanitizer) all.resize(4);  // (fibers under ASan: a Tiled block is 256 of them)
    return all;
}

template <class T>
class LogPlusEmulated : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LogPlusEmulated, FloatTypes);

TYPED_TEST(LogPlusEmulated, ProductsMatchTheOracle) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    for (const Case& c : cases())
        for (const bool accumulate : {false, true}) {
            SCOPED_TRACE(describe(c) + (accumulate ? " accumulate" : ""));
            const Geometry ga{Layout::ColMajor, 1, c.batch, 0, c.batch > 1}, g{Layout::RowMajor, 2, c.batch, 1, false};
            auto a = log_inputs<T>(rng, c.m, c.k, ga, {c.range, c.edges, false}, true);
            auto b = log_inputs<T>(rng, c.k, c.n, g, {c.range, c.edges, false}, false);
            auto out = log_inputs<T>(rng, c.m, c.n, g, {c.range, true, false}, true);
            if (!accumulate) out = make_matrix<T>(c.m, c.n, g, kPoisonFF);  // NaN: a result never written shows
            HostMatrix<T> want = out;
            for (std::int64_t n = 0; n < c.batch; ++n)
                reference::log_gemm<T>(a.view(n), b.view(n), want.view(n), accumulate);
            detail::Request q;
            q.operation = detail::Operation::Gemm, q.semiring = Semiring::LogPlus, q.dtype = dtype_of<T>();
            q.a = ref(a), q.b = ref(b), q.c = ref(out), q.batch = c.batch, q.options.accumulate = accumulate;
            run<T>(q, c.variant == KernelVariant::Tiled ? kOneMultiprocessor : kH200, c.variant);
            EXPECT_TRUE(log_elements_close(want, out));
        }
}

// f32's Tiled kernel factors the tiles whose values allow it and runs the straight loop on the others
// (kernels/logplus_factored.cuh): one product with both kinds (rows 128 on of a wide range), zeros
// (-inf, -0, a row of -inf) in factored tiles, values far from 0 with a narrow span, partial tiles,
// accumulate.
TEST(LogPlusEmulatedFactored, FactoredAndStraightTilesMatchTheOracle) {
    using T = float;
    TROPICAL_TEST_RNG(rng);
    struct Factored {
        std::int64_t m, n, k;
        double range;
        double offset;
        bool wide_below;
    };
    std::vector<Factored> all = {{256, 64, 40, 10, 0, true}, {220, 60, 33, 10, 1e6, false}, {128, 64, 17, 1, 0, false}};
    if (under_address_sanitizer) all.resize(1);
    int round = 0;
    for (const Factored& c : all) {
        ++round;
        const bool accumulate = round % 2 == 0;
        SCOPED_TRACE(fmt::format("{}x{}x{} range {} offset {} wide rows {} accumulate {}", c.m, c.n, c.k, c.range,
                                 c.offset, c.wide_below, accumulate));
        const Geometry ga{Layout::RowMajor, 1, 1, 0, false}, gb{Layout::ColMajor, 0, 1, 0, false};
        auto a = log_inputs<T>(rng, c.m, c.k, ga, {c.range, true, false, true}, true);
        auto b = log_inputs<T>(rng, c.k, c.n, gb, {c.range, true, false, true}, false);
        for (std::int64_t i = 0; i < c.m; ++i)
            for (std::int64_t k = 0; k < c.k; ++k) {
                T& x = a.at(0, i, k);
                if (c.wide_below && i >= 128) x = static_cast<T>(rng.real(-300, 300));
                else if (std::isfinite(x)) x += static_cast<T>(c.offset);
            }
        auto out = log_inputs<T>(rng, c.m, c.n, gb, {c.range, false, false}, true);
        if (!accumulate) out = make_matrix<T>(c.m, c.n, gb, kPoisonFF);
        HostMatrix<T> want = out;
        reference::log_gemm<T>(a.view(0), b.view(0), want.view(0), accumulate);
        detail::Request q;
        q.operation = detail::Operation::Gemm, q.semiring = Semiring::LogPlus, q.dtype = dtype_of<T>();
        q.a = ref(a), q.b = ref(b), q.c = ref(out), q.batch = 1, q.options.accumulate = accumulate;
        run<T>(q, kOneMultiprocessor, KernelVariant::Tiled);
        EXPECT_TRUE(log_elements_close(want, out));
        EXPECT_TRUE(no_negative_zero(out));
    }
}

// f32's Tiled gradients factor the tiles whose values allow it (grad_C and C in one layout; see
// kernels/logplus_factored_backward.cuh) and run the straight loop on the others: ranges on both sides of the
// limit, zeros (C = -inf weighs 0), rows of A of a wide range (their tiles straight) beside narrow
// ones, partial tiles, accumulate.
TEST(LogPlusEmulatedFactored, FactoredAndStraightGradientsMatchTheOracle) {
    using T = float;
    TROPICAL_TEST_RNG(rng);
    struct Factored {
        std::int64_t m, n, k;
        double range;
        bool wide_below;
        Layout layout;
    };
    std::vector<Factored> all = {{128, 128, 64, 10, true, Layout::RowMajor},
                                 {120, 124, 60, 1, false, Layout::ColMajor},
                                 {128, 64, 64, 40, false, Layout::RowMajor}};
    if (under_address_sanitizer) all.resize(1);
    int round = 0;
    for (const Factored& c : all)
        for (const bool of_a : {true, false}) {
            ++round;
            const bool accumulate = round % 2 == 0;
            SCOPED_TRACE(fmt::format("{}x{}x{} range {} wide rows {} {} accumulate {}", c.m, c.n, c.k, c.range,
                                     c.wide_below, of_a ? "grad_A" : "grad_B", accumulate));
            const Geometry g{c.layout, 0, 1, 0, false};
            auto a = log_inputs<T>(rng, c.m, c.k, g, {c.range, true, false, true}, true);
            auto b = log_inputs<T>(rng, c.k, c.n, g, {c.range, true, false, true}, false);
            if (c.wide_below)
                for (std::int64_t i = 64; i < c.m; ++i)
                    for (std::int64_t k = 0; k < c.k; ++k) a.at(0, i, k) = static_cast<T>(rng.real(-300, 300));
            auto fwd = make_matrix<T>(c.m, c.n, g);
            reference::log_gemm<T>(a.view(0), b.view(0), fwd.view(0));
            auto grad_c = log_inputs<T>(rng, c.m, c.n, g, {1, false, false}, true);
            auto grad = of_a ? make_matrix<T>(c.m, c.k, g) : make_matrix<T>(c.k, c.n, g);
            grad.fill([&] { return static_cast<T>(rng.real(-1, 1)); });
            auto want = grad;
            if (!accumulate) {
                want.fill([] { return T(0); });
                grad = of_a ? make_matrix<T>(c.m, c.k, g, kPoisonFF) : make_matrix<T>(c.k, c.n, g, kPoisonFF);
            }
            reference::softmax_backward<T>(of_a, grad_c.view(0), fwd.view(0), a.view(0), b.view(0), want.view(0));
            detail::Request q =
                detail::backward_request(of_a ? detail::Gradient::OfA : detail::Gradient::OfB, Semiring::LogPlus,
                                         dtype_of<T>(), ref(grad_c), ref(fwd), ref(a), ref(b), ref(grad), 1, {});
            q.options.accumulate = accumulate;
            run<T>(q, kOneMultiprocessor, KernelVariant::Tiled);
            EXPECT_TRUE(log_elements_close(want, grad, 1e-4));
        }
}

TYPED_TEST(LogPlusEmulated, GradientsMatchTheOracle) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    const double tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-11;
    for (const Case& c : cases())
        for (const bool of_a : {true, false}) {
            SCOPED_TRACE(describe(c) + (of_a ? " grad_A" : " grad_B"));
            const Geometry g{Layout::RowMajor, 1, c.batch, 0, false}, gt{Layout::ColMajor, 0, c.batch, 2, false};
            auto a = log_inputs<T>(rng, c.m, c.k, g, {std::min(c.range, 20.0), c.edges, false}, true);
            auto b = log_inputs<T>(rng, c.k, c.n, gt, {std::min(c.range, 20.0), c.edges, false}, false);
            auto fwd = make_matrix<T>(c.m, c.n, g);
            for (std::int64_t n = 0; n < c.batch; ++n) reference::log_gemm<T>(a.view(n), b.view(n), fwd.view(n));
            auto grad_c = log_inputs<T>(rng, c.m, c.n, gt, {1, false, false}, true);
            auto grad = of_a ? make_matrix<T>(c.m, c.k, gt, kPoisonFF) : make_matrix<T>(c.k, c.n, g, kPoisonFF);
            auto want = of_a ? make_matrix<T>(c.m, c.k, gt) : make_matrix<T>(c.k, c.n, g);
            want.fill([] { return T(0); });
            for (std::int64_t n = 0; n < c.batch; ++n)
                reference::softmax_backward<T>(of_a, grad_c.view(n), fwd.view(n), a.view(n), b.view(n), want.view(n));
            detail::Request q =
                detail::backward_request(of_a ? detail::Gradient::OfA : detail::Gradient::OfB, Semiring::LogPlus,
                                         dtype_of<T>(), ref(grad_c), ref(fwd), ref(a), ref(b), ref(grad), c.batch, {});
            // The gradient's product: P x Q = M x K (of A) or N x K (of B), Tiled's where it covers
            // three quarters of its 64 x 64 tiles (choice.cpp's kMinTileCoverage).
            const std::int64_t p = of_a ? c.m : c.n, up = [](std::int64_t x) { return (x + 63) / 64 * 64; }(p);
            const bool fills = 4 * p * c.k >= 3 * up * ((c.k + 63) / 64 * 64);
            const KernelVariant variant =
                c.variant == KernelVariant::Tiled && fills ? KernelVariant::Tiled : KernelVariant::Small;
            run<T>(q, variant == KernelVariant::Tiled ? kOneMultiprocessor : kH200, variant);
            EXPECT_TRUE(log_elements_close(want, grad, tolerance));
        }
}

}  // namespace
