// Several processes and the real NVRTC on one cache folder.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <tropical/cache.hpp>
#include "cache/entry_format.hpp"
#include "support/processes.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using tropical::testing::kNoExitLeakCheck;
using tropical::testing::read_text;
using tropical::testing::spawn;
using tropical::testing::TempDir;
using tropical::testing::wait_for;

namespace {

const std::vector<std::string> kKernels = {"tropical_gemm_f32_maxplus", "tropical_backward_a_f32"};

std::vector<std::string> probe_args(const fs::path& dir) {
    std::vector<std::string> args = {CACHE_PROBE, dir.string(), "90"};
    args.insert(args.end(), kKernels.begin(), kKernels.end());
    return args;
}

}  // namespace

TEST(MultiprocessCache, EightProcessesWarmingOneEmptyCacheAllSucceedAndLeaveOnlyValidEntries) {
    TempDir dir;
    const fs::path cache = dir.path() / "cache";
    std::vector<pid_t> pids;
    for (int i = 0; i < 8; ++i)
        pids.push_back(spawn(probe_args(cache), dir.path() / ("out" + std::to_string(i)), kNoExitLeakCheck));
    for (std::size_t i = 0; i < pids.size(); ++i) {
        ASSERT_GT(pids[i], 0);
        EXPECT_EQ(wait_for(pids[i]), 0) << "process " << i << ": "
                                        << read_text(dir.path() / ("out" + std::to_string(i)));
    }
    int entries = 0;
    for (const auto& e : fs::recursive_directory_iterator(tropical::cache_format_directory(cache))) {
        if (!e.is_regular_file()) continue;
        EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << "temp file left behind: " << e.path();
        std::ifstream in(e.path(), std::ios::binary);
        std::vector<char> raw(std::istreambuf_iterator<char>(in), {});
        const auto* bytes = reinterpret_cast<const std::byte*>(raw.data());
        const auto entry = tropical::detail::decode_entry({bytes, raw.size()});
        EXPECT_EQ(entry.check, tropical::detail::EntryCheck::Valid) << e.path();
        ++entries;
    }
    EXPECT_EQ(entries, 5);  // CUBIN and PTX of each kernel, and the compiler identity

    // A ninth process finds everything on disk and never loads NVRTC.
    ASSERT_EQ(wait_for(spawn(probe_args(cache), dir.path() / "warm")), 0);
    EXPECT_EQ(read_text(dir.path() / "warm"), "compiles=0 disk_hits=2 nvrtc_loaded=0\n");
}

TEST(MultiprocessCache, ColdProcessLoadsNvrtcAndCompiles) {
    TempDir dir;
    ASSERT_EQ(wait_for(spawn(probe_args(dir.path()), dir.path() / "cold")), 0);
    EXPECT_EQ(read_text(dir.path() / "cold"), "compiles=2 disk_hits=0 nvrtc_loaded=1\n");
}
