// A cache nobody else can poison: the library never loads a kernel from a file or folder that
// another user wrote or could rewrite, says so once, and never writes files others could rewrite.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tropical/cache.hpp>
#include "loader/kernel_binaries.hpp"
#include "support/checked_calls.hpp"
#include "support/fake_compiler.hpp"
#include "support/temp_dir.hpp"
#include "support/warning_capture.hpp"

using namespace tropical;
using namespace tropical::testing;
namespace fs = std::filesystem;

namespace {

constexpr uid_t kNobody = 65534;

const KernelInfo& kernel(std::string_view name) { return *find_kernel(name); }

fs::path sm_90(const fs::path& root) { return cache_format_directory(root) / "sm_90"; }

fs::path cubin_of(const fs::path& root, std::string_view kernel_name) {
    for (const auto& e : fs::directory_iterator(sm_90(root)))
        if (e.path().filename().string().starts_with(std::string(kernel_name) + "-") &&
            e.path().extension() == ".cubin")
            return e.path();
    return {};
}

// A cache holding the CUBIN (and PTX) of one kernel, compiled by a process that has ended.
void warm(const fs::path& root, std::string_view name = "tropical_gemm_f32_maxplus") {
    CompilerCounters counters;
    detail::KernelBinaries({true, root}, fake_compiler_source(counters)).get(kernel(name), 90);
}

// What a new process finds: whether the kernel came from the disk, and the warnings it gave.
struct Lookup {
    bool from_disk = false;
    std::vector<std::string> warnings;
};

Lookup look_up(const fs::path& root, std::string_view name = "tropical_gemm_f32_maxplus") {
    WarningCapture capture;
    CompilerCounters counters;
    detail::KernelBinaries binaries({true, root}, fake_compiler_source(counters));
    Lookup out;
    out.from_disk = binaries.get(kernel(name), 90)->from_disk;
    binaries.get(kernel("tropical_gemm_i32_maxplus"), 90);  // a second lookup: no second warning
    out.warnings = capture.messages;
    return out;
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(CacheSecurity, ASafeCacheIsUsedWithoutWarnings) {
    TempDir dir;
    warm(dir.path() / "cache");
    const auto found = look_up(dir.path() / "cache");
    EXPECT_TRUE(found.from_disk);
    EXPECT_TRUE(found.warnings.empty());
}

TEST(CacheSecurity, AnArchitectureFolderWritableByOthersIsRefusedWithOneWarning) {
    TempDir dir;
    const fs::path root = dir.path() / "cache";
    warm(root);
    ASSERT_EQ(::chmod(sm_90(root).c_str(), 0777), 0);
    const auto found = look_up(root);
    EXPECT_FALSE(found.from_disk);
    ASSERT_EQ(found.warnings.size(), 1u);
    EXPECT_TRUE(contains(found.warnings[0], sm_90(root).string())) << found.warnings[0];
    EXPECT_TRUE(contains(found.warnings[0], "writable by other users (mode 0777)")) << found.warnings[0];
    EXPECT_TRUE(contains(found.warnings[0], "chmod go-w")) << found.warnings[0];
    // Nothing is written into it either.
    EXPECT_EQ(std::distance(fs::directory_iterator(sm_90(root)), fs::directory_iterator{}), 2);
}

TEST(CacheSecurity, ARootOrFormatFolderWritableByOthersDisablesTheCacheWithOneWarning) {
    for (const bool format_folder : {false, true}) {
        TempDir dir;
        const fs::path root = dir.path() / "cache";
        warm(root);
        const fs::path folder = format_folder ? cache_format_directory(root) : root;
        ASSERT_EQ(::chmod(folder.c_str(), 0775), 0);
        const auto found = look_up(root);
        EXPECT_FALSE(found.from_disk) << folder;
        ASSERT_EQ(found.warnings.size(), 1u) << folder;
        EXPECT_TRUE(contains(found.warnings[0], folder.string() + " is writable by other users (mode 0775)"))
            << found.warnings[0];
    }
}

TEST(CacheSecurity, AStickyWorldWritableRootLikeTmpIsAccepted) {
    TempDir dir;
    const fs::path root = dir.path() / "shared";
    fs::create_directories(root);
    ASSERT_EQ(::chmod(root.c_str(), 01777), 0);
    warm(root);
    const auto found = look_up(root);
    EXPECT_TRUE(found.from_disk);
    EXPECT_TRUE(found.warnings.empty());
}

TEST(CacheSecurity, AnEntryWritableByOthersIsRefusedRecompiledAndReplacedByAPrivateOne) {
    TempDir dir;
    const fs::path root = dir.path() / "cache";
    warm(root);
    const fs::path cubin = cubin_of(root, "tropical_gemm_f32_maxplus");
    ASSERT_EQ(::chmod(cubin.c_str(), 0666), 0);
    const auto found = look_up(root);
    EXPECT_FALSE(found.from_disk);
    ASSERT_EQ(found.warnings.size(), 1u);
    EXPECT_TRUE(contains(found.warnings[0], cubin.string() + " is writable by other users (mode 0666)"))
        << found.warnings[0];
    struct stat info {};
    ASSERT_EQ(::stat(cubin.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0644u) << "the fresh compile replaces it";
    EXPECT_TRUE(look_up(root).from_disk);
    // The listing (and so the warm-up tool's --verify) reports such an entry too.
    ASSERT_EQ(::chmod(cubin.c_str(), 0620), 0);
    for (const auto& e : list_cache({true, root}).entries)
        if (e.path == cubin) {
            EXPECT_FALSE(e.valid);
            EXPECT_TRUE(contains(e.problem, "not trusted")) << e.problem;
        }
}

TEST(CacheSecurity, FilesAndFoldersOwnedByAnotherUserAreRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, to give files to another user";
    for (const bool folder : {false, true}) {
        TempDir dir;
        const fs::path root = dir.path() / "cache";
        warm(root);
        const fs::path target = folder ? sm_90(root) : cubin_of(root, "tropical_gemm_f32_maxplus");
        ASSERT_EQ(::chown(target.c_str(), kNobody, kNobody), 0);
        const auto found = look_up(root);
        EXPECT_FALSE(found.from_disk) << target;
        ASSERT_EQ(found.warnings.size(), 1u) << target;
        EXPECT_TRUE(contains(found.warnings[0], target.string() + " is owned by user 65534, not by you (user 0)"))
            << found.warnings[0];
    }
}

// Another user may use a cache that root filled (an administrator's shipped, read-only cache).
TEST(CacheSecurity, ACacheOwnedByRootIsTrustedByOtherUsers) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, to become another user";
    TempDir dir;
    ASSERT_TRUE(change_mode(dir.path(), 0755));
    warm(dir.path() / "cache");
    for (const auto& e : fs::recursive_directory_iterator(dir.path() / "cache")) {
        if (e.is_directory()) {
            ASSERT_TRUE(change_mode(e.path(), 0755));
        }
    }
    ASSERT_TRUE(change_mode(dir.path() / "cache", 0755));
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(2);
        const auto found = look_up(dir.path() / "cache");
        ::_exit(found.from_disk && found.warnings.size() == 1 ? 0 : 1);  // the one warning: cannot write
    }
    const int status = reap(child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "2: could not become nobody; 1: refused";
}

TEST(CacheSecurity, AnEntryThatIsAFifoNeitherHangsNorLoads) {
    TempDir dir;
    const fs::path root = dir.path() / "cache";
    warm(root);
    const fs::path cubin = cubin_of(root, "tropical_gemm_f32_maxplus");
    fs::remove(cubin);
    ASSERT_EQ(::mkfifo(cubin.c_str(), 0600), 0);
    EXPECT_FALSE(look_up(root).from_disk);
    EXPECT_TRUE(fs::is_regular_file(cubin)) << "replaced by the fresh compile";
}

TEST(CacheSecurity, APermissiveUmaskStillWritesNothingOthersCanWrite) {
    TempDir dir;
    const fs::path root = dir.path() / "cache";
    const mode_t before = ::umask(0);
    warm(root);
    warm(root, "tropical_backward_a_f64");
    ::umask(before);
    int files = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
        struct stat info {};
        ASSERT_EQ(::lstat(e.path().c_str(), &info), 0);
        EXPECT_EQ(info.st_mode & (S_IWGRP | S_IWOTH), 0u) << e.path() << std::oct << " mode " << (info.st_mode & 0777);
        ++files;
    }
    EXPECT_EQ(files, 8);  // 3 folders, the record, 2 CUBINs, 2 PTX
}
