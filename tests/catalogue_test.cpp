// The kernel catalogue (kernels/catalogue.def) and what the host derives from it: the registry's
// names, order and lookups, and the entry point NVRTC compiles for each kernel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tropical/error.hpp>
#include <tropical/kernels.hpp>
#include "catalogue/catalogue.hpp"
#include "catalogue/kernel_source.hpp"
#include "nvrtc/compile_options.hpp"
#include "nvrtc/compiler.hpp"

using namespace tropical;
using namespace tropical::detail;
using ::testing::HasSubstr;

// The catalogue as written in kernels/catalogue.def: its families and its single rows, read with a
// TG_FAMILY of the test's own.
struct Written {
    bool family;
    KernelOperation operation;
    KernelVariant variant;
    DType dtype;
    std::string_view semiring;  // a single row's word ("Counting", "Any"); empty for a family
    TileShape tile;
    int threads, min_blocks;
};

const std::vector<Written>& written() {
    static const std::vector<Written> rows = {
#define TG_WRITTEN(family, operation, variant, type, semiring, bm, bn, bk, tm, tn, sk, threads, min_blocks) \
    {family,                                                                                                \
     KernelOperation::operation,                                                                            \
     KernelVariant::variant,                                                                                \
     DType::type,                                                                                           \
     semiring,                                                                                              \
     {bm, bn, bk, tm, tn, sk},                                                                              \
     threads,                                                                                               \
     min_blocks},
#define TG_KERNEL(operation, variant, type, semiring, ...) \
    TG_WRITTEN(false, operation, variant, type, #semiring, __VA_ARGS__)
#define TG_FAMILY(operation, variant, type, ...) TG_WRITTEN(true, operation, variant, type, "", __VA_ARGS__)
#include "catalogue.def"
#undef TG_FAMILY
#undef TG_KERNEL
#undef TG_WRITTEN
    };
    return rows;
}

constexpr DType kNumberTypes[] = {DType::F32, DType::F64, DType::I32, DType::I64};

// The scalar semirings, those that take every number type, in the table's order: a family's rows.
std::vector<Semiring> scalar_semirings() {
    std::vector<Semiring> scalar;
    for (Semiring s : all_semirings) {
        bool every = true;
        for (DType t : kNumberTypes) every = every && supports(s, t);
        if (every) scalar.push_back(s);
    }
    return scalar;
}

// A family's rows: one per scalar semiring that takes its type (int16 has no MaxMul).
std::size_t family_rows(DType t) {
    std::size_t n = 0;
    for (Semiring s : scalar_semirings()) n += supports(s, t) ? 1 : 0;
    return n;
}

// The groups as tropical/kernels.hpp defines them: gemm (the Tiled, SplitK and Packed products),
// gemm_argmax, batched (the other products), backward_a, backward_b, pack_bits, backtrack.
KernelGroup documented_group(KernelOperation operation, KernelVariant variant) {
    switch (operation) {
    case KernelOperation::Gemm:
        return variant == KernelVariant::Tiled || variant == KernelVariant::SplitK || variant == KernelVariant::Packed
                   ? KernelGroup::Gemm
                   : KernelGroup::Batched;
    case KernelOperation::GemmArgmax: return KernelGroup::GemmArgmax;
    case KernelOperation::BackwardA: return KernelGroup::BackwardA;
    case KernelOperation::BackwardB: return KernelGroup::BackwardB;
    case KernelOperation::PackBits: return KernelGroup::PackBits;
    case KernelOperation::Backtrack: return KernelGroup::Backtrack;
    }
    return KernelGroup::Gemm;
}

// Each family is a row per scalar semiring, in the table's order and with the family's values, and
// each single row is itself, in the order written: the registry's order. Single rows are for the
// other semirings (and Any): a scalar semiring's rows are written as a family.
TEST(KernelCatalogue, IsItsFamiliesAndRowsInTheOrderWritten) {
    const auto rows = catalogue_rows();
    const auto scalar = scalar_semirings();
    ASSERT_FALSE(scalar.empty());
    std::size_t at = 0, family_kernels = 0, singles = 0;
    for (const Written& w : written()) {
        (w.family ? family_kernels : singles) += w.family ? family_rows(w.dtype) : 1;
        // A family's rows: the scalar semirings that take its type (int16 has no MaxMul).
        std::vector<Semiring> taking;
        for (Semiring s : scalar)
            if (supports(s, w.dtype)) taking.push_back(s);
        const std::size_t count = w.family ? taking.size() : 1;
        for (std::size_t i = 0; i < count; ++i) {
            ASSERT_LT(at, rows.size());
            const CatalogueRow& row = rows[at];
            const std::string_view name = kernel_registry()[at].name;
            ++at;
            EXPECT_EQ(row.operation, w.operation) << name;
            EXPECT_EQ(row.variant, w.variant) << name;
            EXPECT_EQ(row.dtype, w.dtype) << name;
            EXPECT_EQ(row.tile.bm, w.tile.bm) << name;
            EXPECT_EQ(row.tile.bn, w.tile.bn) << name;
            EXPECT_EQ(row.tile.bk, w.tile.bk) << name;
            EXPECT_EQ(row.tile.tm, w.tile.tm) << name;
            EXPECT_EQ(row.tile.tn, w.tile.tn) << name;
            EXPECT_EQ(row.tile.sk, w.tile.sk) << name;
            EXPECT_EQ(row.threads, w.threads) << name;
            EXPECT_EQ(row.min_blocks, w.min_blocks) << name;
            if (w.family) {
                EXPECT_EQ(row.semiring, taking[i]) << name;
            } else {
                EXPECT_EQ(row.semiring_word, w.semiring) << name;
                EXPECT_EQ(row.semiring.has_value(), w.semiring != "Any") << name;
                if (row.semiring) {
                    EXPECT_EQ(std::count(scalar.begin(), scalar.end(), *row.semiring), 0)
                        << name << ": a scalar semiring's row outside a family";
                }
            }
        }
    }
    EXPECT_EQ(at, rows.size());
    EXPECT_EQ(rows.size(), family_kernels + singles);
}

TEST(KernelRegistry, HasTheDesignCardsKernelsWithUniqueNames) {
    const auto kernels = kernel_registry();
    ASSERT_EQ(kernels.size(), catalogue_rows().size());
    std::set<std::string_view> names;
    std::map<KernelGroup, std::size_t> counts, expected;
    for (const auto& k : kernels) {
        EXPECT_TRUE(names.insert(k.name).second) << k.name;
        EXPECT_EQ(&kernels[k.index], &k);
        EXPECT_EQ(k.group, documented_group(k.operation, k.variant)) << k.name;
        ++counts[k.group];
    }
    // Each group has the rows written for it: a family's for every scalar semiring that takes its type.
    for (const Written& w : written())
        expected[documented_group(w.operation, w.variant)] += w.family ? family_rows(w.dtype) : 1;
    EXPECT_EQ(counts, expected);

    const auto scalar = scalar_semirings();
    // The kinds of kernel each variant has, for the number types and the scalar semirings: a variant
    // of a type is there for every scalar semiring or for none.
    const auto has = [&](KernelOperation operation, KernelVariant variant, std::initializer_list<DType> types) {
        for (DType t : kNumberTypes)
            for (Semiring s : scalar) {
                const KernelInfo* k = find_kernel(operation, variant, t, s);
                const bool wanted = std::find(types.begin(), types.end(), t) != types.end();
                EXPECT_EQ(k != nullptr, wanted)
                    << to_string(operation) << " " << to_string(variant) << " " << to_string(t) << " " << to_string(s);
                if (k && k->semiring) {
                    EXPECT_EQ(k->semiring, s) << k->name;
                }
            }
    };
    const std::initializer_list<DType> numbers = {DType::F32, DType::F64, DType::I32, DType::I64},
                                       words = {DType::F32, DType::I32}, floats = {DType::F32, DType::F64};
    // Products: every variant for every type but split-K, whose atomics combine 32-bit results.
    for (KernelVariant v : {KernelVariant::Tiled, KernelVariant::Batched, KernelVariant::Small, KernelVariant::Tiny,
                            KernelVariant::Dense, KernelVariant::Wide, KernelVariant::Vector, KernelVariant::Column})
        has(KernelOperation::Gemm, v, numbers);
    has(KernelOperation::Gemm, KernelVariant::SplitK, words);
    // Argmax: every variant for every type but Batched and Serial, for the 32-bit types alone: they
    // trade their Tiled kernel's rescan for others, and the 64-bit types' Tiled kernel tracks every
    // term, so it has no rescan.
    for (KernelVariant v : {KernelVariant::Tiled, KernelVariant::Small, KernelVariant::SplitK, KernelVariant::Tiny,
                            KernelVariant::Dense, KernelVariant::Wide, KernelVariant::Vector, KernelVariant::Column})
        has(KernelOperation::GemmArgmax, v, numbers);
    has(KernelOperation::GemmArgmax, KernelVariant::Batched, words);
    has(KernelOperation::GemmArgmax, KernelVariant::Serial, words);
    // The gradients, for the float types, take the semiring at launch.
    has(KernelOperation::BackwardA, KernelVariant::Scatter, floats);
    has(KernelOperation::BackwardB, KernelVariant::Scatter, floats);
    for (auto s : all_semirings) {
        if (supports(s, DType::F32) && s != Semiring::LogPlus) {
            EXPECT_NE(find_kernel(KernelOperation::Gemm, KernelVariant::Batched, DType::F32, s), nullptr);
            EXPECT_EQ(find_kernel(KernelOperation::Gemm, KernelVariant::Tiny, DType::F32, s) != nullptr,
                      s != Semiring::Counting);
        }
    }
    // LogPlus: its Tiled and Small loops (kernels/logplus.cuh), for f32 and f64.
    for (DType t : {DType::F32, DType::F64})
        for (KernelVariant v : {KernelVariant::Tiled, KernelVariant::Small})
            EXPECT_NE(find_kernel(KernelOperation::Gemm, v, t, Semiring::LogPlus), nullptr);
}

TEST(KernelRegistry, FindsByNameAndByKind) {
    const KernelInfo* k = find_kernel("tropical_gemm_f32_maxplus");
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->group, KernelGroup::Gemm);
    EXPECT_EQ(k->operation, KernelOperation::Gemm);
    EXPECT_EQ(k->variant, KernelVariant::Tiled);
    EXPECT_EQ(k->dtype, DType::F32);
    EXPECT_EQ(k->semiring, Semiring::MaxPlus);
    EXPECT_EQ(find_kernel(KernelOperation::Gemm, KernelVariant::Tiled, DType::F32, Semiring::MaxPlus), k);
    const KernelInfo* split = find_kernel("tropical_splitk_i32_minplus");
    ASSERT_NE(split, nullptr);
    EXPECT_EQ(split->group, KernelGroup::Gemm);
    EXPECT_EQ(split->variant, KernelVariant::SplitK);
    EXPECT_EQ(split->dtype, DType::I32);
    EXPECT_EQ(find_kernel(KernelOperation::Gemm, KernelVariant::SplitK, DType::I32, Semiring::MinPlus), split);
    const KernelInfo* small = find_kernel("tropical_small_f64_maxmul");
    ASSERT_NE(small, nullptr);
    EXPECT_EQ(small->group, KernelGroup::Batched);
    EXPECT_EQ(small->variant, KernelVariant::Small);
    // Backward kernels take the semiring at launch: any semiring finds them.
    const KernelInfo* grad_b = find_kernel("tropical_backward_b_f64");
    ASSERT_NE(grad_b, nullptr);
    EXPECT_FALSE(grad_b->semiring.has_value());
    for (auto s : {Semiring::MaxPlus, Semiring::MinPlus, Semiring::MaxMul})
        EXPECT_EQ(find_kernel(KernelOperation::BackwardB, KernelVariant::Scatter, DType::F64, s), grad_b);
    EXPECT_EQ(find_kernel("tropical_splitk_f64_maxplus"), nullptr);
    EXPECT_EQ(find_kernel("no_such_kernel"), nullptr);
    EXPECT_EQ(find_kernel(KernelOperation::BackwardA, KernelVariant::Scatter, DType::I32, Semiring::MaxPlus), nullptr);
    EXPECT_EQ(find_kernel(KernelOperation::Gemm, KernelVariant::SplitK, DType::F64, Semiring::MaxPlus), nullptr);
    EXPECT_EQ(find_kernel(static_cast<KernelOperation>(9), KernelVariant::Tiled, DType::F32, Semiring::MaxPlus),
              nullptr);
}

