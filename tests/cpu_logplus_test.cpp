// LogPlus on the CPU (src/cpu/logplus-inl.h): C[i,j] = log sum_k exp(A[i,k] + B[k,j]) against the
// long-double reference (reference::log_gemm): f32 within 1e-5 max(1, |C|), f64 within 1e-12
// max(1, |C|), for inputs of magnitude 1, 100 and 1e4, K up to 8192, a term that dominates by
// hundreds, ties; the special values exactly (NaN, +-inf, -0, empty sums, K = 0); every layout,
// padded leading dimensions, batches with broadcast operands, accumulate; every SIMD target this
// machine runs. Outputs are poisoned before each call and their padding checked untouched. The
// gradients are in cpu_logplus_backward_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "support/cpu_gemm.hpp"
#include "support/logplus_cases.hpp"
#include "support/sanitizers.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class T>
class CpuLogPlus : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuLogPlus, FloatTypes);

template <class T>
const char* name() {
    return std::is_same_v<T, float> ? "f32" : "f64";
}

// Random operands in [-range, range] and an old C to accumulate into; returns the largest error seen.
template <class T>
double check_random(Rng& rng, const Shape& s, const Geometries& g, double range, HostLaunch launch = {}) {
    SCOPED_TRACE(describe(s) + "; " + describe(g) + "; range " + std::to_string(range));
    const auto a = uniform_matrix<T>(rng, s.m, s.k, g.a, range);
    const auto b = uniform_matrix<T>(rng, s.k, s.n, g.b, range);
    auto c = make_matrix<T>(s.m, s.n, g.c);
    double worst = 0;
    EXPECT_TRUE(
        log_close("C", reference_gemm<T>(Semiring::LogPlus, a, b, c), host_gemm<LogPlus>(a, b, c, launch), &worst));
    c = uniform_matrix<T>(rng, s.m, s.n, g.c, range);
    launch.accumulate = true;
    EXPECT_TRUE(log_close("accumulated C", reference_gemm<T>(Semiring::LogPlus, a, b, c, true),
                          host_gemm<LogPlus>(a, b, c, launch), &worst));
    return worst;
}

TYPED_TEST(CpuLogPlus, RandomInputsMatchTheReference) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    std::vector<Shape> shapes = {{1, 1, 1},    {3, 17, 5},   {17, 3, 63},    {63, 65, 16},
                                 {65, 1, 129}, {1, 129, 17}, {129, 63, 300}, {6, 40, 513}};
    // Under ASan the long-double reference of the two largest takes minutes; the others cover the
    // same tile edges, and the Release run takes them all.
    if (under_address_sanitizer) shapes.resize(6);
    for (const double range : {1.0, 100.0, 1e4}) {
        double worst = 0;
        for (std::size_t i = 0; i < shapes.size(); ++i)
            worst = std::max(
                worst, check_random<T>(rng, shapes[i], layout_combination(static_cast<int>(i) % 8, static_cast<int>(i)),
                                       range));
        std::printf("%s, inputs within +-%g: largest error %.3g of max(1, |C|)\n", name<T>(), range, worst);
    }
}

// K = 8192: the blocked sums keep the error within the bound however long the sum.
TYPED_TEST(CpuLogPlus, LongSumsStayWithinTheBound) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    for (const double range : {1.0, 100.0, 1e4}) {
        const double worst = check_random<T>(rng, {3, 21, 8192}, layout_combination(5, 1), range);
        std::printf("%s, K = 8192, inputs within +-%g: largest error %.3g of max(1, |C|)\n", name<T>(), range, worst);
    }
}

// One term 200 to 400 above every other in each result; and rows whose every term ties.
TYPED_TEST(CpuLogPlus, DominantTermsAndTies) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    for (const std::int64_t k : {1, 7, 300, 2000}) {
        const Shape s{9, 35, k};
        const Geometries g = layout_combination(static_cast<int>(k) % 8, 2);
        auto a = uniform_matrix<T>(rng, s.m, s.k, g.a, 1.0);
        const auto b = uniform_matrix<T>(rng, s.k, s.n, g.b, 1.0);
        for (std::int64_t i = 0; i < s.m; ++i) a(i, (i * 37) % k) += static_cast<T>(rng.real(200.0, 400.0));
        const auto c = make_matrix<T>(s.m, s.n, g.c);
        double worst = 0;
        EXPECT_TRUE(log_close("C (a dominant term)", reference_gemm<T>(Semiring::LogPlus, a, b, c),
                              host_gemm<LogPlus>(a, b, c), &worst));
        // Every term 0.5 + 0.25: C = 0.75 + log K.
        auto ta = a, tb = b;
        ta.fill([] { return T(0.5); });
        tb.fill([] { return T(0.25); });
        EXPECT_TRUE(log_close("C (ties)", reference_gemm<T>(Semiring::LogPlus, ta, tb, c),
                              host_gemm<LogPlus>(ta, tb, c), &worst));
        const auto tied = host_gemm<LogPlus>(ta, tb, c);
        constexpr double tie_error = std::is_same_v<T, float> ? 1e-6 : 1e-14;
        EXPECT_NEAR(static_cast<double>(tied(0, 0)), 0.75 + std::log(static_cast<double>(k)), tie_error);
    }
}

