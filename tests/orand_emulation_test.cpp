// OrAnd's device code (kernels/orand.cuh) run on the CPU by tests/support/device_emulation.hpp,
// against the reference: the packing kernel and the four product kernels (bytes and packed words,
// with and without argmax) as the host plans them (validate, plan: the kernel, its grid and
// parameters), for every layout, K around the word size and past a slice, odd shapes, batches with
// gaps and broadcasts, garbage in the bits past K, accumulate, and grids smaller than the work. CI
// has no GPU: this is where its indexing, edges and barriers are checked there (tests/
// orand_gpu_test.cpp runs the same on a GPU).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include <tropical/gemm.hpp>
#include <tropical/kernels.hpp>
#include "catalogue/catalogue.hpp"
#include "gemm/plan.hpp"
#include "request/request.hpp"
#include "request/validate.hpp"
#include "support/orand_inputs.hpp"
#include "support/sanitizers.hpp"

#include "support/emulated_device_code.hpp"

using namespace tropical;
using namespace tropical::testing;
using tropical::detail::OperandRef;
using tropical::detail::Operation;
using tropical::detail::Request;

namespace {

// The entry points of the catalogue's OrAnd rows, as kernel_source.cpp writes them (the tiles are
// checked against the rows below).
template <class Variant, bool ARGMAX, int BK, int SK>
void product_entry(const void* params) {
    tg::product<Variant, ARGMAX, tg::OrAnd, unsigned char, tg::Tile<128, 128, BK, 8, 8, SK>, 256>(
        *static_cast<const TgGemmParams*>(params));
}
void pack_entry(const void* params) { tg::pack<256>(*static_cast<const TgPackParams*>(params)); }

struct Emulated {
    void (*entry)(const void*);
    tropical::detail::TileShape tile;
};

const std::map<std::string_view, Emulated>& emulated() {
    static const std::map<std::string_view, Emulated> entries = {
        {"tropical_packed_u8_orand", {product_entry<tg::Packed, false, 16, 8>, {128, 128, 16, 8, 8, 8}}},
        {"tropical_packed_argmax_u8_orand", {product_entry<tg::Packed, true, 16, 8>, {128, 128, 16, 8, 8, 8}}},
        {"tropical_gemm_u8_orand", {product_entry<tg::Tiled, false, 16, 2>, {128, 128, 16, 8, 8, 2}}},
        {"tropical_gemm_argmax_u8_orand", {product_entry<tg::Tiled, true, 16, 2>, {128, 128, 16, 8, 8, 2}}},
        {"tropical_pack_bits_u8_orand", {pack_entry, {}}},
    };
    return entries;
}

// Runs request q as run() would on an H200-sized GPU (validate, plan), on the emulated device; with
// one_block, on a single block that strides over the whole grid's work.
void run_emulated(const Request& q, bool one_block = false) {
    const tropical::detail::ValidatedRequest v = tropical::detail::validate(q);
    if (!tropical::detail::has_work(q, v.shape)) return;
    const tropical::detail::LaunchPlan p = tropical::detail::plan(q, v.shape, {132, 227 * 1024});
    const auto found = emulated().find(p.choice.kernel->name);
    ASSERT_NE(found, emulated().end()) << p.choice.kernel->name << " has no emulated entry point";
    const void* params =
        q.operation == Operation::PackBits ? static_cast<const void*>(&p.pack) : static_cast<const void*>(&p.product);
    const tg_emu::Index grid = one_block ? tg_emu::Index{1, 1, 1} : tg_emu::Index{p.grid[0], p.grid[1], p.grid[2]};
    tg_emu::launch(grid, p.block, [&] { found->second.entry(params); });
}

template <class T>
OperandRef ref(HostMatrix<T>& m) {
    return {m.storage.data(), m.rows, m.cols, m.ld, m.layout, m.batch_stride};
}

Request product_request(Operation op, OrAndProblem& x, std::int64_t count, bool accumulate = false) {
    Request q;
    q.operation = op;
    q.semiring = Semiring::OrAnd, q.dtype = DType::U8;
    q.a = ref(x.a), q.b = ref(x.b), q.c = ref(x.c);
    if (op == Operation::GemmArgmax) q.argmax = ref(x.argmax);
    q.batch = count;
    q.options.accumulate = accumulate;
    return q;
}

// C = A (x) B (with argmax) of bytes, or of the packed words of A and B (garbage past K), emulated,
// against the reference; padding untouched.
void check(Rng& rng, std::int64_t m, std::int64_t n, std::int64_t k, const Geometries& g, double density, bool packed,
           bool argmax, bool accumulate = false, bool one_block = false) {
    SCOPED_TRACE("M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) + "; " + describe(g) +
                 (packed ? "; packed" : "; bytes") + (argmax ? ", argmax" : "") + (accumulate ? ", accumulate" : "") +
                 (one_block ? ", one block" : "") + "; density " + std::to_string(density));
    OrAndProblem x = orand_problem(rng, m, n, k, density, g);
    if (accumulate) x.c.fill([&] { return static_cast<std::uint8_t>(rng.chance(0.3) ? rng.integer(1, 255) : 0); });
    Request q = product_request(argmax ? Operation::GemmArgmax : Operation::Gemm, x, g.c.count, accumulate);
    HostMatrix<std::uint32_t> wa, wb;
    if (packed) {
        wa = packed_words(x.a, PackAs::A, words_geometry(g.a, g.a.pad % 3), &rng);
        wb = packed_words(x.b, PackAs::B, words_geometry(g.b, (g.b.pad + 1) % 4), &rng);
        q.a = ref(wa), q.b = ref(wb);
        q.packed_k = k;
    }
    if (argmax) {
        const auto [want_c, want_argmax] = reference_orand_argmax(x.a, x.b, x.c, x.argmax);
        run_emulated(q, one_block);
        EXPECT_TRUE(exactly_equal("C", want_c, x.c));
        EXPECT_TRUE(exactly_equal("argmax", want_argmax, x.argmax));
    } else {
        const auto want = reference_orand(x.a, x.b, x.c, accumulate);
        run_emulated(q, one_block);
        EXPECT_TRUE(exactly_equal("C", want, x.c));
    }
}

TEST(OrAndEmulation, EveryOrAndRowHasAnEmulatedEntryWithItsTile) {
    int rows = 0;
    for (const auto& kernel : kernel_registry()) {
        if (kernel.dtype != DType::U8) continue;
        ++rows;
        const auto found = emulated().find(kernel.name);
        ASSERT_NE(found, emulated().end()) << kernel.name;
        const auto& t = tropical::detail::row_of(kernel).tile;
        const auto& e = found->second.tile;
        EXPECT_TRUE(t.bm == e.bm && t.bn == e.bn && t.bk == e.bk && t.tm == e.tm && t.tn == e.tn && t.sk == e.sk)
            << kernel.name << ": the catalogue's tile differs from the emulated one";
    }
    EXPECT_EQ(rows, 5);
}

TEST(OrAndEmulation, PackBitsEveryLayoutAlignmentAndK) {
    TROPICAL_TEST_RNG(rng);
    for (const PackAs as : {PackAs::A, PackAs::B})
        for (const Layout layout : {Layout::RowMajor, Layout::ColMajor})
            // Past two slices of 512 and one word into the third; under ASan past one (the same
            // code paths, at half the cost of the test's longest runs).
            for (const std::int64_t k : {1, 31, 32, 33, 95, under_address_sanitizer ? 544 : 1056})
                for (const std::int64_t pad : {0, 1, 4, 8}) {
                    // Runs 16-, 8-, 4- and 1-byte aligned: the leading dimension (64 + pad bytes
                    // where the bytes run along the outer dimension) decides.
                    const std::int64_t outer = pad == 0 ? 64 : 70;
                    Geometry g{layout, pad, 3, 5, false};
                    const std::int64_t rows = as == PackAs::A ? outer : k, cols = as == PackAs::A ? k : outer;
                    auto bytes = random_booleans(rng, rows, cols, 0.3, g);
                    const auto want = packed_words(bytes, as, words_geometry(g, pad % 3));
                    auto words = make_matrix<std::uint32_t>(want.rows, want.cols, words_geometry(g, pad % 3));
                    SCOPED_TRACE(std::string(as == PackAs::A ? "A " : "B ") + std::string(to_string(layout)) +
                                 " K=" + std::to_string(k) + " pad " + std::to_string(pad));
                    Request q;
                    q.operation = Operation::PackBits;
                    q.semiring = Semiring::OrAnd, q.dtype = DType::U8;
                    q.a = ref(bytes), q.c = ref(words), q.pack = as, q.batch = 3;
                    run_emulated(q);
                    EXPECT_TRUE(exactly_equal("words", want, words));
                }
}

TEST(OrAndEmulation, ProductsOfBytesAndWordsEveryLayoutAndK) {
    TROPICAL_TEST_RNG(rng);
    const auto& ks = orand_ks();
    for (const bool packed : {false, true})
        for (const bool argmax : {false, true})
            for (int combination = 0; combination < 8; ++combination)
                for (std::size_t i = 0; i < ks.size(); ++i) {
                    // Every K for the first and last combinations, two for the others.
                    if (combination != 0 && combination != 7 && (i + combination) % 4 != 0) continue;
                    const std::int64_t k = ks[i];
                    // Under ASan K stops at 600 (past one slice of 512, as 1056 is past two).
                    if (under_address_sanitizer && k > 600) continue;
                    // A sparse density where K is long, so that results stay false and argmax lands late.
                    check(rng, 130 + combination % 3, 70 + 61 * (combination % 2), k, layout_combination(combination),
                          k > 64 ? 0.02 : 0.15, packed, argmax, !argmax && combination % 3 == 1);
                }
}

TEST(OrAndEmulation, WholeTilesOfAlignedOperandsTakeTheVectorPaths) {
    TROPICAL_TEST_RNG(rng);
    // 256 x 256 with K a multiple of 512 and no padding: interior tiles, 16-byte runs and 128-bit
    // word loads; dense (every result true in its first slice: argmax stops early) and sparse. Two
    // slices of K, one under ASan.
    const std::int64_t k = under_address_sanitizer ? 512 : 1024;
    for (const bool packed : {false, true})
        for (const bool argmax : {false, true})
            for (int combination : {0, 3, 5, 6})
                for (const double density : {0.5, 0.01}) {
                    Geometries g = layout_combination(combination);
                    g.a.pad = g.b.pad = g.c.pad = g.argmax.pad = 0;
                    check(rng, 256, 256, k, g, density, packed, argmax);
                }
}

TEST(OrAndEmulation, EdgeValues) {
    TROPICAL_TEST_RNG(rng);
    for (const bool packed : {false, true})
        for (const std::int64_t k : {1, 33, 95, 600}) {
            SCOPED_TRACE(std::string(packed ? "packed" : "bytes") + " K=" + std::to_string(k));
            const Geometries g = layout_combination(static_cast<int>(k % 8));
            const auto run = [&](OrAndProblem& x) {
                Request q = product_request(Operation::GemmArgmax, x, 1);
                HostMatrix<std::uint32_t> wa, wb;
                if (packed) {
                    wa = packed_words(x.a, PackAs::A, words_geometry(g.a, 1), &rng);
                    wb = packed_words(x.b, PackAs::B, words_geometry(g.b, 2), &rng);
                    q.a = ref(wa), q.b = ref(wb), q.packed_k = k;
                }
                const auto [want_c, want_argmax] = reference_orand_argmax(x.a, x.b, x.c, x.argmax);
                run_emulated(q);
                EXPECT_TRUE(exactly_equal("C", want_c, x.c));
                EXPECT_TRUE(exactly_equal("argmax", want_argmax, x.argmax));
                return want_argmax;
            };
            // All false: C 0, argmax -1.
            OrAndProblem none = orand_problem(rng, 67, 131, k, 0.0, g);
            run(none);
            // All true (any nonzero byte): C 1, argmax 0.
            OrAndProblem all = orand_problem(rng, 67, 131, k, 1.0, g);
            EXPECT_EQ(run(all)(0, 0), 0);
            // One true term per result, at the last k: argmax K - 1.
            OrAndProblem last = orand_problem(rng, 67, 131, k, 0.0, g);
            last.a.for_each([&](std::int64_t, std::int64_t i, std::int64_t) { last.a(i, k - 1) = 7; });
            last.b.for_each([&](std::int64_t, std::int64_t, std::int64_t j) { last.b(k - 1, j) = 0x80; });
            EXPECT_EQ(run(last)(66, 130), k - 1);
        }
}

TEST(OrAndEmulation, BatchesWithGapsAndBroadcasts) {
    TROPICAL_TEST_RNG(rng);
    for (const bool packed : {false, true})
        for (const bool argmax : {false, true})
            for (int combination : {1, 4, 6}) {
                Geometries g = with_count(layout_combination(combination, 1), 3);
                g.a.gap = 3, g.c.gap = 5, g.argmax.gap = 2;
                g.b.broadcast = combination == 4;
                g.a.broadcast = combination == 6;
                check(rng, 40, 135, 77, g, 0.05, packed, argmax);
            }
}

TEST(OrAndEmulation, OneBlockStridesOverEveryTileAndStopsEarlyPerTile) {
    TROPICAL_TEST_RNG(rng);
    // A grid of one block does the 2 x 3 tiles of each of 2 products one after the other; with
    // argmax on dense inputs each tile stops after its first slice, and the next one starts afresh.
    for (const bool packed : {false, true})
        for (const bool argmax : {false, true})
            for (const double density : {0.6, 0.003}) {
                const Geometries g = with_count(layout_combination(packed ? 2 : 5), 2);
                check(rng, 200, 300, 1100, g, density, packed, argmax, false, true);
            }
}

}  // namespace
