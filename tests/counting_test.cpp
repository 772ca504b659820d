// The counting semiring without a GPU: the reference on hand-made cases (ties, -inf, +inf, NaN,
// K = 0, accumulate), the host path and the C ABI's host entry point against the reference on fresh
// random inputs with many ties and edge values, every layout of the six matrices, odd shapes and
// broadcast batches; the errors of misuse; and the kernel choice (never split-K).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <tropical/c_api.h>
#include <tropical/counting.hpp>
#include <tropical/error.hpp>
#include <tropical/kernels.hpp>
#include "catalogue/catalogue.hpp"
#include "cpu/host.hpp"
#include "gemm/plan.hpp"
#include "reference/reference.hpp"
#include "support/counting_cases.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One row of A times one column of B through the reference: (value, count).
std::pair<double, double> dot(std::vector<double> av, std::vector<double> ac, std::vector<double> bv,
                              std::vector<double> bc) {
    const auto k = static_cast<std::int64_t>(av.size());
    double cv = 99, cc = 99;
    reference::counting_gemm<double>({av.data(), 1, k, k, 1}, {ac.data(), 1, k, k, 1}, {bv.data(), k, 1, 1, 1},
                                     {bc.data(), k, 1, 1, 1}, {&cv, 1, 1, 1, 1}, {&cc, 1, 1, 1, 1});
    return {cv, cc};
}

TEST(CountingReference, TiesAddTheirCountsAndTheLargestValueWins) {
    // Terms: (1+2, 2*3) = (3, 6), (0+3, 1*1) = (3, 1), (2+0, 5*1) = (2, 5): two tie at 3.
    EXPECT_EQ(dot({1, 0, 2}, {2, 1, 5}, {2, 3, 0}, {3, 1, 1}), std::make_pair(3.0, 7.0));
    // A single best term keeps its own count, however many lesser ones there are.
    EXPECT_EQ(dot({5, 1, 1}, {2, 9, 9}, {0, 0, 0}, {2, 9, 9}), std::make_pair(5.0, 4.0));
    // A term of count 0 still sets the value (counts are taken as given).
    EXPECT_EQ(dot({4, 1}, {0, 1}, {0, 0}, {1, 1}), std::make_pair(4.0, 0.0));
}

TEST(CountingReference, InfinitiesFollowTheDocumentedRules) {
    // K = 0: the zero (-inf, 0).
    EXPECT_EQ(dot({}, {}, {}, {}), std::make_pair(-kInf, 0.0));
    // Every term -inf: count 0 whatever the counts said, inf and NaN counts included.
    EXPECT_EQ(dot({-kInf, 1}, {3, kInf}, {0, -kInf}, {2, kNaN}), std::make_pair(-kInf, 0.0));
    // A -inf term does not add to a finite maximum.
    EXPECT_EQ(dot({-kInf, 1}, {3, 2}, {0, 0}, {2, 1}), std::make_pair(1.0, 2.0));
    // +inf terms tie with each other and add their counts.
    EXPECT_EQ(dot({kInf, kInf, 7}, {1, 2, 1}, {0, 1, 0}, {1, 1, 1}), std::make_pair(kInf, 3.0));
    // -inf + +inf is NaN, and NaN wins: (NaN, NaN).
    const auto nan_term = dot({-kInf, 5}, {1, 1}, {kInf, 0}, {1, 1});
    EXPECT_TRUE(std::isnan(nan_term.first) && std::isnan(nan_term.second));
    const auto nan_input = dot({5, kNaN, 5}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1});
    EXPECT_TRUE(std::isnan(nan_input.first) && std::isnan(nan_input.second));
    // -0 is read and written as +0.
    const auto zero = dot({-0.0}, {1}, {-0.0}, {1});
    EXPECT_FALSE(std::signbit(zero.first));
    EXPECT_EQ(zero.second, 1.0);
}

