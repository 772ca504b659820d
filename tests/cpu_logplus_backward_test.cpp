// LogPlus's gradients on the CPU (src/cpu/host_softmax_backward.cpp) against the reference's
// softmax_backward, within a relative tolerance of what the same sums give on magnitudes; the C ABI's
// host functions for LogPlus (the argmax descriptor carries the forward's C); and the refusal of an
// argmax, which LogPlus's (+) does not have.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <tropical/c_api.h>
#include <tropical/error.hpp>
#include <tropical/host.hpp>
#include "support/cpu_gemm.hpp"
#include "support/logplus_cases.hpp"

using namespace tropical;
using namespace tropical::testing;
using ::testing::HasSubstr;

namespace {

template <class T>
class CpuLogPlusBackward : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuLogPlusBackward, FloatTypes);

template <class T>
HostMatrix<T> host_softmax_backward(bool of_a, const HostMatrix<T>& grad_c, const HostMatrix<T>& c,
                                    const HostMatrix<T>& a, const HostMatrix<T>& b, const HostMatrix<T>& grad,
                                    HostLaunch launch = {}) {
    HostMatrix<T> out = launch.accumulate ? grad : poisoned(grad);
    const host::Options options{launch.accumulate, launch.threads};
    if (grad.count == 1 && !launch.batched_api) {
        if (of_a)
            host::gemm_backward_a<LogPlus>(host_view(grad_c), host_view(c), host_view(a), host_view(b), host_view(out),
                                           options);
        else
            host::gemm_backward_b<LogPlus>(host_view(grad_c), host_view(c), host_view(a), host_view(b), host_view(out),
                                           options);
    } else if (of_a) {
        host::gemm_batched_backward_a<LogPlus>(host_batched(grad_c), host_batched(c), host_batched(a), host_batched(b),
                                               host_batched(out), grad.count, options);
    } else {
        host::gemm_batched_backward_b<LogPlus>(host_batched(grad_c), host_batched(c), host_batched(a), host_batched(b),
                                               host_batched(out), grad.count, options);
    }
    return out;
}

// The gradient of A or B from random operands (with -inf now and then when `zeros`) and the
// reference's forward C, plain and accumulated, against the reference.
template <class T>
void check_backward(Rng& rng, bool of_a, const Shape& s, const Geometries& g, bool zeros, HostLaunch launch = {}) {
    SCOPED_TRACE(describe(s) + "; " + describe(g) + (of_a ? "; grad_A" : "; grad_B"));
    auto a = uniform_matrix<T>(rng, s.m, s.k, g.a, 3.0);
    auto b = uniform_matrix<T>(rng, s.k, s.n, g.b, 3.0);
    if (zeros) {
        a.fill([&] { return rng.chance(0.2) ? -std::numeric_limits<T>::infinity() : T(rng.real(-3, 3)); });
        b.fill([&] { return rng.chance(0.1) ? -std::numeric_limits<T>::infinity() : T(rng.real(-3, 3)); });
    }
    const auto c = reference_gemm<T>(Semiring::LogPlus, a, b, make_matrix<T>(s.m, s.n, g.c));
    const auto grad_c = random_gradient<T>(rng, s.m, s.n, g.c);
    for (const bool accumulate : {false, true}) {
        auto grad = of_a ? random_gradient<T>(rng, s.m, s.k, g.a) : random_gradient<T>(rng, s.k, s.n, g.b);
        HostMatrix<T> expected = grad, scale = magnitudes(grad);
        if (!accumulate)
            grad.for_each([&](std::int64_t n, std::int64_t i, std::int64_t j) {
                expected.at(n, i, j) = scale.at(n, i, j) = T(0);
            });
        const auto abs_grad_c = magnitudes(grad_c);
        for (std::int64_t n = 0; n < grad.count; ++n) {
            reference::softmax_backward<T>(of_a, grad_c.view(n), c.view(n), a.view(n), b.view(n), expected.view(n));
            reference::softmax_backward<T>(of_a, abs_grad_c.view(n), c.view(n), a.view(n), b.view(n), scale.view(n));
        }
        HostLaunch l = launch;
        l.accumulate = accumulate;
        EXPECT_TRUE(close(accumulate ? "accumulated gradient" : "gradient", expected,
                          host_softmax_backward(of_a, grad_c, c, a, b, grad, l), scale, backward_rtol<T>()));
    }
}

TYPED_TEST(CpuLogPlusBackward, GradientsMatchTheReference) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    SplitSmallWork split;
    const std::vector<Shape> shapes = {{1, 1, 1}, {3, 17, 5}, {17, 3, 63}, {63, 65, 16}, {30, 20, 129}};
    for (std::size_t i = 0; i < shapes.size(); ++i)
        for (const bool of_a : {true, false}) {
            const Geometries g = layout_combination(static_cast<int>(i * 2 + of_a) % 8, static_cast<int>(i));
            check_backward<T>(rng, of_a, shapes[i], g, /*zeros=*/i % 2 == 1, {.threads = 3});
        }
}

TYPED_TEST(CpuLogPlusBackward, BatchedGradients) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    for (const bool of_a : {true, false})
        check_backward<T>(rng, of_a, {7, 9, 11}, with_count(layout_combination(of_a ? 5 : 2, 1), 3), true,
                          {.batched_api = true});
}

