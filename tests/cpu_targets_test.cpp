// The CPU kernels on every SIMD target this machine can run (AVX2, SSE4 and the portable fallback
// on the CI machine; AVX-512 and NEON where there are), each forced in turn: the same results as the
// reference, bit for bit, on typical and special values, on one thread and on several.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/cpu_gemm.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

template <class C>
class CpuTargets : public ::testing::Test {};
TYPED_TEST_SUITE(CpuTargets, AllCases, CaseName);

TEST(CpuTargetsList, TheBestTargetRunsUnlessAnotherIsForced) {
    const std::vector<std::int64_t> targets = cpu::runnable_targets();
    ASSERT_FALSE(targets.empty());
    std::string names;
    for (const std::int64_t t : targets) names += std::string(cpu::target_name(t)) + " ";
    std::printf("SIMD targets this CPU runs, best first: %s\n", names.c_str());
    EXPECT_STREQ(host::simd_target(), cpu::target_name(targets.front()));
    for (const std::int64_t t : targets) {
        ForcedTarget forced(t);
        EXPECT_STREQ(host::simd_target(), cpu::target_name(t));
    }
    EXPECT_STREQ(host::simd_target(), cpu::target_name(targets.front())) << "forcing must end with its scope";
}

TYPED_TEST(CpuTargets, EveryTargetMatchesTheReference) {
    using S = typename TypeParam::Ring;
    using T = typename TypeParam::Elem;
    TROPICAL_TEST_RNG(rng);
    const std::vector<Shape> shapes = {{7, 17, 5}, {13, 30, 300}, {3, 4, 1}, {33, 9, 20}};
    for (const std::int64_t target : cpu::runnable_targets()) {
        ForcedTarget forced(target);
        SCOPED_TRACE(std::string("target ") + cpu::target_name(target));
        int salt = case_index<TypeParam>();
        for (const Shape& s : shapes) {
            const Geometries g = layout_combination(salt % 8, salt);
            ++salt;
            check_host_products<S, T>(rng, s, g, Values::Typical, {.threads = 1});
            check_host_products<S, T>(rng, s, g, Values::Ties, {.threads = 1});
            check_host_products<S, T>(rng, s, g, Values::Typical, {.threads = 1}, /*specials=*/true);
        }
        SplitSmallWork split;
        for (const Shape& s : {Shape{21, 40, 30}, Shape{20, 21, 530}})
            check_host_products<S, T>(rng, s, layout_combination(salt++ % 8, 3), Values::Typical, {.threads = 2}, true);
    }
}

}  // namespace