// OrAnd's kernels: products of bytes (Tiled) and of packed words (Packed), with and without argmax,
// and the packing (OrAnd's, though it computes no product); nothing else takes u8, and OrAnd nothing else.
TEST(KernelRegistry, OrAndKernelsAndTheirNames) {
    for (const char* name : {"tropical_gemm_u8_orand", "tropical_gemm_argmax_u8_orand", "tropical_packed_u8_orand",
                             "tropical_packed_argmax_u8_orand", "tropical_pack_bits_u8_orand"})
        EXPECT_NE(find_kernel(name), nullptr) << name;
    const KernelInfo* packed = find_kernel(KernelOperation::Gemm, KernelVariant::Packed, DType::U8, Semiring::OrAnd);
    ASSERT_NE(packed, nullptr);
    EXPECT_EQ(packed->name, "tropical_packed_u8_orand");
    EXPECT_EQ(packed->group, KernelGroup::Gemm);
    const KernelInfo* pack = find_kernel("tropical_pack_bits_u8_orand");
    EXPECT_EQ(pack->group, KernelGroup::PackBits);
    EXPECT_EQ(pack->semiring, Semiring::OrAnd);
    EXPECT_EQ(find_kernel(KernelOperation::PackBits, KernelVariant::Packed, DType::U8, Semiring::OrAnd), pack);
    for (const auto& k : kernel_registry()) {
        if (k.semiring) {
            EXPECT_TRUE(supports(*k.semiring, k.dtype)) << k.name;
        }
    }
    EXPECT_EQ(to_string(KernelGroup::PackBits), "pack_bits");
    EXPECT_EQ(to_string(KernelVariant::Packed), "packed");
    EXPECT_EQ(to_string(KernelOperation::PackBits), "pack_bits");
    EXPECT_THAT(entry_point(row_of(*pack), "p"), HasSubstr("p(const TgPackParams p) {\n    tg::pack<256>(p);"));
    EXPECT_THAT(entry_point(row_of(*packed), "q"),
                HasSubstr("tg::product<tg::Packed, false, tg::OrAnd, unsigned char, tg::Tile<128, 128, 16, 8, 8, 8>, "
                          "256>(p);"));
}

