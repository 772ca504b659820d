// The counting semiring's SIMD kernels (src/cpu/counting_kernel.cpp) on every SIMD target this CPU
// runs, each forced in turn, against the reference, bit for bit (NaN equal to NaN): fresh random
// inputs with many ties (small integer values), -inf, +inf, NaN and -0 values, huge, fractional and
// negative counts whose products and sums round (so that a fused multiply-add, or terms taken out of
// order, would show), odd shapes around the register tiles and the blocks (1 to 130 in each of M, N
// and K, K = 0, and K, N past a block), every layout of the six matrices (strided and transposed
// operands), batches with broadcast operands, accumulate, f32 and f64, on one thread and on
// several. Every output is poisoned before its run.
//
// This file is compiled with -ffp-contract=off (tests/CMakeLists.txt), so that the reference it
// instantiates rounds a count's product and sum separately on every machine, as the kernels do.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <tropical/counting.hpp>
#include "cpu/targets.hpp"
#include "support/counting_cases.hpp"
#include "support/cpu_gemm.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class T>
constexpr T kInf = std::numeric_limits<T>::infinity();

// Values: integers in [-2, 2], so that terms tie everywhere; with `edges`, also -inf (1 in 12),
// +inf (1 in 50), NaN (1 in 100) and -0 (1 in 12).
template <class T>
T counting_value(Rng& rng, bool edges) {
    if (edges) {
        const std::int64_t r = rng.integer(0, 99);
        if (r < 8) return -kInf<T>;
        if (r < 10) return kInf<T>;
        if (r < 11) return std::numeric_limits<T>::quiet_NaN();
        if (r < 19) return T(-0.0);
    }
    return static_cast<T>(rng.integer(-2, 2));
}

// What counts look like.
enum class Counts {
    Small,   // integers 0 to 3
    Huge,    // also integers from 2^26 to 2^30 (their products need up to 60 bits, and sums of them
             // round), fractions, and now and then inf or NaN
    Signed,  // as Huge, and negative fractions and -0 (whose products may be -0)
};

double random_count(Rng& rng, Counts counts) {
    if (counts != Counts::Small) {
        const std::int64_t r = rng.integer(0, 199);
        if (r < 70) return static_cast<double>(rng.integer(std::int64_t(1) << 26, std::int64_t(1) << 30));
        if (r < 90) return rng.real(0.0, 4.0);
        if (r < 91) return std::numeric_limits<double>::infinity();
        if (r < 92) return std::numeric_limits<double>::quiet_NaN();
        if (counts == Counts::Signed && r < 112) return -rng.real(0.0, 4.0);
        if (counts == Counts::Signed && r < 122) return -0.0;
    }
    return static_cast<double>(rng.integer(0, 3));
}

template <class T>
CountingMatrix<T> random_operand(Rng& rng, std::int64_t rows, std::int64_t cols, const Geometry& gv, const Geometry& gc,
                                 bool edges, Counts counts) {
    CountingMatrix<T> m{make_matrix<T>(rows, cols, gv), make_matrix<double>(rows, cols, gc)};
    m.values.fill([&] { return counting_value<T>(rng, edges); });
    m.counts.fill([&] { return random_count(rng, counts); });
    return m;
}

// Fresh inputs and a poisoned output (with accumulate, a random C_old); no expectation yet.
template <class T>
CountingCase<T> fresh_case(Rng& rng, const CountingShape& s, const CountingGeometry& g, bool edges, Counts counts,
                           bool accumulate) {
    CountingCase<T> t;
    t.batch = s.batch;
    t.accumulate = accumulate;
    t.a = random_operand<T>(rng, s.m, s.k, g.av, g.ac, edges, counts);
    t.b = random_operand<T>(rng, s.k, s.n, g.bv, g.bc, edges, counts);
    t.c = accumulate ? random_operand<T>(rng, s.m, s.n, g.cv, g.cc, edges, counts)
                     : poisoned_counting_output<T>(s.m, s.n, g.cv, g.cc);
    return t;
}

// The rules of a finished pair, as the scalar loop below applies them.
template <class T>
void finish(T& value, double& count) {
    if (std::isnan(value)) count = std::numeric_limits<double>::quiet_NaN();
    else if (value == -kInf<T>) count = 0.0;
    value = value + T(0);
}