TEST(CountingReference, AccumulateAddsToAnEqualOldValueOnly) {
    double av = 1, ac = 2, bv = 1, bc = 3;
    auto run = [&](double old_value, double old_count) {
        double cv = old_value, cc = old_count;
        reference::counting_gemm<double>({&av, 1, 1, 1, 1}, {&ac, 1, 1, 1, 1}, {&bv, 1, 1, 1, 1}, {&bc, 1, 1, 1, 1},
                                         {&cv, 1, 1, 1, 1}, {&cc, 1, 1, 1, 1}, true);
        return std::make_pair(cv, cc);
    };
    EXPECT_EQ(run(2, 4), std::make_pair(2.0, 10.0));     // tie: 4 + 2 * 3
    EXPECT_EQ(run(5, 4), std::make_pair(5.0, 4.0));      // the old value wins
    EXPECT_EQ(run(1, 4), std::make_pair(2.0, 6.0));      // the product wins
    EXPECT_EQ(run(-kInf, 9), std::make_pair(2.0, 6.0));  // an old -inf is the zero
    EXPECT_TRUE(std::isnan(run(kNaN, 1).second));
}

// ---------------------------------------------------------------------------------------------
// The host path and the C ABI's host entry point against the reference.

const std::vector<CountingShape> kShapes = {
    {1, 1, 1}, {7, 5, 3}, {33, 17, 9}, {5, 9, 0}, {1, 40, 65}, {19, 1, 7}, {0, 4, 3}, {6, 7, 5, 4}, {9, 3, 11, 3},
};

enum class Path { Host, CAbi };

template <class T>
CountingMatrix<T> run_path(Path path, const CountingCase<T>& t, int threads) {
    CountingMatrix<T> c = t.c;
    if (path == Path::Host) {
        tropical::host::Options o;
        o.accumulate = t.accumulate;
        o.threads = threads;
        auto bv = [](auto& m) {
            return BatchedView<std::remove_reference_t<decltype(m.storage[0])>>{
                {m.storage.data(), m.rows, m.cols, m.ld, m.layout}, m.batch_stride};
        };
        tropical::host::counting_gemm_batched<T>(bv(t.a.values), bv(t.a.counts), bv(t.b.values), bv(t.b.counts),
                                                 bv(c.values), bv(c.counts), t.batch, o);
        return c;
    }
    auto desc = [](const auto& m) {
        return tropical_matrix{m.storage.data(),
                               m.rows,
                               m.cols,
                               m.ld,
                               m.layout == Layout::RowMajor ? TROPICAL_ROW_MAJOR : TROPICAL_COL_MAJOR,
                               m.batch_stride};
    };
    const tropical_matrix av = desc(t.a.values), ac = desc(t.a.counts), bv = desc(t.b.values), bc = desc(t.b.counts);
    const tropical_matrix cv = desc(c.values), cc = desc(c.counts);
    const tropical_host_options o{t.accumulate ? 1 : 0, threads};
    const tropical_status status = tropical_host_counting_gemm(std::is_same_v<T, float> ? TROPICAL_F32 : TROPICAL_F64,
                                                               &av, &ac, &bv, &bc, &cv, &cc, t.batch, &o);
    EXPECT_EQ(status, TROPICAL_SUCCESS) << tropical_last_error_message();
    return c;
}

template <class T>
class CountingHost : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CountingHost, ValueTypes);

TYPED_TEST(CountingHost, MatchesTheReferenceOnEveryLayoutShapeAndEdgeValue) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    cpu::set_work_per_thread_scale(0);  // small products cut into tasks too
    int salt = 0;
    for (const Path path : {Path::Host, Path::CAbi})
        for (const auto& s : kShapes)
            for (int combination = 0; combination < 64; combination += (path == Path::Host ? 1 : 7)) {
                const bool broadcast = s.batch > 1 && combination % 2 == 0;
                const bool accumulate = combination % 3 == 1;
                const bool edges = combination % 4 != 0;
                SCOPED_TRACE(describe(s, combination, broadcast, accumulate) +
                             (path == Path::Host ? " host" : " C ABI"));
                const auto g = counting_geometry(combination, ++salt, s.batch, broadcast);
                const auto t = make_counting_case<T>(rng, s, g, edges, accumulate);
                ASSERT_TRUE(counting_matches(t, run_path(path, t, 1 + combination % 3)));
            }
    cpu::set_work_per_thread_scale(1);
}

