// Every input in tests/fuzz/regressions/<target>/ (inputs that once crashed a fuzzer) and in
// tests/fuzz/corpus/<target>/ (the seeds), replayed through the fuzz target in the normal suite: a
// fixed bug stays fixed, in every build, with or without sanitizers and without clang.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/targets.hpp"

namespace fs = std::filesystem;

namespace {

struct Target {
    const char* name;
    int (*run)(const std::uint8_t*, std::size_t);
};

const Target kTargets[] = {
    {"cache_entry", tropical::fuzz::cache_entry},
    {"request", tropical::fuzz::request},
};

class FuzzReplay : public ::testing::TestWithParam<Target> {};

TEST_P(FuzzReplay, EveryRegressionAndSeedInputPasses) {
    int replayed = 0;
    for (const char* kind : {"regressions", "corpus"}) {
        const fs::path folder = fs::path(TROPICAL_SOURCE_DIR) / "tests/fuzz" / kind / GetParam().name;
        if (!fs::is_directory(folder)) continue;
        for (const auto& file : fs::directory_iterator(folder)) {
            if (!file.is_regular_file() || file.path().filename().string().starts_with(".")) continue;
            std::ifstream in(file.path(), std::ios::binary);
            const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
            // A crash aborts the test: the log then names the input last replayed.
            std::fprintf(stderr, "replaying %s\n", file.path().c_str());
            EXPECT_EQ(GetParam().run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 0);
            ++replayed;
        }
    }
    EXPECT_GT(replayed, 0) << "no seed corpus for " << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, ::testing::ValuesIn(kTargets),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
