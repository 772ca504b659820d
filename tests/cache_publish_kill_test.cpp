// Writers killed at every step of a publish (CacheStore's hook names each system call before it is
// made: open the folder, create the temp file, lock, write, fsync, rename, fsync the folder), for
// each kind of file the cache holds. After each kill no final name holds a partial file, the next
// process gets every kernel right, and the temp file left behind is removed by the next writer and
// by trim once its writer is gone, and never while its writer lives.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <tropical/cache.hpp>
#include "cache/cache_store.hpp"
#include "support/cache_scenarios.hpp"
#include "support/hostile_files.hpp"
#include "support/temp_dir.hpp"
#include "support/warning_capture.hpp"

using namespace tropical;
using namespace tropical::testing;
using detail::PublishStep;
namespace fs = std::filesystem;

namespace {

constexpr PublishStep kSteps[] = {PublishStep::OpenFolder, PublishStep::CreateTemp, PublishStep::Lock,
                                  PublishStep::Write,      PublishStep::SyncFile,   PublishStep::Rename,
                                  PublishStep::SyncFolder, PublishStep::Done};
// The files of a cold start, in the order they are published: the record, then PTX and CUBIN for
// sm_90, then the PTX for the JIT of the newer architecture.
const char* const kFiles[] = {"nvrtc-identity", ".ptx", ".cubin", ".jit.ptx"};

// What the hook in a writer child acts on, and what it does there.
PublishStep g_step;
std::string g_file;
int g_signal = SIGKILL;

bool is_target(std::string_view file) {
    if (g_file == ".ptx") return file.ends_with(".ptx") && !file.ends_with(".jit.ptx");
    return file.ends_with(g_file);
}

void hook(PublishStep step, std::string_view file) {
    if (step == g_step && is_target(file)) ::raise(g_signal);
}

// A writer of a cold cache at `root`, stopped by `signal` at `step` of the publish of `file`.
pid_t start_writer(const fs::path& root, PublishStep step, const std::string& file, int signal) {
    const pid_t child = ::fork();
    if (child == 0) {
        g_step = step;
        g_file = file;
        g_signal = signal;
        detail::set_publish_hook_for_testing(hook);
        WarningCapture quiet;
        ::_exit(look_up(root));
    }
    return child;
}

std::vector<fs::path> temp_files(const fs::path& root) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (it->path().filename().string().find(".tmp-") != std::string::npos) out.push_back(it->path());
    return out;
}

void age(const fs::path& path) {
    const timespec hour_ago[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), hour_ago, AT_SYMLINK_NOFOLLOW), 0) << path;
}

// No final name holds a partial file: every entry verifies, and the record is there only whole.
void expect_only_whole_files(const fs::path& root) {
    const CacheListing listing = list_cache({true, root});
    for (const auto& e : listing.entries) EXPECT_TRUE(e.valid) << e.path << ": " << e.problem;
    EXPECT_EQ(listing.compiler.has_value(), fs::exists(cache_format_directory(root) / "nvrtc-identity"));
    EXPECT_LE(listing.temp_files, 1u);
}

class KilledPublish : public ::testing::TestWithParam<std::tuple<const char*, PublishStep>> {};

}  // namespace

TEST_P(KilledPublish, LeavesNoPartialFileAndItsTempFileIsRemovedByTheNextWriter) {
    const auto [file, step] = GetParam();
    for (const bool by_trim : {false, true}) {
        TempDir dir;
        const fs::path root = dir.path() / "cache";
        int status = 0;
        const pid_t writer = start_writer(root, step, file, SIGKILL);
        ASSERT_EQ(::waitpid(writer, &status, 0), writer);
        ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the writer never reached that step";
        expect_only_whole_files(root);
        const auto left = temp_files(root);
        for (const auto& temp : left) age(temp);  // as if its writer had died long ago
        if (by_trim) {
            trim_cache({true, root}, std::uintmax_t{1} << 40);
            EXPECT_TRUE(temp_files(root).empty()) << "trim leaves a dead writer's temp file";
        }
        // The next process gets every kernel right, and as a writer removes what the dead one left.
        const Bounded next = run_bounded([&] {
            WarningCapture quiet;
            return look_up(root);
        });
        EXPECT_EQ(next.code, 0) << next.describe();
        expect_only_whole_files(root);
        EXPECT_TRUE(temp_files(root).empty()) << left.size() << " temp file(s) left by the killed writer stay";
        int hits = 0;
        EXPECT_EQ(look_up(root, hits), 0);
        EXPECT_EQ(hits, 2) << "the cache serves from the disk again";
    }
}

INSTANTIATE_TEST_SUITE_P(EveryStepOfEveryFile, KilledPublish,
                         ::testing::Combine(::testing::ValuesIn(kFiles), ::testing::ValuesIn(kSteps)),
                         [](const auto& info) {
                             std::string file = std::get<0>(info.param);
                             for (char& c : file)
                                 if (c == '.' || c == '-') c = '_';
                             return file + "_step" + std::to_string(static_cast<int>(std::get<1>(info.param)));
                         });

// A writer that lives, however old its temp file looks, keeps it: its lock says that it lives.
TEST(KilledPublish, AWriterThatLivesKeepsItsTempFileWhateverItsAge) {
    TempDir dir;
    const fs::path root = dir.path() / "cache";
    const pid_t writer = start_writer(root, PublishStep::Write, ".cubin", SIGSTOP);
    int status = 0;
    ASSERT_EQ(::waitpid(writer, &status, WUNTRACED), writer);
    ASSERT_TRUE(WIFSTOPPED(status));
    const auto temps = temp_files(root);
    ASSERT_EQ(temps.size(), 1u);
    age(temps[0]);
    const Bounded others = run_bounded([&] {
        WarningCapture quiet;
        trim_cache({true, root}, 0);
        clear_cache({true, root});
        return look_up(root);  // a writer of the same entry, which sweeps that folder
    });
    EXPECT_EQ(others.code, 0) << others.describe();
    EXPECT_TRUE(fs::exists(temps[0])) << "a live writer's temp file was removed";
    ::kill(writer, SIGCONT);
    ASSERT_EQ(::waitpid(writer, &status, 0), writer);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the writer failed once resumed";
    EXPECT_TRUE(temp_files(root).empty());
    expect_only_whole_files(root);
}

// A temp file written a moment ago with no lock (a writer between creating and locking it, or a
// version of this library that did not lock) is left alone until it is old.
TEST(KilledPublish, AFreshUnlockedTempFileIsLeftUntilItIsOld) {
    TempDir dir;
    const fs::path root = dir.path() / "cache";
    ASSERT_EQ(look_up(root), 0);
    const fs::path temp = entry_file(root, kArch, ".cubin").string() + ".tmp-1-fresh";
    std::ofstream(temp) << "being written";
    trim_cache({true, root}, std::uintmax_t{1} << 40);
    clear_cache({true, root});
    EXPECT_TRUE(fs::exists(temp));
    age(temp);
    EXPECT_EQ(clear_cache({true, root}).files, 1u);
    EXPECT_FALSE(fs::exists(temp));
}
