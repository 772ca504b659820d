// The Vector kernels' device code (kernels/vector.cuh) run on the CPU by
// tests/support/device_emulation.hpp, against the reference: every type and semiring, plain (also
// accumulating) and with argmax, as the host plans them (validate, plan: the kernel, its grid and
// parameters), for A of one to four rows, K within one pass of a block and over several with a short
// last one, N not a multiple of a block's columns, every layout of A, C and the argmax, batches
// with gaps and broadcasts, ties, NaN, infinities and integer range ends, and grids smaller than the
// work. CI has no GPU: this is where the kernels' indexing, edges, shuffles and barriers are checked
// there (tests/vector_gpu_test.cpp runs the same cases on a GPU).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <tropical/gemm.hpp>
#include <tropical/kernels.hpp>
#include "catalogue/catalogue.hpp"
#include "gemm/plan.hpp"
#include "gemm/request.hpp"
#include "gemm/validate.hpp"
#include "support/gemm_test_util.hpp"

#include "support/emulated_device_code.hpp"

using namespace tropical;
using namespace tropical::testing;
using tropical::detail::OperandRef;
using tropical::detail::Operation;
using tropical::detail::Request;

namespace {

// The Vector rows' tile (kernels/catalogue.def), checked against the catalogue below.
using VectorTile = tg::Tile<4, 8, 64, 4, 1, 1>;
constexpr int kVectorThreads = 512;

template <class S>
struct DeviceRing;
template <>
struct DeviceRing<MaxPlus> {
    using type = tg::MaxPlus;
};
template <>
struct DeviceRing<MinPlus> {
    using type = tg::MinPlus;
};
template <>
struct DeviceRing<MaxMul> {
    using type = tg::MaxMul;
};
template <>
struct DeviceRing<MaxMin> {
    using type = tg::MaxMin;
};
template <>
struct DeviceRing<MinMax> {
    using type = tg::MinMax;
};

template <class S, class T, bool ARGMAX>
void vector_entry(const void* params) {
    using Device = std::conditional_t<std::is_same_v<T, std::int64_t>, long long, T>;
    tg::product<tg::Vector, ARGMAX, typename DeviceRing<S>::type, Device, VectorTile, kVectorThreads>(
        *static_cast<const TgGemmParams*>(params));
}

template <class T>
OperandRef ref(HostMatrix<T>& m) {
    return {m.storage.data(), m.rows, m.cols, m.ld, m.layout, m.batch_stride};
}

// Runs the product of a, b into c (and argmax) as run() would on an H200-sized GPU (validate, plan),
// on the emulated device; with one_block, on a single block that strides over the whole grid's work.
template <class S, class T>
void run_emulated(HostMatrix<T>& a, HostMatrix<T>& b, HostMatrix<T>& c, HostMatrix<std::int32_t>* argmax,
                  bool accumulate, bool one_block) {
    Request q;
    q.operation = argmax ? Operation::GemmArgmax : Operation::Gemm;
    q.semiring = S::value, q.dtype = dtype_of<T>();
    q.a = ref(a), q.b = ref(b), q.c = ref(c);
    if (argmax) q.argmax = ref(*argmax);
    q.batch = c.count;
    q.options.accumulate = accumulate;
    const tropical::detail::ValidatedRequest v = tropical::detail::validate(q);
    ASSERT_TRUE(tropical::detail::has_work(q, v.shape));
    const tropical::detail::LaunchPlan p = tropical::detail::plan(q, v.shape, {132, 227 * 1024});
    ASSERT_EQ(p.choice.kernel->variant, KernelVariant::Vector) << p.choice.kernel->name;
    ASSERT_EQ(p.block, static_cast<unsigned>(kVectorThreads));
    const tg_emu::Index grid = one_block ? tg_emu::Index{1, 1, 1} : tg_emu::Index{p.grid[0], p.grid[1], p.grid[2]};
    void (*entry)(const void*) = argmax ? vector_entry<S, T, true> : vector_entry<S, T, false>;
    tg_emu::launch(grid, p.block, [&] { entry(&p.product); });
}

struct Problem {
    std::int64_t m, n, k;
    Geometries g;
    Values values = Values::Typical;
    bool one_block = false;
};

std::string describe(const Problem& x) {
    return describe(Shape{x.m, x.n, x.k}) + "; " + describe(x.g) + (x.one_block ? "; one block" : "");
}

// Plain (overwriting and accumulating) and with argmax, against the reference, outputs poisoned;
// `edges` writes the semiring's edge values into A and B and sets A's last row to the zero.
template <class S, class T>
void check(Rng& rng, const Problem& x, bool edges = false) {
    SCOPED_TRACE(describe(x) + (edges ? "; edge values" : ""));
    constexpr Semiring ring = S::value;
    const Shape s{x.m, x.n, x.k};
    auto [a, b] = edges ? edge_operands<T>(rng, ring, s, x.g, 12)
                        : std::pair{random_matrix<T>(rng, ring, x.values, x.m, x.k, x.g.a),
                                    random_matrix<T>(rng, ring, x.values, x.k, x.n, x.g.b)};
    for (const bool accumulate : {false, true}) {
        SCOPED_TRACE(accumulate ? "plain, accumulating" : "plain");
        auto c = make_matrix<T>(x.m, x.n, x.g.c);
        if (accumulate) c.fill([&] { return random_value<T>(rng, ring, Values::Typical); });
        const auto expected = reference_gemm<T>(ring, a, b, c, accumulate);
        run_emulated<S>(a, b, c, nullptr, accumulate, x.one_block);
        EXPECT_TRUE(exactly_equal("C", expected, c));
    }
    SCOPED_TRACE("with argmax");
    auto c = make_matrix<T>(x.m, x.n, x.g.c);
    auto argmax = make_matrix<std::int32_t>(x.m, x.n, x.g.argmax);
    const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c, argmax);
    run_emulated<S>(a, b, c, &argmax, false, x.one_block);
    EXPECT_TRUE(exactly_equal("C", expected_c, c));
    EXPECT_TRUE(exactly_equal("argmax", expected_argmax, argmax));
}

