// tropical-gemm-warmup's cache commands, run as a user runs them: --list, --verify, --clear and
// --max-size on a temporary cache folder filled by the tool itself (--arch, no GPU).
#include "support/checked_calls.hpp"
#include "support/warmup_tool.hpp"

#include <sys/file.h>
#include <unistd.h>

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using namespace tropical::testing::warmup;
using tropical::testing::TempDir;

TEST(Warmup, ListInWordsShowsWhichArchitecturesHoldEachKernel) {
    TempDir dir;
    ASSERT_EQ(warmup({"--cache-dir", dir.path().string(), "--arch", "sm_80,sm_90", "--kernel", kTwo, "-q"}).code, 0);
    const ToolRun list = warmup({"--cache-dir", dir.path().string(), "--list"});
    ASSERT_EQ(list.code, 0) << describe(list);
    EXPECT_THAT(list.out, HasSubstr(tropical::cache_format_directory(dir.path()).string()));
    EXPECT_THAT(list.out, ::testing::ContainsRegex("tropical_gemm_f32_maxplus +gemm +f32 +maxplus +sm_80, sm_90"));
    EXPECT_THAT(list.out, ::testing::ContainsRegex("tropical_backward_a_f32 +backward_a +f32 +any +sm_80, sm_90"));
    EXPECT_THAT(list.out, ::testing::ContainsRegex("tropical_gemm_f64_maxplus +gemm +f64 +maxplus +-"));
}

TEST(Warmup, VerifyNamesEachCorruptedEntryAndAWarmUpRepairsThem) {
    TempDir dir;
    ASSERT_EQ(warmup({"--cache-dir", dir.path().string(), "--arch", "sm_90", "--kernel", kTwo, "-q"}).code, 0);
    const ToolRun clean = warmup({"--cache-dir", dir.path().string(), "--verify"});
    EXPECT_EQ(clean.code, 0) << describe(clean);

    const fs::path flipped = entry_path(dir.path(), "tropical_gemm_f32_maxplus", 90, ".cubin");
    const fs::path truncated = entry_path(dir.path(), "tropical_backward_a_f32", 90, ".ptx");
    {
        std::string bytes = read_text(flipped);
        bytes[bytes.size() / 2] ^= 0x10;
        std::ofstream(flipped, std::ios::binary | std::ios::trunc) << bytes;
        bytes = read_text(truncated);
        bytes.resize(bytes.size() - 100);
        std::ofstream(truncated, std::ios::binary | std::ios::trunc) << bytes;
    }
    const ToolRun verify = warmup({"--cache-dir", dir.path().string(), "--verify"});
    EXPECT_EQ(verify.code, 1) << describe(verify);
    EXPECT_THAT(verify.out, HasSubstr(flipped.string() + ": corrupted (checksum mismatch)"));
    EXPECT_THAT(verify.out, HasSubstr(truncated.string() + ": truncated"));

    const ToolRun json = warmup({"--cache-dir", dir.path().string(), "--verify", "--json"});
    EXPECT_EQ(json.code, 1);
    const Json doc = json.json();
    EXPECT_EQ(doc["exit_code"].integer(), 1);
    EXPECT_EQ(doc["invalid"].integer(), 2);
    std::map<std::string, std::string> problems;
    for (const auto& e : doc["entries"].items)
        if (!e["valid"].boolean) problems[e["path"].text] = e["problem"].text;
    EXPECT_EQ(problems, (std::map<std::string, std::string>{
                            {flipped.string(), "corrupted (checksum mismatch)"},
                            {truncated.string(), "truncated or padded (length does not match its header)"}}));

    // Warming again rewrites both: the bad CUBIN, and the CUBIN whose PTX twin was bad.
    const ToolRun repair = warmup({"--cache-dir", dir.path().string(), "--arch", "sm_90", "--kernel", kTwo, "--json"});
    ASSERT_EQ(repair.code, 0) << describe(repair);
    EXPECT_EQ(repair.json()["compiled"].integer(), 2);
    const ToolRun after = warmup({"--cache-dir", dir.path().string(), "--verify"});
    EXPECT_EQ(after.code, 0) << describe(after);
    expect_cache_holds(dir.path(), {"tropical_gemm_f32_maxplus", "tropical_backward_a_f32"}, {90});
}