TEST(KernelRegistry, WordsOfEveryKind) {
    EXPECT_EQ(to_string(KernelOperation::GemmArgmax), "gemm_argmax");
    EXPECT_EQ(to_string(KernelVariant::SplitK), "splitk");
    EXPECT_EQ(to_string(KernelVariant::Scatter), "scatter");
    EXPECT_EQ(to_string(KernelGroup::Batched), "batched");
    EXPECT_EQ(to_string(KernelOperation::Backtrack), "backtrack");
    EXPECT_EQ(to_string(KernelVariant::Walk), "walk");
    EXPECT_EQ(to_string(KernelGroup::Backtrack), "backtrack");
}

TEST(KernelSource, DeviceCodeIncludesNothingAndNamesItsFiles) {
    const std::string_view code = device_source();
    EXPECT_FALSE(code.empty());
    for (std::size_t at = 0; (at = code.find("#include", at)) != std::string_view::npos; ++at)
        EXPECT_TRUE(at > 0 && code[at - 1] != '\n') << "the device code must include no headers";
    for (const char* piece :
         {"kernels/kernel_params.h", "kernels/semiring.cuh", "kernels/staging.cuh", "kernels/argmax_rescan.cuh",
          "kernels/register_tile.cuh", "kernels/main_loop.cuh", "kernels/small.cuh", "kernels/backward.cuh",
          "kernels/counting.cuh", "kernels/logplus.cuh", "kernels/logplus_backward.cuh", "kernels/logplus_factored.cuh",
          "kernels/logplus_factored_backward.cuh", "kernels/orand_staging.cuh", "kernels/orand.cuh",
          "kernels/backtrack.cuh", "kernels/entry.cuh"})
        EXPECT_THAT(std::string(code), HasSubstr(std::string("#line 1 \"") + piece + "\"\n"));
}