// Operands drawn from NaN, +-inf, -0, 0 and a few finite values, the old C too: the rules exactly
// (a NaN term gives NaN, else +inf gives +inf, only -inf terms give -inf) and no result is -0.
TYPED_TEST(CpuLogPlus, SpecialValuesFollowTheRules) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Shape> shapes = {{1, 1, 1}, {5, 7, 3}, {17, 33, 20}, {4, 65, 300}, {40, 9, 2}};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        const Shape s = shapes[i];
        const Geometries g = layout_combination(static_cast<int>(i * 3 + 1) % 8, static_cast<int>(i));
        for (const double p : {0.05, 0.3, 0.9}) {
            const auto a = log_special_matrix<T>(rng, s.m, s.k, g.a, p);
            const auto b = log_special_matrix<T>(rng, s.k, s.n, g.b, p);
            auto c = make_matrix<T>(s.m, s.n, g.c);
            const auto plain = host_gemm<LogPlus>(a, b, c);
            EXPECT_TRUE(log_close("C", reference_gemm<T>(Semiring::LogPlus, a, b, c), plain));
            EXPECT_TRUE(no_negative_zero(plain));
            c = log_special_matrix<T>(rng, s.m, s.n, g.c, 0.5);
            const auto accumulated = host_gemm<LogPlus>(a, b, c, {.accumulate = true});
            EXPECT_TRUE(log_close("accumulated C", reference_gemm<T>(Semiring::LogPlus, a, b, c, true), accumulated));
            EXPECT_TRUE(no_negative_zero(accumulated));
        }
    }
}

// Literal cases worked out by hand, on a 1 x 3 times 3 x 1 product.
TYPED_TEST(CpuLogPlus, HandWorkedCases) {
    using T = TypeParam;
    constexpr T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    const auto one = [](std::vector<T> av, std::vector<T> bv, T old = T(0), bool accumulate = false) {
        auto a = make_matrix<T>(1, static_cast<std::int64_t>(av.size()));
        auto b = make_matrix<T>(static_cast<std::int64_t>(bv.size()), 1);
        for (std::size_t k = 0; k < av.size(); ++k) a(0, static_cast<std::int64_t>(k)) = av[k];
        for (std::size_t k = 0; k < bv.size(); ++k) b(static_cast<std::int64_t>(k), 0) = bv[k];
        auto c = make_matrix<T>(1, 1);
        c(0, 0) = old;
        return host_gemm<LogPlus>(a, b, c, {.accumulate = accumulate})(0, 0);
    };
    EXPECT_EQ(one({-inf, -inf, -inf}, {0, 1, 2}), -inf) << "a sum of zeros";
    EXPECT_EQ(one({1, 2, 3}, {-inf, -inf, -inf}), -inf);
    EXPECT_EQ(one({inf, 0, 0}, {1, 1, 1}), inf);
    EXPECT_TRUE(std::isnan(one({inf, 0, 0}, {-inf, 1, 1}))) << "+inf + -inf is a NaN term";
    EXPECT_TRUE(std::isnan(one({inf, nan, 0}, {0, 0, 0}))) << "a NaN after +inf is still NaN";
    EXPECT_TRUE(std::isnan(one({nan, inf, 0}, {0, 0, 0})));
    EXPECT_TRUE(std::isnan(one({nan, 0, 0}, {-inf, 0, 0}))) << "NaN + -inf is NaN";
    EXPECT_FALSE(std::signbit(one({-0.0, -inf, -inf}, {-0.0, 0, 0}))) << "exp(-0) = 1: log 1 = +0";
    EXPECT_EQ(one({-0.0, -inf, -inf}, {-0.0, 0, 0}), T(0));
    EXPECT_NEAR(static_cast<double>(one({0, 0, 0}, {0, 0, 0})), std::log(3.0), 1e-7);
    EXPECT_EQ(one({1000, 0, -1000}, {0, 0, 0}), T(1000)) << "the others vanish beside e^1000";
    EXPECT_EQ(one({-inf}, {0}, T(-0.0), true), T(0));
    EXPECT_FALSE(std::signbit(one({-inf}, {0}, T(-0.0), true))) << "an old -0 is read as +0";
    EXPECT_EQ(one({-inf}, {0}, inf, true), inf);
    EXPECT_TRUE(std::isnan(one({-inf}, {0}, nan, true)));
    EXPECT_TRUE(std::isnan(one({inf}, {0}, nan, true)));
    EXPECT_EQ(one({1}, {-inf}, -inf, true), -inf);
    EXPECT_NEAR(static_cast<double>(one({1}, {1}, T(2), true)), 2 + std::log(2.0), 1e-6);
    constexpr T past = std::is_same_v<T, float> ? inf : T(4e38);
    EXPECT_EQ(one({T(2e38)}, {T(2e38)}), past) << "past the largest float";
    EXPECT_NEAR(static_cast<double>(one({T(1e30), T(1e30)}, {T(-1e30), T(-1e30)})), std::log(2.0), 1e-6)
        << "large inputs take the scalar path";
}

