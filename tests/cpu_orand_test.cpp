// OrAnd on the CPU path (src/cpu/orand.cpp) and through the C ABI's host entry points, against the
// reference: products of bytes and of packed words (garbage in the bits past K), the packing,
// argmax, every layout, K around the word sizes, batches with gaps and broadcasts, accumulate, bool
// elements, one thread and many, on every SIMD target this CPU runs (each forced in turn), at
// densities from all true to none and a single true k at the end; and every refusal: OrAnd on
// numbers, numbers' semirings on booleans, gradients, bad packed shapes, in C++ and as C ABI statuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <tropical/c_api.h>
#include <tropical/error.hpp>
#include <tropical/host.hpp>
#include "cpu/host.hpp"
#include "cpu/targets.hpp"
#include "support/cpu_gemm.hpp"  // ForcedTarget
#include "support/orand_inputs.hpp"

using namespace tropical;
using namespace tropical::testing;
using ::testing::HasSubstr;

namespace {

template <class T>
MatrixView<T> view(HostMatrix<T>& m) {
    return {m.storage.data(), m.rows, m.cols, m.ld, m.layout};
}
template <class T>
BatchedView<T> batched_view(HostMatrix<T>& m) {
    return {view(m), m.batch_stride};
}
template <class T>
BatchedView<const T> batched_in(const HostMatrix<T>& m) {
    return {{m.storage.data(), m.rows, m.cols, m.ld, m.layout}, m.batch_stride};
}

// Every call of a test on many threads too: small problems cut into tasks all the same.
class CpuOrAnd : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override { cpu::set_work_per_thread_scale(GetParam() > 1 ? 0.0 : 1.0); }
    void TearDown() override { cpu::set_work_per_thread_scale(1.0); }
    host::Options options(bool accumulate = false) const { return {accumulate, GetParam()}; }
};

// A product of bytes, and of their packed words, equal to the reference's (C and argmax); every
// output starts poisoned (C holds old values where accumulating).
void check_problem(Rng& rng, OrAndProblem x, const Geometries& g, host::Options options, const std::string& trace) {
    SCOPED_TRACE(trace + " M=" + std::to_string(x.c.rows) + " N=" + std::to_string(x.c.cols) +
                 " K=" + std::to_string(x.a.cols) + "; " + describe(g));
    const std::int64_t k = x.a.cols;
    if (options.accumulate)
        x.c.fill([&] { return static_cast<std::uint8_t>(rng.chance(0.3) ? rng.integer(1, 9) : 0); });
    const auto want = reference_orand(x.a, x.b, x.c, options.accumulate);
    const auto [want_c, want_argmax] = reference_orand_argmax(x.a, x.b, x.c, x.argmax);
    const std::int64_t count = g.c.count;
    const auto wa = packed_words(x.a, PackAs::A, words_geometry(g.a, 1), &rng);
    const auto wb = packed_words(x.b, PackAs::B, words_geometry(g.b, 3), &rng);

    auto c = x.c;
    host::gemm_batched<OrAnd>(batched_in(x.a), batched_in(x.b), batched_view(c), count, options);
    EXPECT_TRUE(exactly_equal("C of bytes", want, c));
    c = x.c;
    host::gemm_packed_batched<OrAnd>(batched_in(wa), batched_in(wb), k, batched_view(c), count, options);
    EXPECT_TRUE(exactly_equal("C of words", want, c));
    if (options.accumulate) return;
    auto argmax = x.argmax;
    c = x.c;
    host::gemm_batched_with_argmax<OrAnd>(batched_in(x.a), batched_in(x.b), batched_view(c), batched_view(argmax),
                                          count, options);
    EXPECT_TRUE(exactly_equal("C of bytes, with argmax", want_c, c));
    EXPECT_TRUE(exactly_equal("argmax of bytes", want_argmax, argmax));
    argmax = x.argmax;
    c = x.c;
    host::gemm_packed_batched_with_argmax<OrAnd>(batched_in(wa), batched_in(wb), k, batched_view(c),
                                                 batched_view(argmax), count, options);
    EXPECT_TRUE(exactly_equal("C of words, with argmax", want_c, c));
    EXPECT_TRUE(exactly_equal("argmax of words", want_argmax, argmax));
}

void check(Rng& rng, std::int64_t m, std::int64_t n, std::int64_t k, const Geometries& g, double density,
           host::Options options, const char* trace) {
    check_problem(rng, orand_problem(rng, m, n, k, density, g), g, options, trace);
}

