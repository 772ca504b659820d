// The disk cache under faults: writers killed mid-publish, a full disk, a read-only file system,
// and many processes warming, reading and clearing one cache at once. Whatever happens, no
// process loads a partial entry, and the library keeps producing kernels (in memory if need be).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include <tropical/cache.hpp>
#include "loader/kernel_binaries.hpp"
#include "support/checked_calls.hpp"
#include "support/fake_compiler.hpp"
#include "support/processes.hpp"
#include "support/sanitizers.hpp"
#include "support/temp_dir.hpp"
#include "support/warning_capture.hpp"

using namespace tropical;
using namespace tropical::testing;
namespace fs = std::filesystem;

namespace {

const KernelInfo& kernel(std::string_view name) { return *find_kernel(name); }

// A tmpfs of `size` at `where`, unmounted at the end; mounting needs root (CAP_SYS_ADMIN), which a
// sandbox may deny: then ok() is false and why() says so.
class Tmpfs {
public:
    Tmpfs(const fs::path& where, const char* size) : where_(where) {
        fs::create_directories(where_);
        mounted_ = ::mount("tmpfs", where_.c_str(), "tmpfs", 0, (std::string("mode=0700,size=") + size).c_str()) == 0;
        if (!mounted_) why_ = std::string("cannot mount a tmpfs here: ") + std::strerror(errno);
    }
    ~Tmpfs() {
        if (mounted_) ::umount2(where_.c_str(), MNT_DETACH);
    }
    bool ok() const { return mounted_; }
    const std::string& why() const { return why_; }
    bool remount_read_only() { return ::mount(nullptr, where_.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) == 0; }

private:
    fs::path where_;
    bool mounted_ = false;
    std::string why_;
};

// Fills the file system holding `folder` until a write fails with ENOSPC.
void fill(const fs::path& folder) {
    std::ofstream out(folder / "filler", std::ios::binary);
    const std::vector<char> block(4096, 'x');
    while (out.write(block.data(), static_cast<std::streamsize>(block.size()))) out.flush();
}

// Waits until a cache_writer's output says it has begun publishing (at most a minute: a writer that
// dies first is reported by its exit code), so that the kill lands among its writes however long the
// process took to start.
void wait_until_publishing(const fs::path& output) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (read_text(output).find("publishing") == std::string::npos && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

// 200 writers (50 under ASan, where each process starts several times slower), each SIGKILLed at a
// random moment while it publishes entries in a loop (fresh keys every round, payloads up to 128 KiB
// so that kills land inside writes). After each kill a new process reads every entry through the
// library: a final-named file is always complete, a lookup never hands out a partial binary, and temp
// files are never taken for entries.
TEST(CacheFaults, WritersKilledAtRandomNeverLeaveAPartialEntryForLaterProcesses) {
    TempDir dir;
    const fs::path root = dir.path() / "cache";
    std::mt19937 random(20261121);
    std::uniform_int_distribution<int> delay_us(0, 20000);  // from the writer's first publish
    int killed = 0, finished = 0;
    std::size_t max_temp_files = 0;
    const int writers = under_address_sanitizer ? 50 : 200;
    for (int i = 0; i < writers; ++i) {
        std::error_code ec;  // the last writer's output goes first: its "publishing" is not this one's
        fs::remove(dir.path() / "writer", ec);
        ASSERT_TRUE(no_error(ec, "removing the last writer's output"));
        const pid_t writer = spawn({CACHE_WRITER, "write", root.string(), std::to_string(i)}, dir.path() / "writer");
        ASSERT_GT(writer, 0);
        wait_until_publishing(dir.path() / "writer");
        std::this_thread::sleep_for(std::chrono::microseconds(delay_us(random)));
        ASSERT_TRUE(send_signal(writer, SIGKILL));  // not yet reaped: there to be killed
        const int code = wait_for(writer);
        if (code == 128 + SIGKILL) ++killed;
        else if (code == 0) ++finished;
        else FAIL() << "writer " << i << " failed (" << code << "): " << read_text(dir.path() / "writer");

        const pid_t checker = spawn({CACHE_WRITER, "check", root.string()}, dir.path() / "checker");
        ASSERT_EQ(wait_for(checker), 0) << "after kill " << i << ": " << read_text(dir.path() / "checker");
        const auto listing = list_cache({true, root});
        max_temp_files = std::max(max_temp_files, listing.temp_files);
        // Keep the folder small: clear it now and then, as a user would.
        if (i % 10 == 9) clear_cache({true, root});
    }
    std::printf("%d writers killed, %d finished; at most %zu temp files left at once\n", killed, finished,
                max_temp_files);
    EXPECT_GT(killed, writers * 3 / 4) << "most writers should die by the signal, not finish (" << finished
                                       << " finished)";
    // Temp files left behind prove that kills landed inside publishes (the case under test).
    EXPECT_GT(max_temp_files, 0u);
}

// A full disk (every write fails with EFBIG): kernels are still produced, in memory, with one warning.
TEST(CacheFaults, FileSizeLimitOfZeroDegradesToMemoryWithOneWarning) {
    TempDir dir;
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::signal(SIGXFSZ, SIG_IGN);  // a write beyond the limit then fails with EFBIG instead
        const rlimit none{0, 0};
        if (::setrlimit(RLIMIT_FSIZE, &none) != 0) ::_exit(2);
        WarningCapture warnings;
        CompilerCounters counters;
        detail::KernelBinaries binaries({true, dir.path()}, fake_compiler_source(counters));
        try {
            for (auto name : {"tropical_gemm_f32_maxplus", "tropical_gemm_i64_minplus", "tropical_gemm_f32_maxplus"})
                if (binaries.get(kernel(name), 90)->image.empty()) ::_exit(4);
        } catch (...) {
            ::_exit(3);
        }
        ::_exit(counters.compiles == 2 && warnings.messages.size() == 1 && !binaries.disk_writable() ? 0 : 10);
    }
    EXPECT_EQ(wait_for(child), 0) << "2: setrlimit failed, 3: threw, 4: no binary, 10: not 2 compiles and 1 warning";
    for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
        if (e.is_regular_file()) {
            EXPECT_EQ(fs::file_size(e.path()), 0u) << "nothing was written: " << e.path();
        }
    }
}

