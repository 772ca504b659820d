// tropical-gemm-warmup's default command, run as a user runs it: a separate process, on a temporary
// cache folder, with the real NVRTC and no GPU (--arch). What it prints is checked against the disk.
#include "support/warmup_tool.hpp"

#include <cstdio>
#include <set>

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace tropical::testing::warmup;
using tropical::testing::TempDir;

TEST(Warmup, ArchModeFillsATemporaryCacheForSm80AndSm90) {
    TempDir dir;
    const ToolRun run = warmup(
        {"--cache-dir", dir.path().string(), "--arch", "sm_80,sm_90", "--group", "gemm", "--type", "f32", "--json"});
    ASSERT_EQ(run.code, 0) << describe(run);
    const Json doc = run.json();
    EXPECT_EQ(doc["command"].text, "warm");
    EXPECT_EQ(doc["exit_code"].integer(), 0);
    // The f32 gemm group: 5 semirings, each with its split-K twin, and the counting and LogPlus
    // products (no split-K), for 2 architectures.
    EXPECT_EQ(doc["compiled"].integer(), 24);
    EXPECT_EQ(doc["cached"].integer(), 0);
    EXPECT_EQ(doc["failed"].integer(), 0);
    ASSERT_EQ(doc["results"].size(), 24u);
    for (const auto& r : doc["results"].items) {
        EXPECT_EQ(r["status"].text, "compiled");
        EXPECT_GT(r["seconds"].number, 0.0);
        EXPECT_EQ(r["group"].text, "gemm");
        // Each result says how its kernel computes, as the registry does.
        const tropical::KernelInfo* kernel = tropical::find_kernel(r["kernel"].text);
        ASSERT_NE(kernel, nullptr) << r["kernel"].text;
        EXPECT_EQ(r["operation"].text, tropical::to_string(kernel->operation));
        EXPECT_EQ(r["variant"].text, tropical::to_string(kernel->variant));
    }
    expect_cache_holds(dir.path(), kGemmF32, {80, 90});
    expect_listing_matches_disk(dir.path());
}

TEST(Warmup, SecondRunCompilesNothingAndNeedsNoNvrtc) {
    TempDir dir;
    const std::vector<std::string> args = {"--cache-dir", dir.path().string(), "--arch", "sm_90", "--kernel", kTwo,
                                           "--json"};
    ASSERT_EQ(warmup(args).code, 0);
    // An entry not used for an hour is touched by the hit: least-recently-used trimming sees the use.
    const fs::path cubin = entry_path(dir.path(), "tropical_gemm_f32_maxplus", 90, ".cubin");
    set_mtime(cubin, std::chrono::hours(1));

    const ToolRun again = warmup(args);
    ASSERT_EQ(again.code, 0) << describe(again);
    const Json doc = again.json();
    EXPECT_EQ(doc["compiled"].integer(), 0);
    EXPECT_EQ(doc["cached"].integer(), 2);
    EXPECT_GT(mtime(cubin), std::chrono::system_clock::now() - std::chrono::minutes(5));

    // A warm cache shipped to a machine without the toolkit.
    const ToolRun without_nvrtc = warmup(args, {{"TROPICAL_GEMM_NVRTC", "/nonexistent/libnvrtc.so.13"}});
    ASSERT_EQ(without_nvrtc.code, 0) << describe(without_nvrtc);
    EXPECT_EQ(without_nvrtc.json()["cached"].integer(), 2);
}

TEST(Warmup, PlainLinesWhenOutputIsNotATerminal) {
    TempDir dir;
    const ToolRun run = warmup({"--cache-dir", dir.path().string(), "--arch", "sm_90", "--kernel", kTwo});
    ASSERT_EQ(run.code, 0) << describe(run);
    EXPECT_THAT(run.out, Not(HasSubstr("\r")));
    EXPECT_THAT(run.out, ::testing::ContainsRegex("compiled +sm_90 +tropical_gemm_f32_maxplus"));
    EXPECT_THAT(run.out, ::testing::ContainsRegex("compiled +sm_90 +tropical_backward_a_f32"));
    EXPECT_THAT(run.out, HasSubstr("2 compiled, 0 already cached"));
    const ToolRun quiet = warmup({"--cache-dir", dir.path().string(), "--arch", "sm_90", "--kernel", kTwo, "--quiet"});
    EXPECT_EQ(quiet.code, 0);
    EXPECT_EQ(quiet.out, "");
}

