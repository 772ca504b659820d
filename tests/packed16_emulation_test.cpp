// The 16-bit element types' device code (kernels/packed16.cuh, kernels/packed16_loop.cuh) run on the
// CPU by tests/support/device_emulation.hpp, against the reference's 16-bit semantics: bfloat16,
// float16 and int16 for MaxPlus, MinPlus, MaxMin, MinMax and (floats) MaxMul, on odd shapes, partial
// tiles, K below, at and past a slice and K = 0, every layout of A, B and C, padded leading
// dimensions, batches, accumulate, edge values (+-inf, NaN, -0, the types' extremes, subnormals,
// int16's zeros and range ends), ties, and outputs poisoned. Each result must equal the reference's
// bit for bit (floats: a NaN for a NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tropical/float16.hpp>
#include <tropical/types.hpp>
#include "reference/reference.hpp"
#include "support/half_inputs.hpp"
#include "support/random_inputs.hpp"

#include "support/emulated_device_code.hpp"

using namespace tropical;
using tropical::testing::half_bits;
using tropical::testing::half_input;
using tropical::testing::Rng;
using tropical::testing::same_half;

namespace {

// The host type of each device type, and the device type of each host type.
template <class H>
struct Device;
template <>
struct Device<bfloat16> {
    using type = tg::bf16;
};
template <>
struct Device<float16> {
    using type = tg::f16;
};
template <>
struct Device<std::int16_t> {
    using type = short;
};

template <class S>
struct Tag;
template <>
struct Tag<tg::MaxPlus> {
    static constexpr Semiring value = Semiring::MaxPlus;
};
template <>
struct Tag<tg::MinPlus> {
    static constexpr Semiring value = Semiring::MinPlus;
};
template <>
struct Tag<tg::MaxMul> {
    static constexpr Semiring value = Semiring::MaxMul;
};
template <>
struct Tag<tg::MaxMin> {
    static constexpr Semiring value = Semiring::MaxMin;
};
template <>
struct Tag<tg::MinMax> {
    static constexpr Semiring value = Semiring::MinMax;
};

struct Shape {
    std::int64_t m, n, k, batch;
};

// A batch of matrices in host memory with a layout and a padded leading dimension.
template <class H>
struct Matrices {
    std::int64_t rows, cols, batch, ld, stride;
    bool row_major;
    std::vector<H> data;
    Matrices(std::int64_t r, std::int64_t c, std::int64_t b, bool rm, std::int64_t pad)
        : rows(r),
          cols(c),
          batch(b),
          ld((rm ? c : r) + pad),
          stride(((rm ? r : c) * ld) + 3),
          row_major(rm),
          data(static_cast<std::size_t>(b * stride + 8)) {}
    std::int64_t row_stride() const { return row_major ? ld : 1; }
    std::int64_t col_stride() const { return row_major ? 1 : ld; }
    H& at(std::int64_t n, std::int64_t i, std::int64_t j) {
        return data[static_cast<std::size_t>(n * stride + i * row_stride() + j * col_stride())];
    }
    reference::HostView<H> view(std::int64_t n) {
        return {data.data() + n * stride, rows, cols, row_stride(), col_stride()};
    }
    TgOperand operand() { return {data.data(), row_stride(), col_stride(), stride}; }
};

template <class Cfg, class S, class H>
void check(Rng& rng, const Shape& sh, bool a_rm, bool b_rm, bool c_rm, bool accumulate, bool edges) {
    using D = typename Device<H>::type;
    constexpr Semiring s = Tag<S>::value;
    Matrices<H> a(sh.m, sh.k, sh.batch, a_rm, a_rm ? 1 : 0), b(sh.k, sh.n, sh.batch, b_rm, b_rm ? 0 : 2),
        c(sh.m, sh.n, sh.batch, c_rm, 1);
    for (auto& x : a.data) x = half_input<H>(rng, s, edges);
    for (auto& x : b.data) x = half_input<H>(rng, s, edges);
    for (auto& x : c.data) x = half_input<H>(rng, s, edges);
    Matrices<H> want = c;
    if (!accumulate)  // poisoned: every result must be written
        for (auto& x : c.data) x = std::bit_cast<H>(std::uint16_t{0xffff});
    for (std::int64_t n = 0; n < sh.batch; ++n) reference::gemm<H>(s, a.view(n), b.view(n), want.view(n), accumulate);

    const TgGemmParams p{a.operand(), b.operand(), c.operand(), {}, sh.m, sh.n, sh.k, sh.batch, accumulate ? 1 : 0, 1};
    const tg_emu::Index grid{static_cast<unsigned>((sh.n + Cfg::bn - 1) / Cfg::bn),
                             static_cast<unsigned>((sh.m + Cfg::bm - 1) / Cfg::bm), static_cast<unsigned>(sh.batch)};
    tg_emu::launch(grid, Cfg::threads, [&] { tg::gemm_packed16<Cfg, S, D, Cfg::threads>(p); });

    for (std::int64_t n = 0; n < sh.batch; ++n)
        for (std::int64_t i = 0; i < sh.m; ++i)
            for (std::int64_t j = 0; j < sh.n; ++j) {
                const H w = want.at(n, i, j), g = c.at(n, i, j);
                ASSERT_TRUE(same_half(w, g))
                    << fmt::format("{} {}x{}x{} batch {} at [{}][{},{}]: got {:04x}, want {:04x}", to_string(s), sh.m,
                                   sh.n, sh.k, sh.batch, n, i, j, half_bits(g), half_bits(w));
            }
    // Nothing outside C was written.
    for (std::int64_t n = 0; n < sh.batch; ++n)
        for (std::int64_t q = 0; q < c.stride && n * c.stride + q < static_cast<std::int64_t>(c.data.size()); ++q) {
            const std::int64_t major = q / c.ld, minor = q % c.ld;
            if (major < (c_rm ? sh.m : sh.n) && minor < (c_rm ? sh.n : sh.m)) continue;
            if (!accumulate) {
                ASSERT_EQ(half_bits(c.data[static_cast<std::size_t>(n * c.stride + q)]), 0xffffu) << "outside C";
            }
        }
}

template <class H>
class Packed16Emulated : public ::testing::Test {};
using Types = ::testing::Types<bfloat16, float16, std::int16_t>;
TYPED_TEST_SUITE(Packed16Emulated, Types);

// A small tile (32 x 64, 8 x 8 a thread: one warp), so that the emulation covers many tiles fast.
using SmallTile = tg::Tile<32, 64, 16, 8, 8, 16>;

template <class S, class H>
void every_case(Rng& rng) {
    const Shape shapes[] = {{1, 1, 1, 1},    {7, 9, 5, 1}, {32, 32, 16, 1}, {33, 31, 17, 2},
                            {40, 70, 48, 1}, {5, 3, 0, 1}, {64, 2, 33, 1},  {3, 66, 1, 2}};
    int round = 0;
    for (const Shape& sh : shapes)
        for (int layout = 0; layout < 8; ++layout) {
            ++round;
            SCOPED_TRACE(fmt::format("{}x{}x{} layout {} round {}", sh.m, sh.n, sh.k, layout, round));
            check<SmallTile, S, H>(rng, sh, layout & 1, layout & 2, layout & 4, round % 3 == 0, round % 2 == 0);
            if (::testing::Test::HasFatalFailure()) return;
        }
}

TYPED_TEST(Packed16Emulated, ProductsMatchTheReference) {
    using H = TypeParam;
    TROPICAL_TEST_RNG(rng);
    every_case<tg::MaxPlus, H>(rng);
    every_case<tg::MinPlus, H>(rng);
    every_case<tg::MaxMin, H>(rng);
    every_case<tg::MinMax, H>(rng);
    if constexpr (!std::is_same_v<H, std::int16_t>) every_case<tg::MaxMul, H>(rng);
}

// The tile the catalogue's rows take (128 x 128, 8 x 8 results a thread, 256 threads), on one product
// with partial tiles.
TYPED_TEST(Packed16Emulated, TheBigTile) {
    using H = TypeParam;
    TROPICAL_TEST_RNG(rng);
    check<tg::Tile<128, 128, 32, 8, 8, 32>, tg::MaxPlus, H>(rng, {130, 140, 70, 1}, true, true, true, false, true);
    check<tg::Tile<128, 128, 32, 8, 8, 32>, tg::MinMax, H>(rng, {129, 127, 33, 1}, false, true, false, true, true);
}

}  // namespace
