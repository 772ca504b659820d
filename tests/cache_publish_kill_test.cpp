// Writers killed at every step of a publish (CacheStore's hook names each system call before it is
// made: open the folder, create the temp file, lock, write, fsync, rename, fsync the folder), for
// each kind of file the cache holds, into an empty place and over an existing valid file. After
// each kill no final name holds a partial file (a replaced file is the whole old one or the whole
// new one), the next process gets every kernel right, and the temp file left behind is removed by
// the next writer and by trim as soon as its writer is gone (its lock died with it: no waiting for
// the file to age), and never while its writer lives, not even between creating and locking it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <tropical/cache.hpp>
#include "cache/cache_layout.hpp"
#include "cache/cache_store.hpp"
#include "support/cache_scenarios.hpp"
#include "support/checked_calls.hpp"
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
        // Fresh: the dead writer's lock alone says that it is gone.
        const auto left = temp_files(root);
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
    ASSERT_TRUE(send_signal(writer, SIGCONT));
    ASSERT_EQ(::waitpid(writer, &status, 0), writer);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the writer failed once resumed";
    EXPECT_TRUE(temp_files(root).empty());
    expect_only_whole_files(root);
}

// A temp file that no writer holds locked is a dead writer's, however fresh and whether anything
// was written to it or not: the next writer, trim and clear remove it at once.
TEST(KilledPublish, AnUnlockedTempFileIsRemovedAtOnceWhateverItsAge) {
    for (const bool empty : {false, true}) {
        for (int by = 0; by < 3; ++by) {
            SCOPED_TRACE(std::string(empty ? "empty, " : "written, ") + (by == 0   ? "the next writer"
                                                                         : by == 1 ? "trim"
                                                                                   : "clear"));
            TempDir dir;
            const fs::path root = dir.path() / "cache";
            ASSERT_EQ(look_up(root), 0);
            const fs::path cubin = entry_file(root, kArch, ".cubin");
            const fs::path temp = cubin.string() + ".tmp-1-fresh";
            std::ofstream(temp) << (empty ? "" : "half written");
            if (by == 0) {
                fs::remove(cubin);  // so that the next process writes into that folder
                const Bounded next = run_bounded([&] {
                    WarningCapture quiet;
                    return look_up(root);
                });
                EXPECT_EQ(next.code, 0) << next.describe();
            } else if (by == 1) {
                trim_cache({true, root}, std::uintmax_t{1} << 40);
            } else {
                clear_cache({true, root});
            }
            EXPECT_FALSE(fs::exists(temp));
        }
    }
}

// What is not a regular file cannot be a writer's temp file, and holds no lock to ask: a FIFO with
// a temp file's name is left until it is old (kAbandonedTempAge), then removed.
TEST(KilledPublish, ATempNamedSpecialFileGoesByItsAge) {
    TempDir dir;
    const fs::path root = dir.path() / "cache";
    ASSERT_EQ(look_up(root), 0);
    const fs::path temp = entry_file(root, kArch, ".cubin").string() + ".tmp-1-fifo";
    ASSERT_TRUE(make_fifo(temp));
    const Bounded run = run_bounded([&] {
        trim_cache({true, root}, std::uintmax_t{1} << 40);
        return clear_cache({true, root}).files == 4 ? 0 : 1;  // the 3 entries and the record, not the FIFO
    });
    EXPECT_EQ(run.code, 0) << run.describe();
    EXPECT_TRUE(fs::exists(temp));
    age(temp);
    EXPECT_EQ(clear_cache({true, root}).files, 1u);
    EXPECT_FALSE(fs::exists(temp));
}

namespace {

// In the one moment a live writer's temp file is not locked (created, not yet locked), another
// process sweeps that folder: the hook runs a trim, once, right before the writer's flock.
fs::path g_sweep_root;
bool g_swept = false;

void sweep_before_lock(PublishStep step, std::string_view file) {
    if (g_swept || step != PublishStep::Lock || !file.ends_with(".cubin")) return;
    g_swept = true;
    const auto temps = temp_files(g_sweep_root);
    if (temps.size() != 1) std::abort();
    trim_cache({true, g_sweep_root}, std::uintmax_t{1} << 40);
    if (fs::exists(temps[0])) std::abort();  // the sweeper took the unlocked file for a dead writer's
}

}  // namespace