TYPED_TEST(CountingHost, LargerProductsOnEveryThread) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    const CountingShape s{70, 45, 130, 2};
    const auto t = make_counting_case<T>(rng, s, counting_geometry(37, 1, s.batch, true), true, false);
    ASSERT_TRUE(counting_matches(t, run_path(Path::Host, t, 0)));
}

// ---------------------------------------------------------------------------------------------
// Misuse.

TEST(CountingErrors, ScalarEntryPointsRefuseTheCountingSemiring) {
    float a = 1, b = 1, c = 0;
    const tropical_matrix m{&a, 1, 1, 1, TROPICAL_ROW_MAJOR, 0}, mb{&b, 1, 1, 1, TROPICAL_ROW_MAJOR, 0},
        mc{&c, 1, 1, 1, TROPICAL_ROW_MAJOR, 0};
    EXPECT_EQ(tropical_host_gemm(TROPICAL_COUNTING, TROPICAL_F32, &m, &mb, &mc, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_NE(std::string(tropical_last_error_message()).find("tropical_counting_gemm"), std::string::npos)
        << tropical_last_error_message();
    EXPECT_STREQ(tropical_semiring_name(TROPICAL_COUNTING), "counting");
}

TEST(CountingErrors, ContractionsOfScalarTensorsRefuseIt) {
    float a = 1, b = 1, c = 0;
    const std::int64_t size = 1, stride = 1;
    const std::int32_t i = 0, j = 1;
    const tropical_tensor ta{&a, 1, &size, &stride, &i}, tb{&b, 1, &size, &stride, &j};
    const tropical_tensor tc{&c, 0, nullptr, nullptr, nullptr};
    EXPECT_EQ(tropical_host_contract(TROPICAL_COUNTING, TROPICAL_F32, &ta, &tb, &tc, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    // It names the counting contraction, which takes each tensor's values and counts.
    EXPECT_NE(std::string(tropical_last_error_message()).find("tropical_counting_contract"), std::string::npos)
        << tropical_last_error_message();
}

TEST(CountingErrors, BadOperandsAreNamed) {
    std::vector<double> v(12, 1.0), cnt(12, 1.0), out_v(12), out_c(12);
    const tropical_matrix a{v.data(), 3, 4, 4, TROPICAL_ROW_MAJOR, 0}, ac{cnt.data(), 3, 4, 4, TROPICAL_ROW_MAJOR, 0};
    const tropical_matrix b{v.data(), 4, 3, 3, TROPICAL_ROW_MAJOR, 0}, bc{cnt.data(), 4, 3, 3, TROPICAL_ROW_MAJOR, 0};
    const tropical_matrix c{out_v.data(), 3, 3, 3, TROPICAL_ROW_MAJOR, 0};
    const tropical_matrix cc{out_c.data(), 3, 3, 3, TROPICAL_ROW_MAJOR, 0};
    const tropical_matrix wrong_count{cnt.data(), 4, 4, 4, TROPICAL_ROW_MAJOR, 0};
    auto message = [] { return std::string(tropical_last_error_message()); };
    EXPECT_EQ(tropical_host_counting_gemm(TROPICAL_F64, &a, &ac, &b, &bc, &c, &cc, 1, nullptr), TROPICAL_SUCCESS);
    EXPECT_EQ(out_v[0], 2.0);
    EXPECT_EQ(out_c[0], 4.0);  // four k tie at 1 + 1
    EXPECT_EQ(tropical_host_counting_gemm(TROPICAL_F64, &a, &wrong_count, &b, &bc, &c, &cc, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_NE(message().find("A_count is 4x4 but must be 3x4"), std::string::npos) << message();
    EXPECT_EQ(tropical_host_counting_gemm(TROPICAL_F64, &a, nullptr, &b, &bc, &c, &cc, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_NE(message().find("a_counts is NULL"), std::string::npos) << message();
    EXPECT_EQ(tropical_host_counting_gemm(TROPICAL_I32, &a, &ac, &b, &bc, &c, &cc, 1, nullptr), TROPICAL_UNSUPPORTED);
    EXPECT_NE(message().find("f32 or f64"), std::string::npos) << message();
    // The counts of C must not share memory with C's values.
    EXPECT_EQ(tropical_host_counting_gemm(TROPICAL_F64, &a, &ac, &b, &bc, &c, &c, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_NE(message().find("overlaps"), std::string::npos) << message();
}

// The device entry point validates before it touches a GPU, so its errors show here too.
TEST(CountingErrors, TheDeviceEntryPointValidatesFirst) {
    std::vector<float> v(12, 1.0f), out_v(12);
    std::vector<double> cnt(12, 1.0), out_c(12);
    const tropical_matrix a{v.data(), 3, 4, 4, TROPICAL_ROW_MAJOR, 0}, ac{cnt.data(), 3, 4, 4, TROPICAL_ROW_MAJOR, 0};
    const tropical_matrix b{v.data(), 4, 3, 3, TROPICAL_ROW_MAJOR, 0}, bc{cnt.data(), 4, 2, 2, TROPICAL_ROW_MAJOR, 0};
    const tropical_matrix c{out_v.data(), 3, 3, 3, TROPICAL_ROW_MAJOR, 0};
    const tropical_matrix cc{out_c.data(), 3, 3, 3, TROPICAL_ROW_MAJOR, 0};
    auto message = [] { return std::string(tropical_last_error_message()); };
    EXPECT_EQ(tropical_counting_gemm(TROPICAL_F32, &a, &ac, &b, &bc, &c, &cc, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_NE(message().find("B_count is 4x2 but must be 4x3"), std::string::npos) << message();
    EXPECT_EQ(tropical_counting_gemm(TROPICAL_I64, &a, &ac, &b, &bc, &c, &cc, 1, nullptr), TROPICAL_UNSUPPORTED);
    EXPECT_EQ(tropical_counting_gemm(TROPICAL_F32, &a, &ac, &b, &bc, &c, nullptr, 1, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_NE(message().find("c_counts is NULL"), std::string::npos) << message();
    EXPECT_EQ(tropical_counting_gemm(TROPICAL_F32, &a, &ac, &b, &bc, &c, &cc, -1, nullptr), TROPICAL_INVALID_ARGUMENT);
}

TEST(CountingErrors, TheCppEntryPointsValidateToo) {
    std::vector<float> v(4, 0.0f), out(4);
    std::vector<double> cnt(4, 1.0), out_c(2);
    const MatrixView<const float> a{v.data(), 2, 2, 2, Layout::RowMajor};
    const MatrixView<const double> ac{cnt.data(), 2, 2, 2, Layout::RowMajor};
    EXPECT_THROW(tropical::host::counting_gemm<float>(a, ac, a, ac, MatrixView<float>{out.data(), 2, 2, 2},
                                                      MatrixView<double>{out_c.data(), 2, 1, 1}),
                 InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// The kernel choice: every counting request gets a counting row of its type, never split-K.

TEST(CountingPlan, ChoosesTiledBatchedOrSmallNeverSplitK) {
    detail::Request q;
    q.semiring = Semiring::Counting;
    q.with_counts = true;
    struct Case {
        detail::Shape shape;
        std::int64_t batch;
        KernelVariant expected;
    };
    const Case cases[] = {
        {{4096, 4096, 4096}, 1, KernelVariant::Tiled}, {{256, 256, 1 << 20}, 1, KernelVariant::Small},
        {{64, 64, 64}, 200, KernelVariant::Batched},   {{40, 50, 60}, 1, KernelVariant::Small},
        {{2, 2, 2}, 100000, KernelVariant::Small},     {{1024, 1024, 65536}, 1, KernelVariant::Batched},
    };
    for (const DType t : {DType::F32, DType::F64})
        for (const auto& c : cases) {
            q.dtype = t;
            q.batch = c.batch;
            const detail::Choice choice = detail::choose_kernel(q, c.shape, {132, 0});
            EXPECT_EQ(choice.kernel->variant, c.expected) << c.shape.m << "x" << c.shape.n << "x" << c.shape.k;
            EXPECT_EQ(choice.k_splits, 1);
            EXPECT_EQ(choice.kernel->semiring, Semiring::Counting);
            EXPECT_EQ(choice.kernel->dtype, t);
        }
    EXPECT_EQ(find_kernel(KernelOperation::Gemm, KernelVariant::SplitK, DType::F32, Semiring::Counting), nullptr);
}

}  // namespace
