// The CPU path (tropical/host.hpp) against the reference, bit for bit: every semiring and type,
// plain, with argmax and accumulating, on shapes that reach every edge of the packing, the register
// tiles and the cache blocks, in every combination of layouts, on one thread and cut into tasks for
// several. Outputs are poisoned first, and padding must stay untouched.
#include <gtest/gtest.h>

#include <cstdint>

#include "support/cpu_gemm.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class C>
class CpuGemm : public ::testing::Test {};
TYPED_TEST_SUITE(CpuGemm, AllCases, CaseName);

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

// A product large enough to be cut into tasks by its size alone, on every core.
TYPED_TEST(CpuGemm, LargeProductOnEveryCoreMatchesTheReference) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    check_host_products<S, T>(rng, {150, 130, 140}, layout_combination(2, 1));
}

}  // namespace