// That writer then finds its file gone (it has no name any more) and makes another: it publishes
// every file, writing stays on, and nothing is left behind.
TEST(KilledPublish, AWriterSweptBetweenCreatingAndLockingItsTempFileLosesNothing) {
    TempDir dir;
    const fs::path root = dir.path() / "cache";
    const Bounded run = run_bounded([&] {
        g_sweep_root = root;
        detail::set_publish_hook_for_testing(sweep_before_lock);
        WarningCapture warnings;
        int hits = 0;
        if (const int wrong = look_up(root, hits)) return wrong;
        detail::set_publish_hook_for_testing(nullptr);
        if (!g_swept) return 20;
        if (!warnings.messages.empty()) return 21;  // no "cache not usable": the publish went through
        if (const int wrong = look_up(root, hits)) return wrong;
        return hits == 2 ? 0 : 30 + hits;
    });
    EXPECT_EQ(run.code, 0) << run.describe();
    EXPECT_TRUE(temp_files(root).empty());
    expect_only_whole_files(root);
    EXPECT_FALSE(entry_file(root, kArch, ".cubin").empty());
}

// --- killed while replacing a valid file ----------------------------------------------------------

namespace {

const detail::EntryName kReplaced{
    "tropical_gemm_f32_maxplus", {0x0123456789abcdefull, 0xfedcba9876543210ull}, detail::EntryKind::Cubin};

std::vector<std::byte> payload(char fill, std::size_t size) { return std::vector<std::byte>(size, std::byte(fill)); }

detail::IdentityRecord record(int minor) { return {13, minor, {123, 456}, "/opt/nvrtc/libnvrtc.so.13"}; }

std::string g_replaced_file;
PublishStep g_replace_step;

void kill_replacing(PublishStep step, std::string_view file) {
    if (step == g_replace_step && file == g_replaced_file) ::raise(SIGKILL);
}

class KilledReplace : public ::testing::TestWithParam<std::tuple<bool, PublishStep>> {};

}  // namespace

// An existing valid entry (or record) being replaced by a writer killed at each step: the final name
// holds the whole old file until the rename, the whole new one from then on, never a part of either;
// and the next writer removes the dead one's temp file at once.
TEST_P(KilledReplace, LeavesTheWholeOldFileOrTheWholeNewOne) {
    const auto [identity, step] = GetParam();
    TempDir dir;
    const fs::path root = dir.path() / "cache";
    const auto old_payload = payload('o', 1000), new_payload = payload('n', 300000);
    {
        detail::CacheStore store(root, detail::CacheStore::Access::Use);
        ASSERT_TRUE(identity ? store.write_identity(record(0)).written
                             : store.write_entry(kArch, kReplaced, old_payload).written);
    }
    const std::string file = identity ? std::string(detail::kIdentityFileName)
                                      : detail::entry_file_name(kReplaced.kernel, kReplaced.key, kReplaced.kind);
    const Bounded writer = run_bounded([&] {
        g_replaced_file = file;
        g_replace_step = step;
        detail::set_publish_hook_for_testing(kill_replacing);
        WarningCapture quiet;
        detail::CacheStore store(root, detail::CacheStore::Access::Use);
        const bool written = identity ? store.write_identity(record(1)).written
                                      : store.write_entry(kArch, kReplaced, new_payload).written;
        return written ? 0 : 1;
    });
    // Killed at the step's hook, before its system call: the rename has happened from SyncFolder on.
    const bool renamed = step == PublishStep::SyncFolder || step == PublishStep::Done;
    ASSERT_EQ(writer.code, 128 + SIGKILL) << "the writer never reached that step: " << writer.describe();

    detail::CacheStore reader(root, detail::CacheStore::Access::Use);
    if (identity) {
        const auto found = reader.read_identity();
        ASSERT_TRUE(found.has_value()) << "the record is neither the old one nor the new one";
        EXPECT_EQ(found->minor, renamed ? 1 : 0);
    } else {
        const auto found = reader.read_entry(kArch, kReplaced);
        ASSERT_TRUE(found.has_value()) << "the entry is neither the old one nor the new one";
        EXPECT_TRUE(*found == (renamed ? new_payload : old_payload)) << found->size() << " bytes";
    }
    EXPECT_LE(temp_files(root).size(), 1u);
    // The next writer into that folder removes what the dead one left, at once, and replaces the file.
    {
        WarningCapture quiet;
        detail::CacheStore next(root, detail::CacheStore::Access::Use);
        ASSERT_TRUE(identity ? next.write_identity(record(2)).written
                             : next.write_entry(kArch, kReplaced, payload('x', 10)).written);
    }
    EXPECT_TRUE(temp_files(root).empty());
    detail::CacheStore after(root, detail::CacheStore::Access::Use);
    if (identity) {
        EXPECT_EQ(after.read_identity().value_or(record(9)).minor, 2);
    } else {
        EXPECT_TRUE(after.read_entry(kArch, kReplaced) == payload('x', 10));
    }
}

INSTANTIATE_TEST_SUITE_P(EveryStep, KilledReplace, ::testing::Combine(::testing::Bool(), ::testing::ValuesIn(kSteps)),
                         [](const auto& info) {
                             return std::string(std::get<0>(info.param) ? "Record" : "Cubin") + "_step" +
                                    std::to_string(static_cast<int>(std::get<1>(info.param)));
                         });