// Geometries whose B is row-major (the Vector kernels' layout), A, C and argmax as combination says.
Geometries row_major_b(int combination, int salt) { return layout_combination(combination & ~2, salt); }

template <class C>
class VectorEmulation : public ::testing::Test {};
TYPED_TEST_SUITE(VectorEmulation, AllCases, CaseName);

TEST(VectorEmulationRows, EveryVectorRowHasTheEmulatedTile) {
    int rows = 0;
    for (const auto& kernel : kernel_registry()) {
        if (kernel.variant != KernelVariant::Vector) continue;
        ++rows;
        const auto& row = tropical::detail::row_of(kernel);
        const auto& t = row.tile;
        EXPECT_TRUE(t.bm == VectorTile::bm && t.bn == VectorTile::bn && t.bk == VectorTile::bk &&
                    t.tm == VectorTile::tm && t.tn == VectorTile::tn && t.sk == VectorTile::sk)
            << kernel.name << ": the catalogue's tile differs from the emulated one";
        EXPECT_EQ(row.threads, kVectorThreads) << kernel.name;
    }
    EXPECT_EQ(rows, 40);  // plain and argmax, every type and semiring
}

// A of 1 to 4 rows; K of one group per thread (64), within a pass, over passes with a short last
// one; N of one column, short of a block's 8, and many blocks; ties so that equal values meet in
// different groups, warps and passes, and the smallest k must win.
TYPED_TEST(VectorEmulation, RowsTimesAMatrix) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Problem> problems = {
        {1, 1, 64, row_major_b(0, 1)},
        {1, 37, 700, row_major_b(1, 2), Values::Ties},
        {2, 8, 1024, row_major_b(4, 3)},
        {3, 20, 1025, row_major_b(5, 4), Values::Ties},
        {4, 9, 2100, row_major_b(6, 5), Values::Ties},
        {1, 130, 200, row_major_b(7, 6)},
    };
    for (const Problem& x : problems) check<S, T>(rng, x);
}

// Batches, with gaps between A's and C's matrices, and A or B broadcast; one block for every tile
// and product in turn.
TYPED_TEST(VectorEmulation, BatchesAndOneBlock) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const int combination : {0, 1, 4}) {
        Geometries g = with_count(row_major_b(combination, 7), 3);
        g.a.gap = 3, g.c.gap = 5, g.argmax.gap = 2;
        g.b.broadcast = combination == 1;
        g.a.broadcast = combination == 4;
        check<S, T>(rng, {2, 19, 300, g, Values::Ties});
    }
    check<S, T>(rng, {4, 17, 1100, with_count(row_major_b(5, 8), 2), Values::Ties, true});
}

TYPED_TEST(VectorEmulation, EdgeValues) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    check<S, T>(rng, {3, 21, 130, row_major_b(0, 9)}, true);
    check<S, T>(rng, {1, 12, 1500, row_major_b(1, 10)}, true);
}

}  // namespace
