// Links that another user puts at every level of a cache in a shared folder, sticky (like /tmp)
// or not: the root itself, v1, sm_XY, each kind of entry (CUBIN, PTX, PTX for the JIT), the record
// and a temp file, each pointing into the victim's own cache. Whatever the victim runs there (the
// loader, list, trim, clear), as root or as an ordinary user, finishes within a bound, writes and
// deletes nothing of the victim's own cache, judges each link by the link itself (whose it is),
// and leaves a cache that still works. (cache_root_link_test: the root's own rules.)
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <tropical/cache.hpp>
#include "support/cache_scenarios.hpp"
#include "support/hostile_files.hpp"
#include "support/shared_folder_attack.hpp"
#include "support/temp_dir.hpp"
#include "support/warning_capture.hpp"

using namespace tropical;
using namespace tropical::testing;
namespace fs = std::filesystem;

namespace {

constexpr uid_t kOrdinaryVictim = 4242;

enum class Level {
    Root,                   // the cache root named by the victim is the attacker's link
    FormatFolder,           // <shared>/v1
    ArchFolder,             // <shared>/v1/sm_90, in a v1 that the victim shares like the root
    ArchInAttackersFolder,  // <shared>/v1/sm_90, in a v1 that the attacker made
    Files,                  // an entry, the record and a temp file, in folders the victim shares
};

const char* name_of(Level l) {
    switch (l) {
    case Level::Root: return "Root";
    case Level::FormatFolder: return "FormatFolder";
    case Level::ArchFolder: return "ArchFolder";
    case Level::ArchInAttackersFolder: return "ArchInAttackersFolder";
    case Level::Files: return "Files";
    }
    return "?";
}

// Makes the attack of `level`; returns the cache root the victim uses.
fs::path set_up(Level level, const fs::path& shared, const fs::path& victim_cache, uid_t victim, mode_t shared_mode) {
    const fs::path v1 = cache_format_directory(shared), own_v1 = cache_format_directory(victim_cache);
    switch (level) {
    case Level::Root: attacker_links(victim_cache, shared / "cache"); return shared / "cache";
    case Level::FormatFolder: attacker_links(own_v1, v1); return shared;
    case Level::ArchFolder:
        fs::create_directory(v1);
        give(v1, victim, shared_mode);
        attacker_links(own_v1 / "sm_90", v1 / "sm_90");
        return shared;
    case Level::ArchInAttackersFolder:
        EXPECT_TRUE(as_user(kOtherUser, [&] { return ::mkdir(v1.c_str(), 0755) == 0; }));
        attacker_links(own_v1 / "sm_90", v1 / "sm_90");
        return shared;
    case Level::Files: {
        const std::string arch_folder = "sm_" + std::to_string(kArch), jit_folder = "sm_" + std::to_string(kNewArch);
        fs::create_directories(v1 / arch_folder);
        fs::create_directories(v1 / jit_folder);
        give(v1, victim, shared_mode);
        give(v1 / arch_folder, victim, shared_mode);
        give(v1 / jit_folder, victim, shared_mode);
        // Every kind of entry (a CUBIN, its PTX twin, a PTX for the JIT) and the record, each a link
        // to the victim's own file of that name.
        const fs::path cubin = entry_file(victim_cache, kArch, ".cubin");
        const fs::path ptx = entry_file(victim_cache, kArch, ".ptx");
        const fs::path jit = entry_file(victim_cache, kNewArch, ".jit.ptx");
        EXPECT_FALSE(cubin.empty() || ptx.empty() || jit.empty()) << "the victim's cache lacks an entry";
        attacker_links(cubin, v1 / arch_folder / cubin.filename());
        attacker_links(ptx, v1 / arch_folder / ptx.filename());
        attacker_links(jit, v1 / jit_folder / jit.filename());
        attacker_links(own_v1 / "nvrtc-identity", v1 / "nvrtc-identity");
        // A temp file's name, old enough to count as abandoned: still not the victim's to remove.
        const fs::path temp = v1 / arch_folder / (cubin.filename().string() + ".tmp-1-dead");
        attacker_links(cubin, temp);
        const timespec old[2] = {{1, 0}, {1, 0}};
        EXPECT_EQ(::utimensat(AT_FDCWD, temp.c_str(), old, AT_SYMLINK_NOFOLLOW), 0);
        return shared;
    }
    }
    return shared;
}

class SharedFolderLink : public ::testing::TestWithParam<std::tuple<Level, bool, uid_t>> {};

}  // namespace