// How true the inputs are: the chance of a true element, or none true but a few at the last k.
enum class Fill { Half, Twentieth, OnePerK, None, LastK };

const char* name_of(Fill f) {
    switch (f) {
    case Fill::Half: return "density 0.5";
    case Fill::Twentieth: return "density 0.05";
    case Fill::OnePerK: return "density 1/K";
    case Fill::None: return "all false";
    case Fill::LastK: return "true only at the last k";
    }
    return "";
}

OrAndProblem problem_with(Rng& rng, std::int64_t m, std::int64_t n, std::int64_t k, Fill fill, const Geometries& g) {
    const double density = fill == Fill::Half        ? 0.5
                           : fill == Fill::Twentieth ? 0.05
                           : fill == Fill::OnePerK   ? 1.0 / double(std::max<std::int64_t>(k, 1))
                                                     : 0.0;
    OrAndProblem x = orand_problem(rng, m, n, k, density, g);
    if (fill == Fill::LastK && k > 0) {
        // Rows of A true at k - 1 alone: every other one, and the last; columns of B: every third.
        for (std::int64_t b = 0; b < x.a.distinct(); ++b)
            for (std::int64_t i = 0; i < m; ++i)
                if (i % 2 == 0 || i == m - 1) x.a.at(b, i, k - 1) = static_cast<std::uint8_t>(rng.integer(1, 255));
        for (std::int64_t b = 0; b < x.b.distinct(); ++b)
            for (std::int64_t j = 0; j < n; j += 3)
                x.b.at(b, k - 1, j) = static_cast<std::uint8_t>(rng.integer(1, 255));
    }
    return x;
}

TEST_P(CpuOrAnd, EveryTargetDensityAndK) {
    TROPICAL_TEST_RNG(rng);
    const std::int64_t ns[] = {1, 3, 65, 70, 129, 31};
    const Fill fills[] = {Fill::Half, Fill::Twentieth, Fill::OnePerK, Fill::None, Fill::LastK};
    for (const std::int64_t target : cpu::runnable_targets()) {
        ForcedTarget forced(target);
        SCOPED_TRACE(std::string("target ") + cpu::target_name(target));
        int salt = 0;
        for (const std::int64_t k : {1, 3, 31, 32, 33, 63, 64, 65, 127, 129, 200})
            for (const Fill fill : fills) {
                const Geometries g = layout_combination(salt % 8, salt);
                const std::int64_t m = 1 + 2 * (salt % 9), n = ns[salt % 6];
                ++salt;
                check_problem(rng, problem_with(rng, m, n, k, fill, g), g, options(), name_of(fill));
            }
        // Batches with gaps and a broadcast operand, and accumulating.
        for (int combination = 0; combination < 8; ++combination) {
            Geometries g = with_count(layout_combination(combination, salt++), 3);
            g.a.gap = 5, g.b.gap = 2, g.c.gap = 1, g.argmax.gap = 3;
            g.a.broadcast = combination % 3 == 1;
            g.b.broadcast = combination % 3 == 2;
            const Fill fill = fills[combination % 5];
            const std::int64_t k = combination % 2 ? 129 : 64;
            check_problem(rng, problem_with(rng, 7, 67, k, fill, g), g, options(), name_of(fill));
            check_problem(rng, problem_with(rng, 7, 67, k, fill, g), g, options(true), name_of(fill));
        }
        // K long enough that B's rows are cut into several blocks of columns.
        for (const int combination : {3, 4}) {
            const Geometries g = layout_combination(combination, salt);
            const Fill fill = combination == 3 ? Fill::OnePerK : Fill::LastK;
            check_problem(rng, problem_with(rng, 2, 600, 4500, fill, g), g, options(), name_of(fill));
        }
    }
}

TEST_P(CpuOrAnd, EveryLayoutAndK) {
    TROPICAL_TEST_RNG(rng);
    for (int combination = 0; combination < 8; ++combination)
        for (const std::int64_t k : orand_ks())
            check(rng, 37 + combination, 29 + 3 * combination, k, layout_combination(combination, combination),
                  k > 64 ? 0.02 : 0.2, options(), "");
}

TEST_P(CpuOrAnd, Accumulate) {
    TROPICAL_TEST_RNG(rng);
    for (int combination : {0, 5})
        for (const std::int64_t k : {0, 33, 200})
            check(rng, 20, 31, k, layout_combination(combination), 0.05, options(true), "accumulate");
}

