#include <gtest/gtest.h>

#include <set>
#include <string>

#include "registry/kernel_source.hpp"
#include <tropical/error.hpp>
#include <tropical/kernels.hpp>

using namespace tropical;
using namespace tropical::detail;

TEST(KernelRegistry, HasTheDesignCardsKernelsWithUniqueNames) {
    const auto kernels = kernel_registry();
    std::set<std::string_view> names;
    int counts[5] = {};
    for (const auto& k : kernels) {
        EXPECT_TRUE(names.insert(k.name).second) << k.name;
        EXPECT_EQ(&kernels[k.index], &k);
        ++counts[static_cast<int>(k.group)];
    }
    EXPECT_GE(kernels.size(), 31u);
    EXPECT_EQ(counts[static_cast<int>(KernelGroup::Gemm)], 12 + 6);  // and the split-K twins of f32 and i32
    EXPECT_EQ(counts[static_cast<int>(KernelGroup::GemmArgmax)], 12);
    EXPECT_EQ(counts[static_cast<int>(KernelGroup::BackwardA)] + counts[static_cast<int>(KernelGroup::BackwardB)], 4);
    EXPECT_GE(counts[static_cast<int>(KernelGroup::Batched)], 3);
    for (auto s : {Semiring::MaxPlus, Semiring::MinPlus, Semiring::MaxMul})
        EXPECT_NE(find_kernel(KernelGroup::Batched, DType::F32, s), nullptr);
}

TEST(KernelRegistry, FindsByNameAndByKind) {
    const KernelInfo* k = find_kernel("tropical_gemm_f32_maxplus");
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->group, KernelGroup::Gemm);
    EXPECT_EQ(k->dtype, DType::F32);
    EXPECT_EQ(k->semiring, Semiring::MaxPlus);
    EXPECT_EQ(find_kernel(KernelGroup::Gemm, DType::F32, Semiring::MaxPlus), k);
    const KernelInfo* split = find_kernel("tropical_splitk_i32_minplus");
    ASSERT_NE(split, nullptr);
    EXPECT_EQ(split->group, KernelGroup::Gemm);
    EXPECT_EQ(split->dtype, DType::I32);
    EXPECT_EQ(find_kernel("tropical_splitk_f64_maxplus"), nullptr);
    EXPECT_EQ(find_kernel("no_such_kernel"), nullptr);
    EXPECT_EQ(find_kernel(KernelGroup::BackwardA, DType::I32, Semiring::MaxPlus), nullptr);
}

TEST(KernelSource, EveryRegistryKernelHasExactlyOneFragmentAndNoneIsOrphaned) {
    const auto& file = embedded_kernel_source();
    EXPECT_FALSE(file.preamble.empty());
    for (std::size_t at = 0; (at = file.preamble.find("#include", at)) != std::string_view::npos; ++at)
        EXPECT_TRUE(at > 0 && file.preamble[at - 1] != '\n') << "the kernel source must include no headers";
    for (const auto& kernel : kernel_registry()) {
        const auto& fragment = fragment_of(kernel);
        EXPECT_EQ(fragment.name, kernel.name);
        EXPECT_NE(fragment.text.find(std::string(kernel.name) + "("), std::string_view::npos)
            << "fragment " << kernel.name << " does not define its entry point";
        const bool backward = kernel.group == KernelGroup::BackwardA || kernel.group == KernelGroup::BackwardB;
        if (!backward) {
            EXPECT_GT(fragment.tile_m, 0) << kernel.name;
            EXPECT_GT(fragment.tile_n, 0) << kernel.name;
        }
    }
    for (const auto& fragment : file.fragments) EXPECT_NE(find_kernel(fragment.name), nullptr) << fragment.name;
    EXPECT_EQ(file.fragments.size(), kernel_registry().size());
}

TEST(KernelSource, ParsesMarkersAndRejectsBadOnes) {
    const auto file = parse_kernel_source("preamble\n//@kernel name=a threads=128 tile_m=64 tile_n=32\nbody a\n"
                                          "//@kernel name=b threads=256 tile_m=0 tile_n=0\nbody b\n");
    EXPECT_EQ(file.preamble, "preamble\n");
    ASSERT_EQ(file.fragments.size(), 2u);
    EXPECT_EQ(file.fragments[0].name, "a");
    EXPECT_EQ(file.fragments[0].threads, 128);
    EXPECT_EQ(file.fragments[0].tile_m, 64);
    EXPECT_EQ(file.fragments[0].first_line, 2);
    EXPECT_EQ(file.fragments[0].text, "//@kernel name=a threads=128 tile_m=64 tile_n=32\nbody a\n");
    EXPECT_EQ(file.fragments[1].text, "//@kernel name=b threads=256 tile_m=0 tile_n=0\nbody b\n");
    EXPECT_THROW(parse_kernel_source("//@kernel threads=1\n"), Error);
    EXPECT_THROW(parse_kernel_source("//@kernel name=a threads=x\n"), Error);
    EXPECT_THROW(parse_kernel_source("//@kernel name=a threads=32 colour=blue\n"), Error);
    EXPECT_THROW(parse_kernel_source("//@kernel name=a threads=32\n//@kernel name=a threads=32\n"), Error);
}

TEST(KernelSource, TranslationUnitPointsCompilerMessagesAtTheRealFile) {
    const auto file = parse_kernel_source("p\n//@kernel name=a threads=32\nx\n");
    EXPECT_EQ(translation_unit(file, file.fragments[0]), "p\n#line 2 \"kernels/tropical_gemm.cu\"\n//@kernel name=a threads=32\nx\n");
}