// K = 0: every output is -inf; accumulating leaves C (read -0 as +0).
TYPED_TEST(CpuLogPlus, EmptySumsGiveTheZero) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    for (const Shape s : {Shape{5, 7, 0}, Shape{70, 40, 0}}) {
        const Geometries g = layout_combination(6, 1);
        const auto a = make_matrix<T>(s.m, 0, g.a);
        const auto b = make_matrix<T>(0, s.n, g.b);
        auto c = make_matrix<T>(s.m, s.n, g.c);
        auto zeros = c;
        zeros.fill([] { return -std::numeric_limits<T>::infinity(); });
        EXPECT_TRUE(exactly_equal("C", zeros, host_gemm<LogPlus>(a, b, c)));
        c = log_special_matrix<T>(rng, s.m, s.n, g.c, 0.5);
        EXPECT_TRUE(exactly_equal("accumulated C", reference_gemm<T>(Semiring::LogPlus, a, b, c, true),
                                  host_gemm<LogPlus>(a, b, c, {.accumulate = true})));
    }
}

// Every layout of A, B and C with padded leading dimensions, on the shapes around the tiles, cut
// into tasks on several threads.
TYPED_TEST(CpuLogPlus, EveryLayoutAndShape) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    SplitSmallWork split;
    const std::vector<Shape> shapes = edge_shapes();
    for (int combination = 0; combination < 8; ++combination)
        for (std::size_t i = static_cast<std::size_t>(combination) % 3; i < shapes.size(); i += 3)
            check_random<T>(rng, shapes[i], layout_combination(combination, static_cast<int>(i)), 10.0, {.threads = 3});
}

// Batches: gaps between matrices, A or B broadcast (batch stride 0), through gemm_batched.
TYPED_TEST(CpuLogPlus, BatchesWithBroadcastOperands) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    for (int broadcast = 0; broadcast < 3; ++broadcast) {
        Geometries g = with_count(layout_combination(broadcast * 3 + 1, broadcast), 5);
        g.a.broadcast = broadcast == 1;
        g.b.broadcast = broadcast == 2;
        g.a.gap = 3, g.b.gap = 1, g.c.gap = 2;
        check_random<T>(rng, {13, 21, 40}, g, 20.0, {.batched_api = true});
        check_random<T>(rng, {2, 3, 5}, with_count(g, 1), 20.0, {.batched_api = true});
    }
}

// Every SIMD target this machine runs (AVX-512, AVX2, SSE4, the portable fallback).
TYPED_TEST(CpuLogPlus, EveryTargetMatchesTheReference) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    for (const std::int64_t target : cpu::runnable_targets()) {
        ForcedTarget forced(target);
        SCOPED_TRACE(std::string("target ") + cpu::target_name(target));
        check_random<T>(rng, {19, 37, 300}, layout_combination(3, 1), 100.0);
        const auto a = log_special_matrix<T>(rng, 7, 40, {}, 0.2);
        const auto b = log_special_matrix<T>(rng, 40, 33, {}, 0.2);
        const auto c = make_matrix<T>(7, 33);
        EXPECT_TRUE(log_close("C (special values)", reference_gemm<T>(Semiring::LogPlus, a, b, c),
                              host_gemm<LogPlus>(a, b, c)));
    }
}

}  // namespace