TEST_P(CpuOrAnd, BatchesWithGapsAndBroadcasts) {
    TROPICAL_TEST_RNG(rng);
    for (int combination : {1, 2, 6}) {
        Geometries g = with_count(layout_combination(combination, 3), 4);
        g.a.gap = 2, g.b.gap = 7, g.c.gap = 3, g.argmax.gap = 1;
        g.a.broadcast = combination == 2;
        g.b.broadcast = combination == 6;
        check(rng, 9, 70, 100, g, 0.03, options(), "batched");
    }
}

TEST_P(CpuOrAnd, EdgeValues) {
    TROPICAL_TEST_RNG(rng);
    for (const std::int64_t k : {1, 31, 32, 33, 95}) {
        SCOPED_TRACE("K=" + std::to_string(k));
        const Geometries g = layout_combination(static_cast<int>(k % 8));
        const auto argmax_of = [&](OrAndProblem& x) {
            host::gemm_with_argmax<OrAnd>(view(x.a), view(x.b), view(x.c), view(x.argmax), options());
            const auto [want_c, want_argmax] =
                reference_orand_argmax(x.a, x.b, make_matrix<std::uint8_t>(x.c.rows, x.c.cols, g.c),
                                       make_matrix<std::int32_t>(x.c.rows, x.c.cols, g.argmax));
            EXPECT_TRUE(exactly_equal("C", want_c, x.c));
            EXPECT_TRUE(exactly_equal("argmax", want_argmax, x.argmax));
        };
        OrAndProblem none = orand_problem(rng, 5, 7, k, 0.0, g);
        argmax_of(none);
        EXPECT_EQ(none.argmax(4, 6), -1);
        EXPECT_EQ(none.c(4, 6), 0);
        OrAndProblem all = orand_problem(rng, 5, 7, k, 1.0, g);
        argmax_of(all);
        EXPECT_EQ(all.argmax(4, 6), 0);
        EXPECT_EQ(all.c(4, 6), 1);
        OrAndProblem last = orand_problem(rng, 5, 7, k, 0.0, g);
        for (std::int64_t i = 0; i < 5; ++i) last.a(i, k - 1) = 0xff;
        for (std::int64_t j = 0; j < 7; ++j) last.b(k - 1, j) = 2;
        argmax_of(last);
        EXPECT_EQ(last.argmax(4, 6), k - 1);
    }
}

TEST_P(CpuOrAnd, PackBitsMatchesTheReference) {
    TROPICAL_TEST_RNG(rng);
    for (const std::int64_t target : cpu::runnable_targets()) {
        ForcedTarget forced(target);
        for (const PackAs as : {PackAs::A, PackAs::B})
            for (const Layout layout : {Layout::RowMajor, Layout::ColMajor})
                for (const std::int64_t k : {1, 31, 32, 33, 63, 64, 65, 95, 130, 200}) {
                    SCOPED_TRACE(std::string(cpu::target_name(target)) + " " + (as == PackAs::A ? "A" : "B") +
                                 " K=" + std::to_string(k));
                    Geometry g{layout, 2, 3, 4, false};
                    auto bytes = random_booleans(rng, as == PackAs::A ? 11 : k, as == PackAs::A ? k : 11, 0.4, g);
                    const auto want = packed_words(bytes, as, words_geometry(g, 1));
                    auto words = make_matrix<std::uint32_t>(want.rows, want.cols, words_geometry(g, 1));
                    host::pack_bits_batched<std::uint8_t>(batched_in(bytes), as, batched_view(words), 3, options());
                    EXPECT_TRUE(exactly_equal("words", want, words));
                }
    }
}

INSTANTIATE_TEST_SUITE_P(Threads, CpuOrAnd, ::testing::Values(1, 4),
                         [](const ::testing::TestParamInfo<int>& i) { return std::to_string(i.param) + "_threads"; });

TEST(CpuOrAndApi, BoolElementsReadNonzeroAndWriteZeroOrOne) {
    // Reachability on a path 0 -> 1 -> 2: A is the adjacency (bool), A (x) A the two-step pairs.
    bool adjacency[9] = {false, true, false, false, false, true, false, false, false};
    bool two_steps[9];
    host::gemm<OrAnd>(row_major<const bool>(adjacency, 3, 3), row_major<const bool>(adjacency, 3, 3),
                      row_major(two_steps, 3, 3));
    for (int e = 0; e < 9; ++e) EXPECT_EQ(two_steps[e], e == 2) << e;  // only 0 reaches 2 in two steps
    // Bytes other than 0 and 1 are true, and the result is 0 or 1.
    const std::uint8_t a[2] = {0x80, 0x02}, b[2] = {0x00, 0xff};
    std::uint8_t c[1] = {0x55};
    host::gemm<OrAnd>(row_major(a, 1, 2), row_major(b, 2, 1), row_major(c, 1, 1));
    EXPECT_EQ(c[0], 1);
}

