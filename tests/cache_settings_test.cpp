// The cache settings from the environment, and what an empty TROPICAL_GEMM_CACHE_DIR means: no
// disk cache at all (kernels in memory, one warning), never the user's default cache, which a
// script with an unset variable would otherwise use and a --clear would empty.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include <tropical/cache.hpp>
#include "loader/kernel_binaries.hpp"
#include "support/checked_calls.hpp"
#include "support/temp_dir.hpp"
#include "support/warning_capture.hpp"

using namespace tropical;
using tropical::testing::TempDir;
using tropical::testing::WarningCapture;
namespace fs = std::filesystem;

namespace {

// Sets (or, with nullopt, unsets) a variable for the life of the object.
class ScopedEnv {
public:
    ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) EXPECT_TRUE(tropical::testing::set_env(name, *value));
        else EXPECT_TRUE(tropical::testing::unset_env(name));
    }
    ~ScopedEnv() {
        if (old_) EXPECT_TRUE(tropical::testing::set_env(name_, *old_));
        else EXPECT_TRUE(tropical::testing::unset_env(name_));
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// A default cache (under XDG_CACHE_HOME) with one file in it, that nothing may touch.
struct DefaultCache {
    TempDir home;
    fs::path file = home.path() / "tropical-gemm" / "v1" / "sm_90" / "keep.txt";
    ScopedEnv xdg{"XDG_CACHE_HOME", home.path().string()};
    DefaultCache() {
        fs::create_directories(file.parent_path());
        std::ofstream(file) << "the user's real cache";
    }
};

}  // namespace

TEST(CacheSettings, UnsetUsesTheDefaultAndAFolderIsUsedAsGiven) {
    DefaultCache defaults;
    {
        ScopedEnv dir("TROPICAL_GEMM_CACHE_DIR", std::nullopt);
        const CacheSettings settings = cache_settings_from_environment();
        EXPECT_TRUE(settings.enabled);
        EXPECT_EQ(settings.root, defaults.home.path() / "tropical-gemm");
        EXPECT_EQ(cache_disabled_reason(), "");
    }
    ScopedEnv dir("TROPICAL_GEMM_CACHE_DIR", "/somewhere/else");
    EXPECT_EQ(cache_settings_from_environment().root, fs::path("/somewhere/else"));
}

TEST(CacheSettings, AnEmptyCacheDirDisablesTheDiskCacheAndSaysWhatToDo) {
    DefaultCache defaults;
    ScopedEnv dir("TROPICAL_GEMM_CACHE_DIR", "");
    const CacheSettings settings = cache_settings_from_environment();
    EXPECT_FALSE(settings.enabled);
    EXPECT_TRUE(settings.root.empty()) << "never the default folder: " << settings.root;
    const std::string reason = cache_disabled_reason();
    EXPECT_TRUE(reason.starts_with("TROPICAL_GEMM_CACHE_DIR is set but empty; ")) << reason;
    EXPECT_TRUE(contains(reason, "unset it")) << reason;
    EXPECT_TRUE(contains(reason, "TROPICAL_GEMM_CACHE=off")) << reason;

    // The administration refuses, naming the reason, and touches nothing of the default cache.
    for (int command = 0; command < 3; ++command) {
        try {
            if (command == 0) list_cache(settings);
            if (command == 1) clear_cache(settings);
            if (command == 2) trim_cache(settings, 0);
            ADD_FAILURE() << "command " << command << " did not refuse";
        } catch (const InvalidArgument& e) {
            EXPECT_TRUE(contains(e.what(), "TROPICAL_GEMM_CACHE_DIR is set but empty")) << e.what();
        }
    }
    try {
        warm_kernel(settings, *find_kernel("tropical_gemm_f32_maxplus"), 90);
        ADD_FAILURE() << "warm_kernel did not refuse";
    } catch (const InvalidArgument& e) {
        EXPECT_TRUE(contains(e.what(), "TROPICAL_GEMM_CACHE_DIR is set but empty")) << e.what();
    }
    EXPECT_TRUE(fs::exists(defaults.file));
}

// The library itself, run so, keeps kernels in memory and says why, once.
TEST(CacheSettings, TheLibraryRunWithAnEmptyCacheDirWarnsOnce) {
    DefaultCache defaults;
    for (const bool off : {false, true}) {
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            ScopedEnv dir("TROPICAL_GEMM_CACHE_DIR", "");
            ScopedEnv cache("TROPICAL_GEMM_CACHE", off ? std::optional<std::string>("off") : std::nullopt);
            WarningCapture warnings;
            const auto& binaries = detail::KernelBinaries::process_default();
            const bool memory_only = !binaries.disk_enabled();
            // TROPICAL_GEMM_CACHE=off is a choice, not a mistake: no warning then.
            const std::size_t expected = off ? 0 : 1;
            const bool said = off || (warnings.messages.size() == 1 &&
                                      contains(warnings.messages[0], "TROPICAL_GEMM_CACHE_DIR is set but empty"));
            ::_exit(memory_only && warnings.messages.size() == expected && said ? 0 : 1);
        }
        const int status = tropical::testing::reap(child);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << (off ? "with TROPICAL_GEMM_CACHE=off" : "");
    }
    EXPECT_TRUE(fs::exists(defaults.file));
    EXPECT_EQ(std::distance(fs::recursive_directory_iterator(defaults.home.path()), {}), 4);
}