// A term of -inf has no share, even where its result is -inf too (a whole row of -inf).
TEST(CpuLogPlusBackwardCases, TermsOfMinusInfinityGetNothing) {
    constexpr float inf = std::numeric_limits<float>::infinity();
    std::vector<float> a = {-inf, 0.0f, -inf, -inf}, b = {1.0f, 2.0f, 0.5f, 0.25f}, c(4), gc = {1, 1, 1, 1},
                       ga(4, 99.0f), gb(4, 99.0f);
    const auto view = [](std::vector<float>& v) { return row_major(v.data(), 2, 2); };
    const auto in = [](const std::vector<float>& v) { return row_major(v.data(), 2, 2); };
    host::gemm<LogPlus>(in(a), in(b), view(c));
    EXPECT_EQ(c[2], -inf);
    EXPECT_EQ(c[3], -inf);
    host::gemm_backward_a<LogPlus>(in(gc), in(c), in(a), in(b), view(ga));
    host::gemm_backward_b<LogPlus>(in(gc), in(c), in(a), in(b), view(gb));
    EXPECT_EQ(ga[0], 0.0f);
    EXPECT_NEAR(ga[1], 2.0f, 1e-6f) << "A[0,1] is the only finite term of both results of row 0";
    EXPECT_EQ(ga[2], 0.0f);
    EXPECT_EQ(ga[3], 0.0f);
    EXPECT_EQ(gb[0], 0.0f);
    EXPECT_EQ(gb[1], 0.0f);
    EXPECT_NEAR(gb[2], 1.0f, 1e-6f);
    EXPECT_NEAR(gb[3], 1.0f, 1e-6f);
}

std::string last_message() { return tropical_last_error_message(); }

tropical_matrix descriptor(const void* data, int64_t rows, int64_t cols) {
    return {data, rows, cols, cols, TROPICAL_ROW_MAJOR, 0};
}

// The C ABI: the product, and the gradients with the forward's C in the argmax descriptor.
TEST(CpuLogPlusCApi, ProductAndGradients) {
    std::vector<double> a(4 * 3), b(3 * 5), c(4 * 5), gc(4 * 5, 1.0), ga(4 * 3), gb(3 * 5);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 7) - 2.5;
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 5) * 1.5;
    const tropical_matrix da = descriptor(a.data(), 4, 3), db = descriptor(b.data(), 3, 5),
                          dc = descriptor(c.data(), 4, 5), dgc = descriptor(gc.data(), 4, 5),
                          dga = descriptor(ga.data(), 4, 3), dgb = descriptor(gb.data(), 3, 5);
    ASSERT_EQ(tropical_host_gemm(TROPICAL_LOGPLUS, TROPICAL_F64, &da, &db, &dc, 1, nullptr), TROPICAL_SUCCESS)
        << last_message();
    for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t j = 0; j < 5; ++j) {
            double sum = 0;
            for (std::int64_t k = 0; k < 3; ++k)
                sum += std::exp(a[static_cast<std::size_t>(i * 3 + k)] + b[static_cast<std::size_t>(k * 5 + j)]);
            EXPECT_NEAR(c[static_cast<std::size_t>(i * 5 + j)], std::log(sum), 1e-12);
        }
    ASSERT_EQ(tropical_host_gemm_backward_a(TROPICAL_LOGPLUS, TROPICAL_F64, &dgc, &dc, &da, &db, &dga, 1, nullptr),
              TROPICAL_SUCCESS)
        << last_message();
    ASSERT_EQ(tropical_host_gemm_backward_b(TROPICAL_LOGPLUS, TROPICAL_F64, &dgc, &dc, &da, &db, &dgb, 1, nullptr),
              TROPICAL_SUCCESS)
        << last_message();
    // A gradient of 1 on every result: each result's shares sum to 1, so each gradient sums to M x N.
    double total_a = 0, total_b = 0;
    for (const double x : ga) total_a += x;
    for (const double x : gb) total_b += x;
    EXPECT_NEAR(total_a, 20.0, 1e-12);
    EXPECT_NEAR(total_b, 20.0, 1e-12);
    EXPECT_EQ(tropical_host_gemm_backward_a(TROPICAL_LOGPLUS, TROPICAL_F64, &dgc, &dc, nullptr, &db, &dga, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("descriptor a is NULL"));
}

// No argmax: refused by the C ABI and the C++ API alike, with a message that names logplus.
TEST(CpuLogPlusCApi, ArgmaxIsRefused) {
    std::vector<float> a(4 * 3), b(3 * 5), c(4 * 5);
    std::vector<std::int32_t> argmax(4 * 5);
    const tropical_matrix da = descriptor(a.data(), 4, 3), db = descriptor(b.data(), 3, 5),
                          dc = descriptor(c.data(), 4, 5), dm = descriptor(argmax.data(), 4, 5);
    EXPECT_EQ(tropical_host_gemm_argmax(TROPICAL_LOGPLUS, TROPICAL_F32, &da, &db, &dc, &dm, 1, nullptr),
              TROPICAL_UNSUPPORTED);
    EXPECT_THAT(last_message(), HasSubstr("logplus"));
    EXPECT_THAT(last_message(), HasSubstr("no argmax"));
    try {
        host::gemm_with_argmax<LogPlus>(row_major<const float>(a.data(), 4, 3), row_major<const float>(b.data(), 3, 5),
                                        row_major(c.data(), 4, 5), row_major(argmax.data(), 4, 5));
        ADD_FAILURE() << "an argmax of LogPlus was not refused";
    } catch (const Unsupported& e) {
        EXPECT_THAT(e.what(), HasSubstr("logplus"));
    }
    EXPECT_EQ(tropical_host_gemm(TROPICAL_LOGPLUS, TROPICAL_I32, &da, &db, &dc, 1, nullptr), TROPICAL_UNSUPPORTED);
}

}  // namespace