TEST(CpuOrAndApi, RefusesMismatchedTypesGradientsAndBadPackedShapes) {
    float f[4] = {};
    std::uint8_t u[4] = {}, out[4] = {};
    std::int32_t idx[4] = {};
    std::uint32_t w[4] = {};
    using tropical::detail::OperandRef;
    const OperandRef fa{f, 2, 2, 2}, ua{u, 2, 2, 2}, uo{out, 2, 2, 2}, wa{w, 2, 1, 1}, wb{w + 2, 1, 2, 2},
        ia{idx, 2, 2, 2};
    try {
        host::detail::product(Semiring::OrAnd, DType::F32, fa, fa, fa, nullptr, 1, {});
        FAIL() << "OrAnd on f32 ran";
    } catch (const Unsupported& e) {
        EXPECT_THAT(e.what(), HasSubstr("OrAnd is Boolean"));
    }
    try {
        host::detail::product(Semiring::MaxPlus, DType::U8, ua, ua, uo, nullptr, 1, {});
        FAIL() << "MaxPlus on u8 ran";
    } catch (const Unsupported& e) {
        EXPECT_THAT(e.what(), HasSubstr("OrAnd semiring alone"));
    }
    try {
        host::detail::backward(tropical::detail::Gradient::OfA, Semiring::OrAnd, DType::U8, uo, ia, ua, ua, uo, 1, {});
        FAIL() << "an OrAnd gradient ran";
    } catch (const Unsupported& e) {
        EXPECT_THAT(e.what(), HasSubstr("no gradient"));
    }
    // K = 40 needs two words along K.
    EXPECT_THROW(host::detail::product_packed(Semiring::OrAnd, wa, wb, 40, uo, nullptr, 1, {}), InvalidArgument);
    EXPECT_THROW(host::detail::product_packed(Semiring::OrAnd, wa, wb, -1, uo, nullptr, 1, {}), InvalidArgument);
    EXPECT_THROW(host::detail::product_packed(Semiring::MaxPlus, wa, wb, 32, uo, nullptr, 1, {}), Unsupported);
    host::detail::product_packed(Semiring::OrAnd, wa, wb, 32, uo, nullptr, 1, {});  // the right shape runs
    try {
        host::detail::pack_bits(ua, PackAs::A, OperandRef{w, 2, 2, 2}, 1, {});
        FAIL() << "2 x 2 booleans packed into 2 x 2 words";
    } catch (const InvalidArgument& e) {
        EXPECT_THAT(e.what(), HasSubstr("must be 2x1"));
    }
    EXPECT_THROW(host::detail::pack_bits(ua, PackAs::B, OperandRef{w, 1, 2, 2}, 1, {true, 0}), InvalidArgument);
    static_assert(!tropical::detail::has_gradient<OrAnd> && tropical::detail::has_gradient<MaxMin>);
    static_assert(semiring_supports<OrAnd, bool> && semiring_supports<OrAnd, std::uint8_t> &&
                  !semiring_supports<OrAnd, float> && !semiring_supports<MaxPlus, std::uint8_t>);
}