// The same with a real full file system (ENOSPC), and the administration that needs no space.
TEST(CacheFaults, FullFileSystemDegradesToMemoryWithOneWarningAndCanStillBeListedAndCleared) {
    TempDir dir;
    const fs::path root = dir.path() / "mnt";
    Tmpfs tmpfs(root, "256k");
    if (!tmpfs.ok()) GTEST_SKIP() << tmpfs.why() << " (needs root; covered by the file size limit test)";
    {
        CompilerCounters counters;  // one entry that fits, before the disk fills
        detail::KernelBinaries binaries({true, root}, fake_compiler_source(counters));
        binaries.get(kernel("tropical_gemm_f32_maxplus"), 90);
    }
    fill(root);
    WarningCapture warnings;
    CompilerCounters counters;
    detail::KernelBinaries binaries({true, root}, fake_compiler_source(counters));
    EXPECT_TRUE(binaries.get(kernel("tropical_gemm_f32_maxplus"), 90)->from_disk);
    EXPECT_FALSE(binaries.get(kernel("tropical_gemm_i32_maxmul"), 90)->image.empty());
    EXPECT_FALSE(binaries.get(kernel("tropical_gemm_f64_maxmul"), 90)->image.empty());
    EXPECT_EQ(counters.compiles, 2);
    ASSERT_EQ(warnings.messages.size(), 1u);
    EXPECT_NE(warnings.messages[0].find("No space left on device"), std::string::npos) << warnings.messages[0];
    const auto listing = list_cache({true, root});
    EXPECT_EQ(listing.entries.size(), 2u);  // the CUBIN and PTX written before
    EXPECT_EQ(listing.temp_files, 0u) << "a failed write must remove its temp file";
    for (const auto& e : listing.entries) EXPECT_TRUE(e.valid) << e.path;
    EXPECT_EQ(clear_cache({true, root}).entries.size(), 2u);
}

