// The disk cache with an injected compiler: fast, deterministic, and able to count every call.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <latch>
#include <set>
#include <thread>

#include <tropical/diagnostics.hpp>
#include "catalogue/kernel_source.hpp"
#include "loader/kernel_binaries.hpp"
#include "nvrtc/compile_options.hpp"
#include "support/checked_calls.hpp"
#include "support/fake_compiler.hpp"
#include "support/temp_dir.hpp"
#include "support/warning_capture.hpp"
#include "util/warnings.hpp"

using namespace tropical;
using namespace tropical::detail;
using tropical::testing::CompilerCounters;
using tropical::testing::fake_compiler_source;
using tropical::testing::TempDir;
using tropical::testing::WarningCapture;
namespace fs = std::filesystem;

namespace {

const KernelInfo& kernel(std::string_view name) {
    const KernelInfo* k = find_kernel(name);
    if (!k) throw std::runtime_error("no kernel " + std::string(name));
    return *k;
}

std::vector<std::byte> expected_cubin(const KernelInfo& k, int arch) {
    const auto unit = kernel_source(k);
    return tropical::testing::FakeCompiler::expected(k.name, unit, compile_options(arch, false)).cubin;
}

// Every file under the format folder, relative to it.
std::set<std::string> files_in(const fs::path& root) {
    std::set<std::string> out;
    const auto dir = cache_format_directory(root);
    if (!fs::exists(dir)) return out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
    return out;
}

fs::path cubin_path(const fs::path& root, std::string_view kernel_name) {
    for (const auto& e : fs::recursive_directory_iterator(cache_format_directory(root)))
        if (e.path().filename().string().starts_with(std::string(kernel_name) + "-") &&
            e.path().extension() == ".cubin")
            return e.path();
    return {};
}

}  // namespace

TEST(KernelCache, MissCompilesThenHitReadsTheDiskWithoutLoadingTheCompiler) {
    TempDir dir;
    const auto& k = kernel("tropical_gemm_f32_maxplus");
    {
        CompilerCounters counters;
        KernelBinaries binaries({true, dir.path()}, fake_compiler_source(counters));
        const auto binary = binaries.get(k, 90);
        EXPECT_FALSE(binary->from_disk);
        EXPECT_EQ(binary->image, expected_cubin(k, 90));
        EXPECT_EQ(counters.compiles, 1);
        EXPECT_EQ(counters.loads, 1);
        // The CUBIN, its PTX twin and the compiler-identity record.
        const auto files = files_in(dir.path());
        EXPECT_EQ(files.size(), 3u);
        EXPECT_TRUE(files.count("nvrtc-identity"));
    }
    CompilerCounters counters;  // a new process, as far as the cache can tell
    KernelBinaries binaries({true, dir.path()}, fake_compiler_source(counters));
    const auto binary = binaries.get(k, 90);
    EXPECT_TRUE(binary->from_disk);
    EXPECT_EQ(binary->image, expected_cubin(k, 90));
    EXPECT_EQ(counters.loads, 0) << "a cache hit must not load the compiler";
    EXPECT_EQ(counters.compiles, 0);
    EXPECT_EQ(binaries.stats().disk_hits, 1);
}

TEST(KernelCache, ArchitecturesAreSeparateEntries) {
    TempDir dir;
    CompilerCounters counters;
    KernelBinaries binaries({true, dir.path()}, fake_compiler_source(counters));
    const auto& k = kernel("tropical_gemm_f32_maxplus");
    binaries.get(k, 80);
    binaries.get(k, 90);
    EXPECT_EQ(counters.compiles, 2);
    EXPECT_NE(binaries.get(k, 80)->image, binaries.get(k, 90)->image);
    EXPECT_TRUE(fs::exists(cache_format_directory(dir.path()) / "sm_80"));
    EXPECT_TRUE(fs::exists(cache_format_directory(dir.path()) / "sm_90"));
}

class CorruptEntry : public ::testing::TestWithParam<std::string> {};

