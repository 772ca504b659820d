#pragma once
// The emulated product tests' common part (vector_, column_ and dense_emulation_test): a product
// planned as run() would plan it on an H200-sized GPU (validate, plan: the kernel, its grid and
// parameters), run by the device code of kernels/ on the CPU (support/device_emulation.hpp), and
// checked against the reference, plain (overwriting and accumulating) and with argmax, outputs
// poisoned. A test names the variant it expects with a Kernels struct:
//   variant  the KernelVariant the plan must pick (else the test fails: it would check another path)
//   Tag      the device code's tag of that variant (kernels/entry.cuh)
//   Tile     the catalogue's tile of its rows, which the test checks (expect_rows)
//   threads  their block size
// Include it after every other header (it includes support/emulated_device_code.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <tropical/gemm.hpp>
#include <tropical/kernels.hpp>
#include "catalogue/catalogue.hpp"
#include "gemm/plan.hpp"
#include "request/request.hpp"
#include "request/validate.hpp"
#include "support/gemm_test_util.hpp"

#include "support/emulated_device_code.hpp"

namespace tropical::testing::emulated {

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

template <class Kernels, class S, class T, bool ARGMAX>
void entry(const void* params) {
    using Device = std::conditional_t<std::is_same_v<T, std::int64_t>, long long, T>;
    tg::product<typename Kernels::Tag, ARGMAX, typename DeviceRing<S>::type, Device, typename Kernels::Tile,
                Kernels::threads>(*static_cast<const TgGemmParams*>(params));
}

template <class T>
detail::OperandRef ref(HostMatrix<T>& m) {
    return {m.storage.data(), m.rows, m.cols, m.ld, m.layout, m.batch_stride};
}

// Every row of the variant (of the type `only`, where a variant's tile differs by type) has the
// emulated tile and block; `rows` of them (plain and argmax, every type and semiring).
template <class Kernels>
void expect_rows(int rows, std::optional<DType> only = std::nullopt) {
    using Tile = typename Kernels::Tile;
    int found = 0;
    for (const auto& kernel : kernel_registry()) {
        if (kernel.variant != Kernels::variant || (only && kernel.dtype != *only)) continue;
        ++found;
        const auto& row = detail::row_of(kernel);
        const auto& t = row.tile;
        EXPECT_TRUE(t.bm == Tile::bm && t.bn == Tile::bn && t.bk == Tile::bk && t.tm == Tile::tm && t.tn == Tile::tn &&
                    t.sk == Tile::sk)
            << kernel.name << ": the catalogue's tile differs from the emulated one";
        EXPECT_EQ(row.threads, Kernels::threads) << kernel.name;
    }
    EXPECT_EQ(found, rows);
}

// Runs the product of a, b into c (and argmax) as run() would on an H200-sized GPU, on the emulated
// device; with one_block, on a single block that strides over the whole grid's work. With
// unplanned (and one_block), the variant's kernel runs the planned parameters even where the plan
// picks another variant: a layout the plan keeps from it, which it must still compute correctly.
template <class Kernels, class S, class T>
void run(HostMatrix<T>& a, HostMatrix<T>& b, HostMatrix<T>& c, HostMatrix<std::int32_t>* argmax, bool accumulate,
         bool one_block, bool unplanned = false) {
    detail::Request q;
    q.operation = argmax ? detail::Operation::GemmArgmax : detail::Operation::Gemm;
    q.semiring = S::value, q.dtype = dtype_of<T>();
    q.a = ref(a), q.b = ref(b), q.c = ref(c);
    if (argmax) q.argmax = ref(*argmax);
    q.batch = c.count;
    q.options.accumulate = accumulate;
    const detail::ValidatedRequest v = detail::validate(q);
    ASSERT_TRUE(detail::has_work(q, v.shape));
    const detail::LaunchPlan p = detail::plan(q, v.shape, {132, 227 * 1024});
    if (unplanned) {
        ASSERT_TRUE(one_block) << "another variant's grid does not cover this one's work";
        ASSERT_NE(p.choice.kernel->variant, Kernels::variant) << "the plan takes this layout: test it planned";
    } else {
        ASSERT_EQ(p.choice.kernel->variant, Kernels::variant) << p.choice.kernel->name;
        ASSERT_EQ(p.block, static_cast<unsigned>(Kernels::threads));
    }
    const tg_emu::Index grid = one_block ? tg_emu::Index{1, 1, 1} : tg_emu::Index{p.grid[0], p.grid[1], p.grid[2]};
    void (*run_entry)(const void*) = argmax ? entry<Kernels, S, T, true> : entry<Kernels, S, T, false>;
    tg_emu::launch(grid, static_cast<unsigned>(Kernels::threads), [&] { run_entry(&p.product); });
}

struct Problem {
    std::int64_t m, n, k;
    Geometries g;
    Values values = Values::Typical;
    bool one_block = false;
    bool unplanned = false;  // run() unplanned: a layout the plan gives another variant
};

inline std::string describe(const Problem& x) {
    return testing::describe(Shape{x.m, x.n, x.k}) + "; " + testing::describe(x.g) +
           (x.one_block ? "; one block" : "") + (x.unplanned ? "; unplanned" : "");
}

// Plain (overwriting and accumulating) and with argmax, against the reference, outputs poisoned;
// `edges` writes the semiring's edge values into A and B and sets A's last row to the zero.
template <class Kernels, class S, class T>
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
        run<Kernels, S>(a, b, c, nullptr, accumulate, x.one_block, x.unplanned);
        EXPECT_TRUE(exactly_equal("C", expected, c));
    }
    SCOPED_TRACE("with argmax");
    auto c = make_matrix<T>(x.m, x.n, x.g.c);
    auto argmax = make_matrix<std::int32_t>(x.m, x.n, x.g.argmax);
    const auto [expected_c, expected_argmax] = reference_gemm_argmax<T>(ring, a, b, c, argmax);
    run<Kernels, S>(a, b, c, &argmax, false, x.one_block, x.unplanned);
    EXPECT_TRUE(exactly_equal("C", expected_c, c));
    EXPECT_TRUE(exactly_equal("argmax", expected_argmax, argmax));
}

}  // namespace tropical::testing::emulated