// t.expected by the scalar loop these kernels replaced (src/cpu/host_counting.cpp before them, step
// for step): the second oracle, for counts whose products may be -0 (negative counts, outside the
// documented domain), the one input where it and the reference differ. The reference returns a lone
// best term's count as it is, -0 included; the loop (like the GPU's fma(ca, cb, 0.0)) adds it to +0,
// so that its counts are never -0; the kernels do what the loop did.
template <class T>
void expect_from_scalar_loop(CountingCase<T>& t) {
    t.expected = t.c;
    const std::int64_t m = t.c.values.rows, n = t.c.values.cols, k = t.a.values.cols;
    for (std::int64_t b = 0; b < t.batch; ++b) {
        for (std::int64_t i = 0; i < m; ++i) {
            for (std::int64_t j = 0; j < n; ++j) {
                T value = -kInf<T>;
                double count = 0.0;
                for (std::int64_t p = 0; p < k; ++p) {
                    const T term = t.a.values.at(b, i, p) + t.b.values.at(b, p, j);
                    const T best = term > value || std::isnan(term) ? term : value;
                    const double base = value == best ? count : 0.0;
                    if (term == best) {
                        const double product = t.a.counts.at(b, i, p) * t.b.counts.at(b, p, j);
                        count = product + base;
                    }
                    value = best;
                }
                finish(value, count);
                T& out_v = t.expected.values.at(b, i, j);
                double& out_c = t.expected.counts.at(b, i, j);
                if (t.accumulate) {
                    T old_v = out_v;
                    double old_c = out_c;
                    finish(old_v, old_c);
                    const T best = std::isnan(old_v) || old_v > value ? old_v : value;
                    count = (old_v == best ? old_c : 0.0) + (value == best ? count : 0.0);
                    value = best;
                    finish(value, count);
                }
                out_v = value;
                out_c = count;
            }
        }
    }
}

// The case through the host entry point on `threads` threads, into a fresh copy of its output.
template <class T>
CountingMatrix<T> run_host(const CountingCase<T>& t, int threads) {
    CountingMatrix<T> c = t.c;
    host::Options o;
    o.accumulate = t.accumulate;
    o.threads = threads;
    auto view = [](auto& m) {
        return BatchedView<std::remove_reference_t<decltype(m.storage[0])>>{
            {m.storage.data(), m.rows, m.cols, m.ld, m.layout}, m.batch_stride};
    };
    host::counting_gemm_batched<T>(view(t.a.values), view(t.a.counts), view(t.b.values), view(t.b.counts),
                                   view(c.values), view(c.counts), t.batch, o);
    return c;
}

// Every size of {1, 3, 7, 17, 33, 65, 130} in each of M, N and K (beside small others, and all three
// alike), K = 0, K past a block of 256 terms, N past a block of 256 columns, M past a block of 64
// rows, and batches.
std::vector<CountingShape> shapes() {
    const std::int64_t sizes[] = {1, 3, 7, 17, 33, 65, 130};
    std::vector<CountingShape> out;
    for (const std::int64_t s : sizes) {
        out.push_back({s, 7, 17});
        out.push_back({17, s, 7});
        out.push_back({7, 17, s});
        out.push_back({s, s, s});
    }
    out.insert(out.end(), {{5, 9, 0},
                           {65, 33, 0},
                           {9, 20, 530},
                           {33, 300, 17},
                           {70, 260, 300},
                           {130, 3, 257},
                           {6, 7, 5, 4},
                           {33, 17, 65, 3},
                           {3, 130, 7, 2}});
    return out;
}

template <class T>
class CpuCounting : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuCounting, ValueTypes);