// --variant selects by how a kernel computes, with the other options, from the registry.
TEST(Warmup, VariantSelectsKernelsByHowTheyCompute) {
    TempDir dir;
    auto listed = [&](const std::vector<std::string>& selection) {
        std::vector<std::string> args = {"--cache-dir", dir.path().string(), "--list", "--json"};
        args.insert(args.end(), selection.begin(), selection.end());
        const ToolRun run = warmup(args);
        EXPECT_EQ(run.code, 0) << describe(run);
        const Json doc = run.json();
        std::vector<std::string> names;
        for (const auto& k : doc["kernels"].items) {
            const tropical::KernelInfo* kernel = tropical::find_kernel(k["name"].text);
            EXPECT_NE(kernel, nullptr) << k["name"].text;
            if (kernel) {
                EXPECT_EQ(k["variant"].text, tropical::to_string(kernel->variant)) << k["name"].text;
                EXPECT_EQ(k["operation"].text, tropical::to_string(kernel->operation)) << k["name"].text;
            }
            names.push_back(k["name"].text);
        }
        return names;
    };
    auto registry_where = [](auto matches) {
        std::vector<std::string> names;
        for (const auto& k : tropical::kernel_registry())
            if (matches(k)) names.emplace_back(k.name);
        return names;
    };
    using tropical::KernelVariant;
    const auto splitk = listed({"--variant", "splitk"});
    EXPECT_FALSE(splitk.empty());
    EXPECT_EQ(splitk, registry_where([](const auto& k) { return k.variant == KernelVariant::SplitK; }));
    EXPECT_EQ(listed({"--variant", "small,batched", "--type", "f64"}), registry_where([](const auto& k) {
                  return (k.variant == KernelVariant::Small || k.variant == KernelVariant::Batched) &&
                         k.dtype == tropical::DType::F64;
              }));
    // The gemm group is the tiled products and their split-K twins; --variant narrows it to either.
    EXPECT_EQ(
        listed({"--group", "gemm", "--type", "f32", "--variant", "tiled"}),
        (std::vector<std::string>{"tropical_gemm_f32_maxplus", "tropical_gemm_f32_minplus", "tropical_gemm_f32_maxmul",
                                  "tropical_gemm_f32_maxmin", "tropical_gemm_f32_minmax", "tropical_gemm_f32_counting",
                                  "tropical_gemm_f32_logplus"}));
    // The counting semiring's rows, by its name: Tiled, Batched and Small of f32 and f64.
    const auto counting = listed({"--semiring", "counting"});
    EXPECT_EQ(counting.size(), 6u);
    EXPECT_EQ(counting, registry_where([](const auto& k) { return k.semiring == tropical::Semiring::Counting; }));
    EXPECT_EQ(listed({"--variant", "scatter"}),
              registry_where([](const auto& k) { return k.variant == KernelVariant::Scatter; }));
    EXPECT_TRUE(files_under(dir.path()).empty()) << "a listing must not create the cache";
}

// The batched variants of one type and semiring through the tool, for two architectures, then a warm
// run and a verification of every entry. (That every kernel of the catalogue compiles is
// kernel_compile_test's one pass over them all; compiling them all here too doubled CI's NVRTC time.)
TEST(Warmup, BatchedVariantsOfOneTypeForSm80AndSm90ThenAWarmRun) {
    TempDir dir;
    // The batched group (every variant of a product but the big-tile ones, which compile slowest) and
    // the backtrack kernel: kernel_compile_test compiles every kernel once; this is the tool's run.
    const std::vector<std::string> args = {
        "--cache-dir", dir.path().string(), "--arch", "sm_80,sm_90", "--type", "i32", "--semiring", "maxmin",
        "--group",     "batched,backtrack", "--json"};
    std::vector<std::string> selected;
    std::set<tropical::KernelVariant> variants;
    for (const auto& kernel : tropical::kernel_registry())
        if (kernel.dtype == tropical::DType::I32 &&
            (kernel.group == tropical::KernelGroup::Batched || kernel.group == tropical::KernelGroup::Backtrack) &&
            (!kernel.semiring || kernel.semiring == tropical::Semiring::MaxMin)) {
            selected.emplace_back(kernel.name);
            variants.insert(kernel.variant);
        }
    ASSERT_GE(variants.size(), 8u) << "the selection should reach most variants";
    const auto n = static_cast<long long>(selected.size());
    const ToolRun cold = warmup(args);
    ASSERT_EQ(cold.code, 0) << describe(cold);
    const Json doc = cold.json();
    EXPECT_EQ(doc["compiled"].integer(), 2 * n);
    EXPECT_EQ(doc["failed"].integer(), 0);
    for (const auto& g : doc["compile_seconds_by_group"].items)
        std::printf("%s %-12s %2lld kernels, NVRTC seconds summed: %.2f\n", g["arch"].text.c_str(),
                    g["group"].text.c_str(), g["kernels"].integer(), g["seconds"].number);
    std::printf("cold warm-up of %lld kernels x 2 architectures: %.1f s\n", n, cold.seconds);
    expect_cache_holds(dir.path(), selected, {80, 90});
    expect_listing_matches_disk(dir.path());

    const ToolRun warm = warmup(args);
    ASSERT_EQ(warm.code, 0) << describe(warm);
    EXPECT_EQ(warm.json()["compiled"].integer(), 0);
    EXPECT_EQ(warm.json()["cached"].integer(), 2 * n);
    std::printf("warm run: %.3f s\n", warm.seconds);

    const ToolRun verify = warmup({"--cache-dir", dir.path().string(), "--verify", "--json"});
    EXPECT_EQ(verify.code, 0) << describe(verify);
    EXPECT_EQ(verify.json()["checked"].integer(), 4 * n);
}