TEST_P(SharedFolderLink, IsNeverFollowedAndNothingOfTheVictimsIsWrittenOrDeleted) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, to act as two other users";
    const auto [level, sticky, victim] = GetParam();
    const mode_t shared_mode = sticky ? 01777 : 0777;
    const char* const names[] = {"the loader", "list_cache", "trim_cache", "clear_cache"};
    for (int op = 0; op < 4; ++op) {
        SCOPED_TRACE(names[op]);
        TempDir dir;
        VictimBesideShared scene;
        ASSERT_NO_FATAL_FAILURE(make_victim_beside_shared(dir.path(), victim, shared_mode, scene));
        const auto& [home, victim_cache, shared] = scene;
        const fs::path root = set_up(level, shared, victim_cache, victim, shared_mode);
        const auto before = snapshot(home);

        const Bounded run = run_bounded(
            [&] {
                WarningCapture quiet;
                switch (op) {
                case 0: return look_up(root);
                case 1: list_cache({true, root}); return 0;
                case 2: trim_cache({true, root}, 0); return 0;
                default: clear_cache({true, root}); return 0;
                }
            },
            10, victim);
        EXPECT_EQ(run.code, 0) << run.describe();
        EXPECT_LT(run.max_rss_kib, 512 * 1024) << run.describe();
        EXPECT_EQ(snapshot(home), before) << "the victim's own cache was written, removed or touched";
        // Still usable: kernels are produced (from memory where the cache is refused), and the
        // victim's own cache still serves from the disk.
        const Bounded after = run_bounded(
            [&] {
                WarningCapture quiet;
                int hits = 0;
                if (const int wrong = look_up(root)) return wrong;
                if (const int wrong = look_up(victim_cache, hits)) return 20 + wrong;
                return hits == 2 ? 0 : 30 + hits;
            },
            10, victim);
        EXPECT_EQ(after.code, 0) << "afterwards: " << after.describe();
    }
}

INSTANTIATE_TEST_SUITE_P(EveryLevel, SharedFolderLink,
                         ::testing::Combine(::testing::Values(Level::Root, Level::FormatFolder, Level::ArchFolder,
                                                              Level::ArchInAttackersFolder, Level::Files),
                                            ::testing::Bool(), ::testing::Values(uid_t{0}, kOrdinaryVictim)),
                         [](const auto& info) {
                             return std::string(name_of(std::get<0>(info.param))) +
                                    (std::get<1>(info.param) ? "_Sticky" : "_NotSticky") +
                                    (std::get<2>(info.param) == 0 ? "_Root" : "_User");
                         });

// A warm-up into a refused folder says what was refused and why: it is no disk or quota problem.
TEST(SharedFolderLink, AWarmUpThatIsRefusedSaysSo) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, to act as another user";
    for (Level level : {Level::Root, Level::FormatFolder}) {
        TempDir dir;
        give(dir.path(), 0, 0755);
        const fs::path shared = dir.path() / "shared", victim_cache = dir.path() / "victim";
        ASSERT_EQ(look_up(victim_cache), 0);
        fs::create_directory(shared);
        give(shared, 0, 01777);
        const fs::path root = set_up(level, shared, victim_cache, 0, 01777);
        WarningCapture quiet;
        try {
            warm_kernel({true, root}, scenario_kernel(), kArch);
            ADD_FAILURE() << "warmed a refused cache";
        } catch (const CacheNotWritable& e) {
            const std::string message = e.what();
            EXPECT_NE(message.find("is a symbolic link"), std::string::npos) << message;
            EXPECT_NE(message.find("owned by user 65534"), std::string::npos) << message;
            EXPECT_EQ(message.find("disk"), std::string::npos) << message;
            EXPECT_EQ(message.find("a write failed"), std::string::npos) << message;
        }
    }
}