TEST(KernelSource, EveryKernelIsTheDeviceCodeAndAnEntryPointFromItsRow) {
    for (const auto& kernel : kernel_registry()) {
        const CatalogueRow& row = row_of(kernel);
        const std::string unit = kernel_source(kernel);
        EXPECT_TRUE(unit.starts_with(device_source())) << kernel.name;
        EXPECT_THAT(unit, HasSubstr(fmt::format(" {}(const Tg", kernel.name))) << kernel.name;
        EXPECT_THAT(unit, HasSubstr(fmt::format("__launch_bounds__({}", row.threads))) << kernel.name;
        if (kernel.variant != KernelVariant::Scatter && kernel.operation != KernelOperation::PackBits &&
            kernel.operation != KernelOperation::Backtrack) {
            EXPECT_GT(row.tile.bm, 0) << kernel.name;
            EXPECT_GT(row.tile.bn, 0) << kernel.name;
            // The tile's threads, once or in bk / sk groups (kernels/entry.cuh says which variants).
            EXPECT_EQ(row.threads, tile_threads(row) * k_groups(row)) << kernel.name;
            EXPECT_TRUE(k_groups(row) == 1 || k_groups(row) == row.tile.bk / row.tile.sk) << kernel.name;
        }
    }
}

TEST(KernelSource, EntryPointsSayTheirRowInTheDeviceCodesWords) {
    EXPECT_EQ(
        entry_point(row_of(*find_kernel("tropical_gemm_f32_maxplus")), "tropical_gemm_f32_maxplus"),
        "#line 1 \"kernels/catalogue.def: tropical_gemm_f32_maxplus\"\n"
        "extern \"C\" __global__ void __launch_bounds__(256, 2) tropical_gemm_f32_maxplus(const TgGemmParams p) {\n"
        "    tg::product<tg::Tiled, false, tg::MaxPlus, float, tg::Tile<128, 128, 8, 8, 8, 8>, 256>(p);\n}\n");
    EXPECT_THAT(entry_point(row_of(*find_kernel("tropical_gemm_argmax_i64_minplus")), "x"),
                HasSubstr("__launch_bounds__(256) x(const TgGemmParams p) {\n    tg::product<tg::Tiled, true, "
                          "tg::MinPlus, long long, tg::Tile<64, 64, 8, 4, 4, 8>, 256>(p);"));
    EXPECT_THAT(
        entry_point(row_of(*find_kernel("tropical_backward_b_f32")), "y"),
        HasSubstr("__launch_bounds__(1024) y(const TgBackwardParams p) {\n    tg::scatter<float, false, 1024>(p);"));
}