// A warmed cache on a read-only file system (a shipped cache; root too gets EROFS): its entries
// load, new kernels are compiled into memory, one warning.
TEST(CacheFaults, ReadOnlyFileSystemServesItsEntriesAndDegradesToMemoryWithOneWarning) {
    TempDir dir;
    const fs::path root = dir.path() / "mnt";
    Tmpfs tmpfs(root, "4m");
    if (!tmpfs.ok()) GTEST_SKIP() << tmpfs.why() << " (needs root; kernel_cache_test covers a read-only folder)";
    {
        CompilerCounters counters;
        detail::KernelBinaries binaries({true, root}, fake_compiler_source(counters));
        binaries.get(kernel("tropical_gemm_f32_maxplus"), 90);
    }
    ASSERT_TRUE(tmpfs.remount_read_only()) << std::strerror(errno);
    WarningCapture warnings;
    CompilerCounters counters;
    detail::KernelBinaries binaries({true, root}, fake_compiler_source(counters));
    EXPECT_TRUE(binaries.get(kernel("tropical_gemm_f32_maxplus"), 90)->from_disk);
    EXPECT_EQ(counters.loads, 0) << "a hit on a read-only cache needs no compiler";
    EXPECT_FALSE(binaries.get(kernel("tropical_gemm_i32_maxmul"), 90)->from_disk);
    EXPECT_FALSE(binaries.get(kernel("tropical_gemm_f64_maxmul"), 90)->from_disk);
    EXPECT_EQ(counters.compiles, 2);
    ASSERT_EQ(warnings.messages.size(), 1u);
    EXPECT_NE(warnings.messages[0].find("Read-only file system"), std::string::npos) << warnings.messages[0];
    EXPECT_EQ(list_cache({true, root}).entries.size(), 2u);
}

#ifdef WARMUP_TOOL
// 32 processes of the warm-up tool on one cache at once, with the real NVRTC and no GPU: warming
// two kernels for sm_90, listing, verifying and clearing. Every one succeeds, and only valid
// entries remain.
TEST(CacheFaults, ThirtyTwoProcessesWarmingListingVerifyingAndClearingOneCacheAllSucceed) {
    TempDir dir;
    const std::string root = (dir.path() / "cache").string();
    const std::vector<std::string> warm = {
        WARMUP_TOOL, "-C",     root,    "-q", "-j",
        "1",         "--arch", "sm_90", "-k", "tropical_gemm_f32_maxplus,tropical_batched_i32_minplus"};
    ASSERT_EQ(wait_for(spawn(warm, dir.path() / "first")), 0) << read_text(dir.path() / "first");
    const std::vector<std::vector<std::string>> commands = {
        warm,
        {WARMUP_TOOL, "-C", root, "--list", "-q"},
        {WARMUP_TOOL, "-C", root, "--verify", "-q"},
        {WARMUP_TOOL, "-C", root, "--clear", "-q"},
    };
    const char* names[] = {"warm", "list", "verify", "clear"};
    std::vector<pid_t> pids;
    for (int i = 0; i < 32; ++i)
        pids.push_back(spawn(commands[i % 4], dir.path() / ("out" + std::to_string(i)), kNoExitLeakCheck));
    for (int i = 0; i < 32; ++i) {
        ASSERT_GT(pids[i], 0);
        const fs::path out = dir.path() / ("out" + std::to_string(i));
        EXPECT_EQ(wait_for(pids[i]), 0) << "process " << i << " (" << names[i % 4] << "): " << read_text(out);
    }
    const auto listing = list_cache({true, root});
    EXPECT_EQ(listing.temp_files, 0u);
    for (const auto& e : listing.entries) EXPECT_TRUE(e.valid) << e.path << ": " << e.problem;
    EXPECT_EQ(wait_for(spawn({WARMUP_TOOL, "-C", root, "--verify", "-q"}, dir.path() / "last")), 0)
        << read_text(dir.path() / "last");
}
#endif