TEST(Warmup, ClearRemovesEntriesAndLeftoversButNothingItDidNotCreate) {
    TempDir dir;
    ASSERT_EQ(warmup({"--cache-dir", dir.path().string(), "--arch", "sm_90", "--kernel", kTwo, "-q"}).code, 0);
    const fs::path v1 = tropical::cache_format_directory(dir.path());
    const fs::path cubin = entry_path(dir.path(), "tropical_gemm_f32_maxplus", 90, ".cubin");
    const fs::path leftover = cubin.string() + ".tmp-4242-deadbeef";
    const fs::path in_flight = cubin.string() + ".tmp-4243-cafe";
    std::ofstream(leftover) << "a write killed half-way";
    set_mtime(leftover, std::chrono::hours(1));
    std::ofstream(in_flight) << "a write under way in another process";
    // Its writer holds it locked until the rename (a temp file found unlocked is a dead writer's).
    const int writer = ::open(in_flight.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_EQ(::flock(writer, LOCK_EX), 0);
    std::ofstream(dir.path() / "keep-root.txt") << "mine";
    std::ofstream(v1 / "README") << "mine";
    std::ofstream(v1 / "sm_90" / "notes.cubin") << "mine, and no key in the name";

    const ToolRun clear = warmup({"--cache-dir", dir.path().string(), "--clear", "--json"});
    ASSERT_EQ(clear.code, 0) << describe(clear);
    const Json doc = clear.json();
    EXPECT_EQ(doc["removed_entries"].integer(), 4);
    EXPECT_EQ(doc["removed_files"].integer(), 6);  // and the leftover temp file and the compiler record
    EXPECT_EQ(files_under(dir.path()), (std::set<std::string>{"keep-root.txt", "v1/README", "v1/sm_90/notes.cubin",
                                                              fs::relative(in_flight, dir.path()).string()}));
    EXPECT_TRUE(tropical::testing::close_fd(writer));
    // An empty cache clears again without complaint.
    EXPECT_EQ(warmup({"--cache-dir", (dir.path() / "never-used").string(), "--clear"}).code, 0);
}

TEST(Warmup, MaxSizeRemovesTheLeastRecentlyUsedCubinTogetherWithItsPtx) {
    TempDir dir;
    ASSERT_EQ(warmup({"--cache-dir", dir.path().string(), "--arch", "sm_90", "--group", "gemm", "--type", "f32",
                      "--semiring", "maxplus,minplus,maxmul", "-q"})
                  .code,
              0);
    auto files_of = [&](const std::string& k) {
        return std::pair{entry_path(dir.path(), k, 90, ".cubin"), entry_path(dir.path(), k, 90, ".ptx")};
    };
    // gemm maxplus: used a minute ago (its PTX, never read, is older than the other gemm entries);
    // minplus 2 h, maxmul 1 h; the split-K kernels 4 to 6 h.
    const auto [maxplus_cubin, maxplus_ptx] = files_of("tropical_gemm_f32_maxplus");
    set_mtime(maxplus_cubin, std::chrono::minutes(1));
    set_mtime(maxplus_ptx, std::chrono::hours(3));
    for (const auto& [k, age] :
         {std::pair{"tropical_gemm_f32_minplus", 2}, std::pair{"tropical_gemm_f32_maxmul", 1},
          std::pair{"tropical_splitk_f32_maxplus", 4}, std::pair{"tropical_splitk_f32_minplus", 5},
          std::pair{"tropical_splitk_f32_maxmul", 6}}) {
        const auto [c, p] = files_of(k);
        set_mtime(c, std::chrono::hours(age));
        set_mtime(p, std::chrono::hours(age));
    }
    const auto keep = fs::file_size(maxplus_cubin) + fs::file_size(maxplus_ptx);
    const ToolRun trim =
        warmup({"--cache-dir", dir.path().string(), "--max-size", std::to_string(keep + 10), "--json"});
    ASSERT_EQ(trim.code, 0) << describe(trim);
    const Json doc = trim.json();
    EXPECT_EQ(doc["command"].text, "trim");
    EXPECT_EQ(doc["bytes_after"].integer(), static_cast<long long>(keep));
    std::vector<std::string> removed;
    for (const auto& e : doc["removed"].items) removed.push_back(e["kernel"].text + "." + e["kind"].text);
    EXPECT_EQ(removed, (std::vector<std::string>{"tropical_splitk_f32_maxmul.cubin", "tropical_splitk_f32_maxmul.ptx",
                                                 "tropical_splitk_f32_minplus.cubin", "tropical_splitk_f32_minplus.ptx",
                                                 "tropical_splitk_f32_maxplus.cubin", "tropical_splitk_f32_maxplus.ptx",
                                                 "tropical_gemm_f32_minplus.cubin", "tropical_gemm_f32_minplus.ptx",
                                                 "tropical_gemm_f32_maxmul.cubin", "tropical_gemm_f32_maxmul.ptx"}));
    expect_cache_holds(dir.path(), {"tropical_gemm_f32_maxplus"}, {90});

    // Within the bound already: nothing to do.
    const ToolRun again = warmup({"--cache-dir", dir.path().string(), "--max-size", "1G", "--json"});
    EXPECT_EQ(again.code, 0);
    EXPECT_EQ(again.json()["removed"].size(), 0u);
}