// The C ABI's host entry points: the same results as the C++ ones, and statuses for the refusals.
TEST(CpuOrAndCApi, HostEntryPointsAndTheirStatuses) {
    // 2 x 40 booleans by 40 x 3: A's row 0 has k = 35, B's column 2 has k = 35 and 39.
    std::vector<std::uint8_t> a(2 * 40, 0), b(40 * 3, 0), c(2 * 3, 9);
    a[35] = 1, a[40 + 39] = 3, b[35 * 3 + 2] = 1, b[39 * 3 + 2] = 1, b[39 * 3 + 0] = 0x40;
    const tropical_matrix da{a.data(), 2, 40, 40, TROPICAL_ROW_MAJOR, 0}, db{b.data(), 40, 3, 3, TROPICAL_ROW_MAJOR, 0},
        dc{c.data(), 2, 3, 3, TROPICAL_ROW_MAJOR, 0};
    std::vector<std::int32_t> argmax(6, 7);
    const tropical_matrix dm{argmax.data(), 2, 3, 3, TROPICAL_ROW_MAJOR, 0};
    ASSERT_EQ(tropical_host_gemm_argmax(TROPICAL_ORAND, TROPICAL_U8, &da, &db, &dc, &dm, 1, nullptr), TROPICAL_SUCCESS)
        << tropical_last_error_message();
    EXPECT_EQ(c, (std::vector<std::uint8_t>{0, 0, 1, 1, 0, 1}));
    EXPECT_EQ(argmax, (std::vector<std::int32_t>{-1, -1, 35, 39, -1, 39}));
    // The same through words: A 2 x 2 (row-major), B 2 x 3 (column-major, ld 4), packed by the ABI.
    std::vector<std::uint32_t> wa(2 * 2), wb(3 * 4, 0xdeadbeef);
    const tropical_matrix dwa{wa.data(), 2, 2, 2, TROPICAL_ROW_MAJOR, 0},
        dwb{wb.data(), 2, 3, 4, TROPICAL_COL_MAJOR, 0};
    ASSERT_EQ(tropical_host_pack_bits(&da, TROPICAL_PACK_A, &dwa, 1, nullptr), TROPICAL_SUCCESS);
    ASSERT_EQ(tropical_host_pack_bits(&db, TROPICAL_PACK_B, &dwb, 1, nullptr), TROPICAL_SUCCESS);
    EXPECT_EQ(wa, (std::vector<std::uint32_t>{0, 1u << 3, 0, 1u << 7}));
    EXPECT_EQ(wb[2], 0xdeadbeefu) << "the words' padding";
    std::fill(c.begin(), c.end(), 9);
    std::fill(argmax.begin(), argmax.end(), 7);
    ASSERT_EQ(tropical_host_gemm_packed_argmax(TROPICAL_ORAND, &dwa, &dwb, 40, &dc, &dm, 1, nullptr), TROPICAL_SUCCESS)
        << tropical_last_error_message();
    EXPECT_EQ(c, (std::vector<std::uint8_t>{0, 0, 1, 1, 0, 1}));
    EXPECT_EQ(argmax, (std::vector<std::int32_t>{-1, -1, 35, 39, -1, 39}));
    const tropical_host_options accumulate{1, 0};
    c = {1, 0, 0, 0, 5, 0};
    ASSERT_EQ(tropical_host_gemm_packed(TROPICAL_ORAND, &dwa, &dwb, 40, &dc, 1, &accumulate), TROPICAL_SUCCESS);
    EXPECT_EQ(c, (std::vector<std::uint8_t>{1, 0, 1, 1, 1, 1}));

    // Refusals.
    std::vector<float> f(6);
    const tropical_matrix df{f.data(), 2, 3, 3, TROPICAL_ROW_MAJOR, 0};
    EXPECT_EQ(tropical_host_gemm(TROPICAL_ORAND, TROPICAL_F32, &df, &df, &df, 1, nullptr), TROPICAL_UNSUPPORTED);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("OrAnd is Boolean"));
    EXPECT_EQ(tropical_host_gemm(TROPICAL_MAXPLUS, TROPICAL_U8, &da, &db, &dc, 1, nullptr), TROPICAL_UNSUPPORTED);
    EXPECT_EQ(tropical_host_gemm_backward_a(TROPICAL_ORAND, TROPICAL_U8, &dc, &dm, &da, &db, &da, 1, nullptr),
              TROPICAL_UNSUPPORTED);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("no gradient"));
    EXPECT_EQ(tropical_host_gemm_packed(TROPICAL_MAXPLUS, &dwa, &dwb, 40, &dc, 1, nullptr), TROPICAL_UNSUPPORTED);
    EXPECT_EQ(tropical_host_gemm_packed(TROPICAL_ORAND, &dwa, &dwb, 65, &dc, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_host_gemm_packed(TROPICAL_ORAND, &dwa, &dwb, -3, &dc, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_host_gemm_packed(TROPICAL_ORAND, &dwa, nullptr, 40, &dc, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_host_pack_bits(&da, static_cast<tropical_pack>(2), &dwa, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_host_pack_bits(nullptr, TROPICAL_PACK_A, &dwa, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_EQ(tropical_host_pack_bits(&da, TROPICAL_PACK_B, &dwa, 1, nullptr), TROPICAL_INVALID_ARGUMENT);
    EXPECT_STREQ(tropical_semiring_name(TROPICAL_ORAND), "orand");
}

}  // namespace