TEST_P(CorruptEntry, IsDetectedRecompiledAndOverwrittenNeverHandedOut) {
    TempDir dir;
    const auto& k = kernel("tropical_gemm_i32_minplus");
    {
        CompilerCounters counters;
        KernelBinaries({true, dir.path()}, fake_compiler_source(counters)).get(k, 90);
    }
    const fs::path path = cubin_path(dir.path(), k.name);
    ASSERT_FALSE(path.empty());
    std::vector<char> bytes;
    {
        std::ifstream in(path, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    const std::string how = GetParam();
    if (how == "flipped_byte") bytes[bytes.size() / 2 + 24] ^= 0x10;
    else if (how == "truncated") bytes.resize(bytes.size() - 7);
    else if (how == "zero_length") bytes.clear();
    else if (how == "wrong_magic") bytes[0] = 'X';
    else if (how == "older_format") bytes[8] = 0;
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }

    CompilerCounters counters;
    KernelBinaries binaries({true, dir.path()}, fake_compiler_source(counters));
    const auto binary = binaries.get(k, 90);
    EXPECT_FALSE(binary->from_disk);
    EXPECT_EQ(binary->image, expected_cubin(k, 90)) << "the corrupt bytes must never be handed out";
    EXPECT_EQ(counters.compiles, 1);

    // Overwritten: a third process reads a valid entry.
    CompilerCounters later;
    KernelBinaries again({true, dir.path()}, fake_compiler_source(later));
    EXPECT_TRUE(again.get(k, 90)->from_disk);
    EXPECT_EQ(later.compiles, 0);
}

INSTANTIATE_TEST_SUITE_P(Kinds, CorruptEntry,
                         ::testing::Values("flipped_byte", "truncated", "zero_length", "wrong_magic", "older_format"));

TEST(KernelCache, SixteenThreadsAskingForOneNewKernelCompileItOnce) {
    TempDir dir;
    CompilerCounters counters;
    KernelBinaries binaries({true, dir.path()}, fake_compiler_source(counters, std::chrono::milliseconds(100)));
    const auto& k = kernel("tropical_gemm_argmax_f64_maxmul");
    std::latch start(16);
    std::vector<std::shared_ptr<const KernelBinary>> results(16);
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t)
        threads.emplace_back([&, t] {
            start.arrive_and_wait();
            results[static_cast<std::size_t>(t)] = binaries.get(k, 90);
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(counters.compiles, 1);
    EXPECT_EQ(counters.loads, 1);
    for (const auto& r : results) EXPECT_EQ(r, results[0]);
}

TEST(KernelCache, IsLazyDifferentKernelsCompileInParallelAndNothingElseIsCompiled) {
    TempDir dir;
    CompilerCounters counters;
    // Each compile takes a second: two that do not wait for each other overlap, however loaded the
    // machine that starts the two threads.
    KernelBinaries binaries({true, dir.path()}, fake_compiler_source(counters, std::chrono::milliseconds(1000)));
    std::thread a([&] { binaries.get(kernel("tropical_gemm_f32_maxplus"), 90); });
    std::thread b([&] { binaries.get(kernel("tropical_gemm_f64_minplus"), 90); });
    a.join();
    b.join();
    EXPECT_EQ(counters.compiles, 2);
    EXPECT_EQ(counters.most_in_flight, 2) << "two different kernels should compile at once, not wait for each other";
    std::set<std::string> kernels_on_disk;
    for (const auto& f : files_in(dir.path()))
        if (f.ends_with(".cubin")) kernels_on_disk.insert(f.substr(0, f.rfind('-')));
    EXPECT_EQ(kernels_on_disk,
              (std::set<std::string>{"sm_90/tropical_gemm_f32_maxplus", "sm_90/tropical_gemm_f64_minplus"}));
}

TEST(KernelCache, OffMeansMemoryOnly) {
    TempDir dir;
    CompilerCounters counters;
    KernelBinaries binaries({false, dir.path()}, fake_compiler_source(counters));
    const auto& k = kernel("tropical_batched_f32_maxplus");
    binaries.get(k, 90);
    binaries.get(k, 90);
    EXPECT_EQ(counters.compiles, 1);
    EXPECT_TRUE(files_in(dir.path()).empty());
}

TEST(KernelCache, CachePathThatIsARegularFileDegradesToMemoryWithOneWarning) {
    TempDir dir;
    const fs::path file = dir.path() / "not-a-folder";
    std::ofstream(file) << "x";
    WarningCapture warnings;
    CompilerCounters counters;
    KernelBinaries binaries({true, file}, fake_compiler_source(counters));
    binaries.get(kernel("tropical_gemm_f32_maxplus"), 90);
    binaries.get(kernel("tropical_gemm_f32_minplus"), 90);
    binaries.get(kernel("tropical_gemm_f32_maxplus"), 90);
    EXPECT_EQ(counters.compiles, 2);
    ASSERT_EQ(warnings.messages.size(), 1u);
    EXPECT_NE(warnings.messages[0].find("not-a-folder"), std::string::npos);
    EXPECT_NE(warnings.messages[0].find("TROPICAL_GEMM_CACHE_DIR"), std::string::npos);
}

TEST(KernelCache, ReadOnlyFolderDegradesToMemoryWithOneWarning) {
    TempDir dir;
    fs::create_directories(cache_format_directory(dir.path()));
    ASSERT_TRUE(tropical::testing::change_mode(dir.path(), 0755));
    ASSERT_TRUE(tropical::testing::change_mode(cache_format_directory(dir.path()), 0555));
    // Root writes through permission bits, so the scenario runs as an unprivileged user there.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(2);
        int warnings = 0;
        set_warning_handler([&](std::string_view) { ++warnings; });
        CompilerCounters counters;
        KernelBinaries binaries({true, dir.path()}, fake_compiler_source(counters));
        try {
            binaries.get(kernel("tropical_gemm_f32_maxplus"), 90);
            binaries.get(kernel("tropical_gemm_i64_maxplus"), 90);
            binaries.get(kernel("tropical_gemm_f32_maxplus"), 90);
        } catch (...) {
            ::_exit(3);
        }
        ::_exit(counters.compiles == 2 && warnings == 1 ? 0 : 10 + warnings);
    }
    const int status = tropical::testing::reap(child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "2: could not drop privileges, 3: threw, 1x: x warnings instead of 1";
    ASSERT_TRUE(tropical::testing::change_mode(cache_format_directory(dir.path()), 0755));
    EXPECT_TRUE(files_in(dir.path()).empty());
}

TEST(KernelCache, NewFoldersArePrivateToTheUser) {
    TempDir dir;
    CompilerCounters counters;
    KernelBinaries binaries({true, dir.path() / "cache"}, fake_compiler_source(counters));
    binaries.get(kernel("tropical_gemm_f32_maxplus"), 90);
    for (const auto& folder : {dir.path() / "cache", cache_format_directory(dir.path() / "cache"),
                               cache_format_directory(dir.path() / "cache") / "sm_90"}) {
        struct stat info {};
        ASSERT_EQ(::stat(folder.c_str(), &info), 0) << folder;
        EXPECT_EQ(info.st_mode & 0777, 0700u) << folder;
    }
}

TEST(KernelCache, ChangedCompilerIdentityForcesALoadAndNewKeys) {
    TempDir dir;
    const auto& k = kernel("tropical_gemm_f32_maxplus");
    {
        CompilerCounters counters;
        KernelBinaries({true, dir.path()}, fake_compiler_source(counters)).get(k, 90);
    }
    // The user now names another NVRTC explicitly: the record no longer describes the compiler.
    CompilerCounters counters;
    auto source = fake_compiler_source(counters);
    source.override_path = "/another/libnvrtc.so";
    KernelBinaries binaries({true, dir.path()}, source);
    binaries.get(k, 90);
    EXPECT_EQ(counters.loads, 1);
}
