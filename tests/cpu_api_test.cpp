// The CPU path's entry points: the C ABI's tropical_host_* (the same descriptors, statuses and
// messages as the device functions, validated by the same code) and tropical/host.hpp (the same
// exceptions), the thread count, the SIMD target's name, and several threads calling at once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <tropical/c_api.h>
#include <tropical/error.hpp>
#include <tropical/host.hpp>
#include "support/cpu_gemm.hpp"

using namespace tropical;
using namespace tropical::testing;
using ::testing::HasSubstr;

namespace {

std::string last_message() { return tropical_last_error_message(); }

tropical_matrix descriptor(const void* data, int64_t rows, int64_t cols, int32_t layout = TROPICAL_ROW_MAJOR) {
    return {data, rows, cols, layout == TROPICAL_ROW_MAJOR ? cols : rows, layout, 0};
}

// A small f32 problem in host memory.
struct Problem {
    std::vector<float> a = std::vector<float>(4 * 3), b = std::vector<float>(3 * 5), c = std::vector<float>(4 * 5);
    std::vector<std::int32_t> argmax = std::vector<std::int32_t>(4 * 5);
    tropical_matrix da = descriptor(a.data(), 4, 3), db = descriptor(b.data(), 3, 5), dc = descriptor(c.data(), 4, 5),
                    dm = descriptor(argmax.data(), 4, 5);
    Problem() {
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 2.5f;
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 1.5f;
    }
};

TEST(CpuCApi, ProductsEqualTheCxxApi) {
    Problem p;
    const tropical_host_options one_thread{0, 1};
    ASSERT_EQ(tropical_host_gemm_argmax(TROPICAL_MINPLUS, TROPICAL_F32, &p.da, &p.db, &p.dc, &p.dm, 1, &one_thread),
              TROPICAL_SUCCESS)
        << last_message();
    std::vector<float> c(p.c.size());
    std::vector<std::int32_t> argmax(p.argmax.size());
    host::gemm_with_argmax<MinPlus>(row_major<const float>(p.a.data(), 4, 3), row_major<const float>(p.b.data(), 3, 5),
                                    row_major(c.data(), 4, 5), row_major(argmax.data(), 4, 5));
    EXPECT_EQ(c, p.c);
    EXPECT_EQ(argmax, p.argmax);
    // Accumulating into the same C changes nothing: C (+) C = C.
    const tropical_host_options accumulate{1, 0};
    ASSERT_EQ(tropical_host_gemm(TROPICAL_MINPLUS, TROPICAL_F32, &p.da, &p.db, &p.dc, 1, &accumulate),
              TROPICAL_SUCCESS);
    EXPECT_EQ(c, p.c);
    EXPECT_EQ(tropical_host_gemm(TROPICAL_MINPLUS, TROPICAL_F32, &p.da, &p.db, &p.dc, 1, nullptr), TROPICAL_SUCCESS);
    EXPECT_EQ(c, p.c);
    EXPECT_EQ(last_message(), "");
}

TEST(CpuCApi, BackwardRoutesTheGradient) {
    Problem p;
    ASSERT_EQ(tropical_host_gemm_argmax(TROPICAL_MAXPLUS, TROPICAL_F32, &p.da, &p.db, &p.dc, &p.dm, 1, nullptr),
              TROPICAL_SUCCESS);
    std::vector<float> ones(4 * 5, 1.0f), grad_a(4 * 3, -7.0f);
    const tropical_matrix dg = descriptor(ones.data(), 4, 5), dga = descriptor(grad_a.data(), 4, 3, TROPICAL_COL_MAJOR);
    ASSERT_EQ(
        tropical_host_gemm_backward_a(TROPICAL_MAXPLUS, TROPICAL_F32, &dg, &p.dm, nullptr, nullptr, &dga, 1, nullptr),
        TROPICAL_SUCCESS)
        << last_message();
    float total = 0;
    for (const float x : grad_a) total += x;
    EXPECT_EQ(total, 20.0f) << "every one of the 20 outputs routes its gradient of 1 to A";
}

// MaxMin routes each gradient to the operand whose value the term took, so it reads both; the
// total is still one per output.
TEST(CpuCApi, BottleneckBackwardReadsBothOperands) {
    Problem p;
    ASSERT_EQ(tropical_host_gemm_argmax(TROPICAL_MAXMIN, TROPICAL_F32, &p.da, &p.db, &p.dc, &p.dm, 1, nullptr),
              TROPICAL_SUCCESS);
    std::vector<float> ones(4 * 5, 1.0f), grad_a(4 * 3, -7.0f), grad_b(3 * 5, -7.0f);
    const tropical_matrix dg = descriptor(ones.data(), 4, 5), dga = descriptor(grad_a.data(), 4, 3),
                          dgb = descriptor(grad_b.data(), 3, 5);
    EXPECT_EQ(
        tropical_host_gemm_backward_a(TROPICAL_MAXMIN, TROPICAL_F32, &dg, &p.dm, nullptr, &p.db, &dga, 1, nullptr),
        TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("descriptor a is NULL"));
    ASSERT_EQ(tropical_host_gemm_backward_a(TROPICAL_MAXMIN, TROPICAL_F32, &dg, &p.dm, &p.da, &p.db, &dga, 1, nullptr),
              TROPICAL_SUCCESS)
        << last_message();
    ASSERT_EQ(tropical_host_gemm_backward_b(TROPICAL_MAXMIN, TROPICAL_F32, &dg, &p.dm, &p.da, &p.db, &dgb, 1, nullptr),
              TROPICAL_SUCCESS)
        << last_message();
    float total = 0;
    for (const float x : grad_a) total += x;
    for (const float x : grad_b) total += x;
    EXPECT_EQ(total, 20.0f) << "each of the 20 outputs routes its gradient of 1 to A or to B";
}

TEST(CpuCApi, InvalidRequestsAreRefusedWithTheGpuPathsMessages) {
    Problem p;
    tropical_matrix bad_b = p.db;
    bad_b.rows = 7;
    EXPECT_EQ(tropical_host_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &p.da, &bad_b, &p.dc, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("B is 7x5 but must be 3x5"));
    EXPECT_EQ(tropical_host_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &p.da, &p.db, nullptr, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("descriptor c is NULL"));
    // The first value past the last semiring, whichever that is (7 was unknown before LogPlus).
    const int unknown = static_cast<int>(std::size(all_semirings));
    EXPECT_EQ(
        tropical_host_gemm(static_cast<tropical_semiring>(unknown), TROPICAL_F32, &p.da, &p.db, &p.dc, 1, nullptr),
        TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("unknown semiring (" + std::to_string(unknown) + ")"));
    const tropical_host_options accumulate{1, 0};
    EXPECT_EQ(tropical_host_gemm_argmax(TROPICAL_MAXPLUS, TROPICAL_F32, &p.da, &p.db, &p.dc, &p.dm, 1, &accumulate),
              TROPICAL_UNSUPPORTED);
    EXPECT_THAT(last_message(), HasSubstr("cannot accumulate"));
    const tropical_host_options negative{0, -1};
    EXPECT_EQ(tropical_host_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &p.da, &p.db, &p.dc, 1, &negative),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("threads is -1"));
    // C one element into A's memory: an output must not share memory with another operand.
    std::vector<float> shared(4 * 5);
    const tropical_matrix a_shared = descriptor(shared.data(), 4, 3), c_shared = descriptor(shared.data() + 1, 4, 3);
    const tropical_matrix b33 = descriptor(p.b.data(), 3, 3);
    EXPECT_EQ(tropical_host_gemm(TROPICAL_MAXPLUS, TROPICAL_F32, &a_shared, &b33, &c_shared, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(last_message(), HasSubstr("overlaps"));
    std::vector<std::int32_t> grad_c(4 * 5), grad_a(4 * 3);
    const tropical_matrix dgc = descriptor(grad_c.data(), 4, 5), dga = descriptor(grad_a.data(), 4, 3);
    EXPECT_EQ(
        tropical_host_gemm_backward_a(TROPICAL_MAXPLUS, TROPICAL_I32, &dgc, &p.dm, nullptr, nullptr, &dga, 1, nullptr),
        TROPICAL_UNSUPPORTED);
    EXPECT_THAT(last_message(), HasSubstr("f32 and f64"));
}

TEST(CpuCxxApi, InvalidRequestsThrowTheLibrarysExceptions) {
    std::vector<float> a(12), b(15), c(20);
    EXPECT_THROW(host::gemm<MaxPlus>(row_major<const float>(a.data(), 4, 3), row_major<const float>(b.data(), 5, 3),
                                     row_major(c.data(), 4, 5)),
                 InvalidArgument);
    EXPECT_THROW(host::gemm<MaxPlus>(row_major<const float>(a.data(), 4, 3), row_major<const float>(b.data(), 3, 5),
                                     row_major(c.data(), 4, 5), {.threads = -3}),
                 InvalidArgument);
    try {
        host::gemm<MaxPlus>(row_major<const float>(nullptr, 4, 3), row_major<const float>(b.data(), 3, 5),
                            row_major(c.data(), 4, 5));
        ADD_FAILURE() << "a null A was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_THAT(e.what(), HasSubstr("A is a null pointer"));
    }
}

TEST(CpuCApi, TheSimdTargetIsNamed) {
    const std::string name = tropical_host_simd_target();
    EXPECT_FALSE(name.empty());
    EXPECT_EQ(name, host::simd_target());
    EXPECT_GE(host::default_threads(), 1);
}

// Callers on several threads at once, each asking for every core: one gets the pool, the others
// compute on their own threads, and every result is right.
TEST(CpuCxxApi, ConcurrentCallersGetTheRightResults) {
    TROPICAL_TEST_RNG(rng);
    const Shape s{60, 50, 70};
    const Geometries g = layout_combination(3, 0);
    const auto a = random_matrix<float>(rng, Semiring::MaxPlus, Values::Typical, s.m, s.k, g.a);
    const auto b = random_matrix<float>(rng, Semiring::MaxPlus, Values::Typical, s.k, s.n, g.b);
    const auto c = make_matrix<float>(s.m, s.n, g.c);
    const auto expected = reference_gemm<float>(Semiring::MaxPlus, a, b, c);
    SplitSmallWork split;
    std::vector<int> good(6, 0);
    std::vector<std::thread> callers;
    for (std::size_t t = 0; t < good.size(); ++t)
        callers.emplace_back([&, t] {
            bool all = true;
            for (int round = 0; round < 20; ++round) {
                const auto actual = host_gemm<MaxPlus>(a, b, c, {.threads = 2});
                all = all && actual.storage.size() == expected.storage.size();
                for (std::size_t e = 0; all && e < actual.storage.size(); ++e)
                    all = same_value(expected.storage[e], actual.storage[e]);
            }
            good[t] = all ? 1 : 0;
        });
    for (auto& caller : callers) caller.join();
    for (std::size_t t = 0; t < good.size(); ++t) EXPECT_EQ(good[t], 1) << "caller " << t;
}

}  // namespace