TYPED_TEST(CpuCounting, EveryTargetMatchesTheReferenceBitForBit) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    SplitSmallWork split;  // small products cut into bands of rows too
    for (const std::int64_t target : cpu::runnable_targets()) {
        ForcedTarget forced(target);
        SCOPED_TRACE(std::string("target ") + cpu::target_name(target));
        int index = 0;
        for (const CountingShape& s : shapes()) {
            ++index;
            const int combination = (index * 37) % 64;
            const bool broadcast = s.batch > 1 && index % 2 == 0;
            const bool accumulate = index % 3 == 1;
            const bool edges = index % 4 != 0;
            const Counts counts = index % 3 != 0 ? Counts::Huge : Counts::Small;
            SCOPED_TRACE(describe(s, combination, broadcast, accumulate) + (edges ? " edges" : "") +
                         (counts == Counts::Huge ? " huge counts" : ""));
            auto t = fresh_case<T>(rng, s, counting_geometry(combination, index, s.batch, broadcast), edges, counts,
                                   accumulate);
            expect_from_reference(t);
            for (const int threads : {1, 3}) {
                SCOPED_TRACE("threads " + std::to_string(threads));
                ASSERT_TRUE(counting_matches(t, run_host(t, threads)));
            }
        }
    }
}

TYPED_TEST(CpuCounting, SignedCountsAsTheScalarLoopHadThem) {
    using T = TypeParam;
    TROPICAL_TEST_RNG(rng);
    SplitSmallWork split;
    const std::vector<CountingShape> some = {{7, 17, 33}, {33, 65, 7}, {3, 130, 300}, {17, 7, 0}, {6, 33, 17, 3}};
    for (const std::int64_t target : cpu::runnable_targets()) {
        ForcedTarget forced(target);
        SCOPED_TRACE(std::string("target ") + cpu::target_name(target));
        int index = 0;
        for (const CountingShape& s : some) {
            for (const bool accumulate : {false, true}) {
                ++index;
                const int combination = (index * 23) % 64;
                const bool broadcast = s.batch > 1 && accumulate;
                SCOPED_TRACE(describe(s, combination, broadcast, accumulate));
                auto t = fresh_case<T>(rng, s, counting_geometry(combination, index, s.batch, broadcast), true,
                                       Counts::Signed, accumulate);
                expect_from_scalar_loop(t);
                for (const int threads : {1, 3}) {
                    SCOPED_TRACE("threads " + std::to_string(threads));
                    ASSERT_TRUE(counting_matches(t, run_host(t, threads)));
                }
            }
        }
    }
}

// Two terms tie and their counts add: 2 + (2^27 + 1)^2. The product, 2^54 + 2^28 + 1, rounds to
// 2^54 + 2^28, and adding 2 gives a tie that rounds to even, 2^54 + 2^28 again; one fused
// multiply-add rounds 2^54 + 2^28 + 3 once, to 2^54 + 2^28 + 4. So this result shows a kernel (or a
// compiler) that fuses the two.
TYPED_TEST(CpuCounting, ACountIsAMultiplyThenAnAddNeverFused) {
    using T = TypeParam;
    const double big = std::ldexp(1.0, 27) + 1;
    const double unfused = std::ldexp(1.0, 54) + std::ldexp(1.0, 28);
    // Every column of C the same, so that whole vectors, and the scalar edge, compute it.
    const std::int64_t n = 37;
    const std::vector<T> a = {T(1), T(1)}, b(static_cast<std::size_t>(2 * n), T(2));
    const std::vector<double> ac = {2.0, big};
    std::vector<double> bc(static_cast<std::size_t>(2 * n), 1.0);
    std::fill(bc.begin() + n, bc.end(), big);
    for (const std::int64_t target : cpu::runnable_targets()) {
        ForcedTarget forced(target);
        SCOPED_TRACE(std::string("target ") + cpu::target_name(target));
        std::vector<T> c(static_cast<std::size_t>(n), T(-1));
        std::vector<double> cc(static_cast<std::size_t>(n), -1.0);
        host::counting_gemm<T>(row_major(a.data(), 1, 2), row_major(ac.data(), 1, 2), row_major(b.data(), 2, n),
                               row_major(bc.data(), 2, n), row_major(c.data(), 1, n), row_major(cc.data(), 1, n));
        for (std::int64_t j = 0; j < n; ++j) {
            EXPECT_EQ(c[static_cast<std::size_t>(j)], T(3)) << "column " << j;
            EXPECT_EQ(cc[static_cast<std::size_t>(j)], unfused) << "column " << j;
        }
    }
}

}  // namespace
