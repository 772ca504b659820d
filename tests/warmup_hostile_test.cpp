// The real tropical-gemm-warmup against hostile files in its cache, as a user would meet them: the
// compiler record (v1/nvrtc-identity) replaced by a FIFO, a folder or a 100 GiB sparse file, and
// an entry (a CUBIN) replaced by a FIFO or a 100 GiB sparse file. Each command (--list, --verify,
// --clear, --max-size 0, and a warm-up with --arch sm_90, compiled by NVRTC with no GPU) finishes
// within a time bound (it is killed after 20 s, and the test fails) and a memory bound, prints one
// valid JSON document with its exit code, exits as it should (0; 1 for --verify of a cache whose
// entry does not verify), and leaves a cache that works: a warm-up after it stores the kernel,
// --verify passes, and the next warm-up finds the kernel on disk.
#include "support/warmup_tool.hpp"

#include <iostream>

#include "support/hostile_files.hpp"

namespace fs = std::filesystem;
using namespace tropical::testing::warmup;
using tropical::testing::TempDir;

namespace {

constexpr auto kTimeBound = std::chrono::seconds(20);
constexpr long kMemoryBoundKiB = 512 * 1024;            // far below the 100 GiB that reading a file whole takes
const std::string kKernel = "tropical_backward_a_f32";  // one of the quickest to compile

enum class Hostile { RecordFifo, RecordFolder, RecordSparse, EntryFifo, EntrySparse };
const char* name_of(Hostile h) {
    switch (h) {
    case Hostile::RecordFifo: return "RecordFifo";
    case Hostile::RecordFolder: return "RecordFolder";
    case Hostile::RecordSparse: return "RecordSparse";
    case Hostile::EntryFifo: return "EntryFifo";
    case Hostile::EntrySparse: return "EntrySparse";
    }
    return "?";
}
bool in_entry(Hostile h) { return h == Hostile::EntryFifo || h == Hostile::EntrySparse; }

enum class Command { List, Verify, Clear, TrimToZero, Warm };
const char* name_of(Command c) {
    switch (c) {
    case Command::List: return "List";
    case Command::Verify: return "Verify";
    case Command::Clear: return "Clear";
    case Command::TrimToZero: return "TrimToZero";
    case Command::Warm: return "Warm";
    }
    return "?";
}

std::vector<std::string> args_of(Command c, const fs::path& cache) {
    std::vector<std::string> args = {"--cache-dir", cache.string(), "--json"};
    switch (c) {
    case Command::List: args.emplace_back("--list"); break;
    case Command::Verify: args.emplace_back("--verify"); break;
    case Command::Clear: args.emplace_back("--clear"); break;
    case Command::TrimToZero: args.insert(args.end(), {"--max-size", "0"}); break;
    case Command::Warm: args.insert(args.end(), {"--arch", "sm_90", "--kernel", kKernel}); break;
    }
    return args;
}

bool put(Hostile h, const fs::path& at) {
    std::error_code ec;
    fs::remove(at, ec);  // false, and no error, where nothing was there
    if (!tropical::testing::no_error(ec, "removing " + at.string())) return false;
    switch (h) {
    case Hostile::RecordFifo:
    case Hostile::EntryFifo: return tropical::testing::make_fifo(at);
    case Hostile::RecordFolder: return fs::create_directory(at, ec);
    case Hostile::RecordSparse:
    case Hostile::EntrySparse: return tropical::testing::make_sparse(at, std::uint64_t{100} << 30);
    }
    return false;
}

// A cache warmed by the tool with the kernel for sm_90, made once and copied for each case.
class HostileCache : public ::testing::TestWithParam<std::tuple<Hostile, Command>> {
protected:
    static void SetUpTestSuite() {
        warm_template_ = new TempDir;
        const ToolRun warm = warmup(args_of(Command::Warm, warm_template_->path() / "cache"), {}, kTimeBound);
        warmed_ = warm.code == 0;
        if (!warmed_) std::cerr << "warming the template cache failed: " << describe(warm) << "\n";
    }
    static void TearDownTestSuite() {
        delete warm_template_;
        warm_template_ = nullptr;
    }
    static TempDir* warm_template_;
    static bool warmed_;
};
TempDir* HostileCache::warm_template_ = nullptr;
bool HostileCache::warmed_ = false;

}  // namespace

TEST_P(HostileCache, EachCommandFinishesInABoundAndLeavesACacheThatWorks) {
    const auto [hostile, command] = GetParam();
    ASSERT_TRUE(warmed_) << "no NVRTC here to warm the cache with?";
    TempDir dir;
    const fs::path cache = dir.path() / "cache";
    fs::copy(warm_template_->path() / "cache", cache, fs::copy_options::recursive);
    const fs::path target = in_entry(hostile) ? entry_path(cache, kKernel, 90, ".cubin")
                                              : tropical::cache_format_directory(cache) / "nvrtc-identity";
    ASSERT_FALSE(target.empty());
    if (!put(hostile, target)) GTEST_SKIP() << "cannot make a " << name_of(hostile) << " here";

    const ToolRun run = warmup(args_of(command, cache), {}, kTimeBound);
    ASSERT_FALSE(run.killed) << describe(run);
    EXPECT_LT(run.max_rss_kib, kMemoryBoundKiB) << describe(run);
    // An entry that does not verify is what --verify exists to report (exit 1); the rest succeeds.
    const int expected = command == Command::Verify && in_entry(hostile) ? 1 : 0;
    EXPECT_EQ(run.code, expected) << describe(run);
    const Json doc = run.json();  // one valid JSON document, whatever was in the cache
    EXPECT_EQ(doc["exit_code"].integer(), run.code);
    if (command == Command::Clear) {
        struct stat info {};
        EXPECT_NE(::lstat(target.c_str(), &info), 0) << "--clear leaves the " << name_of(hostile) << " in its place";
    }

    // Usable afterwards: a warm-up stores the kernel (compiling it where it is not on disk, whole),
    // --verify passes, and the next warm-up finds it there.
    const ToolRun warm = warmup(args_of(Command::Warm, cache), {}, kTimeBound);
    ASSERT_FALSE(warm.killed) << describe(warm);
    EXPECT_EQ(warm.code, 0) << describe(warm);
    const ToolRun verify = warmup(args_of(Command::Verify, cache), {}, kTimeBound);
    EXPECT_EQ(verify.code, 0) << describe(verify);
    const ToolRun again = warmup(args_of(Command::Warm, cache), {}, kTimeBound);
    ASSERT_EQ(again.code, 0) << describe(again);
    EXPECT_EQ(again.json()["compiled"].integer(), 0) << "the kernel is not found on disk: " << describe(again);
    std::vector<std::byte> storage;
    const fs::path cubin = entry_path(cache, kKernel, 90, ".cubin");
    ASSERT_FALSE(cubin.empty());
    EXPECT_EQ(decode(cubin, storage).check, tropical::detail::EntryCheck::Valid);
}

INSTANTIATE_TEST_SUITE_P(EveryCommand, HostileCache,
                         ::testing::Combine(::testing::Values(Hostile::RecordFifo, Hostile::RecordFolder,
                                                              Hostile::RecordSparse, Hostile::EntryFifo,
                                                              Hostile::EntrySparse),
                                            ::testing::Values(Command::List, Command::Verify, Command::Clear,
                                                              Command::TrimToZero, Command::Warm)),
                         [](const auto& info) {
                             return std::string(name_of(std::get<0>(info.param))) + "_" +
                                    name_of(std::get<1>(info.param));
                         });