// A row whose threads do not fit its tile does not compile: the entry point's static_assert names
// the mismatch (checked with the real NVRTC, which needs no GPU).
TEST(KernelSource, AnEntryPointWhoseThreadsDoNotFitItsTileFailsToCompile) {
    CatalogueRow row = row_of(*find_kernel("tropical_batched_f32_maxplus"));
    row.threads = 128;  // the 64 x 64 tile with 8 x 8 per thread has 64
    const std::string unit = std::string(device_source()) + "\n" + entry_point(row, "mismatched");
    const auto compiler = make_nvrtc_compiler();
    try {
        compiler->compile("mismatched", unit, compile_options(90, false));
        FAIL() << "a row whose threads do not fit its tile compiled";
    } catch (const CompileError& e) {
        EXPECT_THAT(e.log(), HasSubstr("the row's threads must be its tile's"));
    }
}

// Which variants split K among groups of threads is the device code's to say (kernels/entry.cuh):
// the host reads a row's groups off its threads, and a row whose threads claim groups its kernel
// does not have, or lack the groups it has, does not compile, although its threads are its tile's
// once or bk / sk times.
TEST(KernelSource, AnEntryPointWhoseKGroupsAreNotItsVariantsFailsToCompile) {
    const auto compiler = make_nvrtc_compiler();
    const auto fails = [&](const char* kernel, int threads) {
        CatalogueRow row = row_of(*find_kernel(kernel));
        row.threads = threads;
        EXPECT_TRUE(threads == tile_threads(row) || threads == tile_threads(row) * row.tile.bk / row.tile.sk);
        const std::string unit = std::string(device_source()) + "\n" + entry_point(row, "mismatched");
        try {
            compiler->compile("mismatched", unit, compile_options(90, false));
            ADD_FAILURE() << kernel << " with " << threads << " threads compiled";
        } catch (const CompileError& e) {
            EXPECT_THAT(e.log(), HasSubstr("the row's threads must be its tile's")) << kernel;
        }
    };
    // The Tiled argmax loop does not split K: 128 threads, not 128 x bk / sk = 256.
    fails("tropical_gemm_argmax_f32_maxplus", 256);
    // The argmax SplitK rows split each slice among bk / sk = 4 groups: 256 threads, not 64.
    fails("tropical_splitk_argmax_f32_maxplus", 64);
}

// The rows without a tile check their threads against what their kernels need: grad_B's slab
// columns, the packing's whole warps, a block for the backtrack.
TEST(KernelSource, EntryPointsWithoutATileCheckTheirThreads) {
    const auto compiler = make_nvrtc_compiler();
    const auto fails = [&](const char* kernel, int threads, const char* message) {
        CatalogueRow row = row_of(*find_kernel(kernel));
        row.threads = threads;
        const std::string unit = std::string(device_source()) + "\n" + entry_point(row, "mismatched");
        try {
            compiler->compile("mismatched", unit, compile_options(90, false));
            ADD_FAILURE() << kernel << " with " << threads << " threads compiled";
        } catch (const CompileError& e) {
            EXPECT_THAT(e.log(), HasSubstr(message)) << kernel;
        }
    };
    fails("tropical_backward_b_f32", 1020, "a multiple of a slab's columns");  // slabs of 8 columns
    fails("tropical_backward_a_f64", 2048, "must fit a block");
    fails("tropical_pack_bits_u8_orand", 100, "must be whole warps");
    fails("tropical_backtrack_i32", 2048, "must fit a block");
}
