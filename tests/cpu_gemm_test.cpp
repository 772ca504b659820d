// The CPU path (tropical/host.hpp) against the reference, bit for bit: every semiring and type,
// plain, with argmax and accumulating, on shapes that reach every edge of the packing, the register
// tiles and the cache blocks, in every combination of layouts, on one thread and cut into tasks for
// several. Outputs are poisoned first, and padding must stay untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "support/cpu_gemm.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class C>
class CpuGemm : public ::testing::Test {};
TYPED_TEST_SUITE(CpuGemm, AsanSizedCases, CaseName);

// Every edge shape in every layout combination (A, B, C and argmax each row- or column-major, with
// padded leading dimensions), on the best target of this CPU.
TYPED_TEST(CpuGemm, EdgeShapesInEveryLayoutMatchTheReference) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    int salt = case_index<TypeParam>();
    for (const Shape& s : edge_shapes())
        for (int combination = 0; combination < 8; ++combination)
            check_host_products<S, T>(rng, s, layout_combination(combination, salt++), Values::Typical, {.threads = 1});
}

// Many exact ties ({0, 1, 2} and the zero): the argmax must keep the smallest k across micro-kernel
// steps, K blocks and tasks.
TYPED_TEST(CpuGemm, TiesKeepTheSmallestK) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    for (const Shape& s : {Shape{7, 17, 300}, Shape{13, 9, 600}, Shape{3, 40, 70}})
        for (int combination : {0, 5})
            check_host_products<S, T>(rng, s, layout_combination(combination, 2), Values::Ties, {.threads = 1});
}

// Small problems cut into tasks on 2 and 3 threads (more threads than this CI machine's cores), so
// that bands of rows and of columns both meet the tile edges.
TYPED_TEST(CpuGemm, TasksOnSeveralThreadsMatchTheReference) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    SplitSmallWork split;
    for (const Shape& s : {Shape{37, 11, 9}, Shape{5, 70, 20}, Shape{2, 3, 4}, Shape{24, 40, 530}})
        for (int threads : {2, 3})
            for (int combination : {0, 3, 4})
                check_host_products<S, T>(rng, s, layout_combination(combination, threads), Values::Typical,
                                          {.threads = threads});
}

// C wider than a B block (src/cpu/product-inl.h, BlocksFor: KC x NC elements of about 2 MiB): NC is
// 1008 columns for f32 and i32 and 504 for f64 and i64 on AVX2 (1024 and 512 with argmax), 2016 and
// 1008 on AVX-512, 1020 and 510 on SSE4. A column-major C is computed as its transpose (cpu/
// host_product.cpp), so there M is the blocked dimension. 4133 columns cross several blocks on every
// target, and on 2 threads each half (a band of columns) still crosses one. M and K stay small: on 2
// threads on the best target, on 1 on every target this CPU runs. Once, on the best target, a K of
// 515 also crosses a K block (512 terms) inside the column blocks of a C of 2021 columns (more than
// any target's NC).
TYPED_TEST(CpuGemm, ProductsWiderThanAColumnBlockMatchTheReference) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    constexpr std::int64_t wide = 4133;
    struct Case {
        Shape shape;
        int combination;  // of layout_combination: bit 2 set for a column-major C
    };
    // Row-major C, where N is wide, then column-major C, where M is.
    const Case cases[] = {{{3, wide, 7}, 0}, {{5, wide, 4}, 3}, {{wide, 3, 7}, 4}, {{wide, 4, 5}, 7}};
    // The 2-thread runs are cut into bands of columns however little work they hold.
    SplitSmallWork split;
    for (const Case& c : cases)
        check_host_products<S, T>(rng, c.shape, layout_combination(c.combination, 2), Values::Typical, {.threads = 2});
    check_host_products<S, T>(rng, {1, 2021, 515}, layout_combination(1, 1), Values::Typical, {.threads = 1});
    // On one thread, on every target (the cut into bands is the same code on all of them).
    for (const std::int64_t target : cpu::runnable_targets()) {
        ForcedTarget forced(target);
        SCOPED_TRACE(std::string("target ") + cpu::target_name(target));
        for (const Case& c : cases)
            check_host_products<S, T>(rng, c.shape, layout_combination(c.combination, 1), Values::Typical,
                                      {.threads = 1});
    }
}

// Bands of rows on several threads share one packing of B (cpu/host_product.cpp, PackedBLayout):
// 64 rows make 8 bands of whole tiles on 2 threads; 1100 columns cross a column block for 64-bit
// elements (NC 1008 or 504), and for f32 and i32 on AVX2 and SSE4 (1008, 1020); 520 terms cross a
// K block (at most 512). Typical values, then special ones (each packed panel's NaN flag travels
// with the packing), and a narrower C with ties on every target this CPU runs.
TYPED_TEST(CpuGemm, BandsSharingOnePackingOfBMatchTheReference) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    SplitSmallWork split;
    check_host_products<S, T>(rng, {64, 1100, 520}, layout_combination(0, 2), Values::Typical, {.threads = 2});
    check_host_products<S, T>(rng, {64, 90, 530}, layout_combination(1, 2), Values::Typical, {.threads = 2},
                              /*specials=*/true);
    for (const std::int64_t target : cpu::runnable_targets()) {
        ForcedTarget forced(target);
        SCOPED_TRACE(std::string("target ") + cpu::target_name(target));
        check_host_products<S, T>(rng, {67, 40, 515}, layout_combination(2, 3), Values::Ties, {.threads = 2});
    }
}

// A product large enough to be cut into tasks by its size alone, on every core.
TYPED_TEST(CpuGemm, LargeProductOnEveryCoreMatchesTheReference) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    check_host_products<S, T>(rng, {150, 130, 140}, layout_combination(2, 1));
}

}  // namespace
