// The cache root's own rules (open_root_folder in src/cache/checked_files.hpp). The root is the one
// place where a link is followed, and only a link of the user's own (or root's): another user's
// link as the root, in a sticky shared folder (like /tmp) or a non-sticky one, is refused with one
// warning that says whose link it is, by the loader and by every cache command, and nothing of
// what it points to is read, written or removed. A root replaced between the look at it and its
// open (by another user's link, or by another folder) is refused. The user's own link is followed,
// a chain of them too; a loop of them is an error, never a hang.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <tropical/cache.hpp>
#include <tropical/error.hpp>
#include "cache/checked_files.hpp"
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

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// The warnings say that the root is another user's link, once, and what to do.
int says_others_link(const std::vector<std::string>& warnings, const fs::path& root) {
    if (warnings.size() != 1) return 60 + static_cast<int>(std::min<std::size_t>(warnings.size(), 9));
    const std::string& w = warnings[0];
    if (!contains(w, root.string() + " is a symbolic link owned by user 65534, not by you")) return 70;
    if (!contains(w, "follows no link that another user made")) return 71;
    if (!contains(w, "set TROPICAL_GEMM_CACHE_DIR to a folder of your own")) return 72;
    return 0;
}

enum class Op { Loader, List, Trim, Clear, Warm };
const char* const kOpNames[] = {"the loader", "list_cache", "trim_cache", "clear_cache", "warm_kernel"};

// What `op` does with the cache named `named`, in a child: 0 if it refused `root` (its name, spelled
// plainly) as another user's link, with one warning (the loader, the commands) or an error
// (warm_kernel) that says so.
int refuses_others_link(Op op, const fs::path& named, const fs::path& root) {
    WarningCapture warnings;
    switch (op) {
    case Op::Loader: {
        int hits = 0;
        if (const int wrong = look_up(named, hits)) return wrong;  // kernels still come, from memory
        if (hits != 0) return 20;
        if (const int wrong = look_up(named, hits)) return wrong;  // a second store: no second warning
        return says_others_link(warnings.messages, root);
    }
    case Op::List: {
        const CacheListing listing = list_cache({true, named});
        if (!listing.entries.empty() || listing.compiler) return 30;
        return says_others_link(warnings.messages, root);
    }
    case Op::Trim:
        if (trim_cache({true, named}, 0).files != 0) return 40;
        return says_others_link(warnings.messages, root);
    case Op::Clear:
        if (clear_cache({true, named}).files != 0) return 50;
        return says_others_link(warnings.messages, root);
    case Op::Warm:
        try {
            warm_kernel({true, named}, scenario_kernel(), kArch);
            return 80;
        } catch (const CacheNotWritable& e) {
            const std::string message = e.what();
            if (!contains(message, root.string() + " is a symbolic link owned by user 65534")) return 81;
            if (contains(message, "disk")) return 82;
        }
        return 0;
    }
    return 1;
}

class OthersLinkAsRoot : public ::testing::TestWithParam<std::tuple<bool, uid_t>> {};

}  // namespace

TEST_P(OthersLinkAsRoot, IsRefusedWithOneWarningAndNothingOfTheVictimsIsTouched) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, to act as two other users";
    const auto [sticky, victim] = GetParam();
    for (Op op : {Op::Loader, Op::List, Op::Trim, Op::Clear, Op::Warm}) {
        SCOPED_TRACE(kOpNames[static_cast<int>(op)]);
        TempDir dir;
        VictimBesideShared scene;
        ASSERT_NO_FATAL_FAILURE(make_victim_beside_shared(dir.path(), victim, sticky ? 01777 : 0777, scene));
        const auto& [home, victim_cache, shared] = scene;
        // The attacker's link where the victim's cache root is named: to the victim's own cache.
        const fs::path root = shared / "cache";
        attacker_links(victim_cache, root);
        const auto before = snapshot(home);

        // Spelled as a script may spell it: a trailing "/" or "/." makes lstat and O_NOFOLLOW
        // follow the link, so the library looks at the name without them.
        for (const fs::path& named : {root, fs::path(root.string() + "/"), fs::path(root.string() + "/.")}) {
            SCOPED_TRACE(named.string());
            const Bounded run = run_bounded([&] { return refuses_others_link(op, named, root); }, 10, victim);
            EXPECT_EQ(run.code, 0) << run.describe();
        }
        EXPECT_EQ(snapshot(home), before) << "the victim's own cache was written, removed or touched";
        struct stat link {};
        ASSERT_EQ(::lstat(root.c_str(), &link), 0) << "the attacker's link was removed";
        EXPECT_TRUE(S_ISLNK(link.st_mode));
    }
}

INSTANTIATE_TEST_SUITE_P(StickyOrNot, OthersLinkAsRoot,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(uid_t{0}, kOrdinaryVictim)),
                         [](const auto& info) {
                             return std::string(std::get<0>(info.param) ? "Sticky" : "NotSticky") +
                                    (std::get<1>(info.param) == 0 ? "_Root" : "_User");
                         });

// --- a root replaced between the look (lstat) and the open -----------------------------------------

namespace {

// What the hook does, once, in the process that opens the root: `moved` aside, `replacement` in.
fs::path g_root, g_moved_to, g_replacement;
bool g_swapped = false;

void swap_root(const fs::path& path) {
    if (g_swapped || path != g_root) return;
    g_swapped = true;
    if (::rename(g_root.c_str(), g_moved_to.c_str()) != 0 || ::rename(g_replacement.c_str(), g_root.c_str()) != 0)
        std::abort();
}

struct SwapAtOpen {
    SwapAtOpen(const fs::path& root, const fs::path& moved_to, const fs::path& replacement) {
        g_root = root;
        g_moved_to = moved_to;
        g_replacement = replacement;
        g_swapped = false;
        detail::set_root_open_hook_for_testing(swap_root);
    }
    ~SwapAtOpen() { detail::set_root_open_hook_for_testing(nullptr); }
};

// A process whose root is swapped as it opens it: kernels from memory, one warning with `says`,
// and the root's replacement untouched. 0 if so.
int swapped_run(const fs::path& root, const fs::path& moved_to, const fs::path& replacement, std::string_view says) {
    SwapAtOpen swap(root, moved_to, replacement);
    WarningCapture warnings;
    int hits = 0;
    if (const int wrong = look_up(root, hits)) return wrong;
    if (!g_swapped) return 20;
    if (hits != 0) return 21;
    if (warnings.messages.size() != 1) return 22;
    return contains(warnings.messages[0], says) ? 0 : 23;
}

}  // namespace

TEST(RootReplacedWhileOpened, ByAnotherUsersLinkIsRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, to make another user's link";
    for (const bool own_link_first : {false, true}) {
        SCOPED_TRACE(own_link_first ? "the root: your own link, swapped" : "the root: a folder, swapped");
        TempDir dir;
        give(dir.path(), 0, 0755);
        const fs::path cache = dir.path() / "cache", precious = dir.path() / "precious";
        ASSERT_EQ(look_up(cache), 0);
        fs::create_directories(precious);
        std::ofstream(precious / "data") << "the victim's";
        // The root named is the warm cache itself, or the user's own link to it.
        const fs::path root = own_link_first ? dir.path() / "link" : cache;
        if (own_link_first) {
            ASSERT_EQ(::symlink(cache.c_str(), root.c_str()), 0);
        }
        const fs::path evil = dir.path() / "evil";
        ASSERT_EQ(::symlink(precious.c_str(), evil.c_str()), 0);
        ASSERT_EQ(::lchown(evil.c_str(), kOtherUser, kOtherUser), 0);  // the attacker's
        const auto before = snapshot(precious);
        const Bounded run = run_bounded([&] {
            return swapped_run(root, dir.path() / "moved", evil,
                               root.string() + " is a symbolic link owned by user 65534");
        });
        EXPECT_EQ(run.code, 0) << run.describe();
        EXPECT_EQ(snapshot(precious), before) << "the folder the swapped-in link points to was touched";
    }
}

TEST(RootReplacedWhileOpened, ByAnotherFolderIsRefused) {
    TempDir dir;
    const fs::path root = dir.path() / "cache", other = dir.path() / "other";
    ASSERT_EQ(look_up(root), 0);
    fs::create_directories(other);
    std::ofstream(other / "data") << "someone's";
    const auto before = snapshot(other);
    const Bounded run = run_bounded([&] {
        return swapped_run(root, dir.path() / "moved", other, root.string() + " was replaced by something else");
    });
    EXPECT_EQ(run.code, 0) << run.describe();
    auto moved = before;  // `other`, now under the root's name
    moved.clear();
    for (const auto& [path, what] : before) moved[root.string() + path.substr(other.string().size())] = what;
    EXPECT_EQ(snapshot(root), moved) << "the folder swapped in was used";
}

// --- the user's own links ----------------------------------------------------------------------

// Your own link (a cache on another disk, say) is followed, through a chain of them, relative or
// absolute: the cache there is filled, then read back, with no warning.
TEST(OwnLinkAsRoot, IsFollowedThroughAChainOfThem) {
    TempDir dir;
    const fs::path target = dir.path() / "disk" / "cache";
    fs::create_directories(target);
    ASSERT_EQ(::symlink("disk/cache", (dir.path() / "second").c_str()), 0);                    // relative
    ASSERT_EQ(::symlink((dir.path() / "second").c_str(), (dir.path() / "first").c_str()), 0);  // absolute
    for (const fs::path& root : {dir.path() / "first", dir.path() / "second", dir.path() / "first/"}) {
        SCOPED_TRACE(root.string());
        clear_cache({true, target});
        const Bounded run = run_bounded([&] {
            WarningCapture warnings;
            int first = 0, second = 0;
            if (const int wrong = look_up(root, first)) return wrong;
            if (const int wrong = look_up(root, second)) return wrong;
            if (first != 0 || second != 2) return 20 + second;
            if (list_cache({true, root}).entries.size() != 3) return 30;  // CUBIN, PTX, PTX for the JIT
            return warnings.messages.empty() ? 0 : 40;
        });
        EXPECT_EQ(run.code, 0) << run.describe();
        EXPECT_TRUE(fs::exists(cache_format_directory(target) / "nvrtc-identity")) << "not written through the link";
        EXPECT_EQ(clear_cache({true, root}).entries.size(), 3u) << "your own cache, cleared through your own link";
        struct stat link {};
        EXPECT_EQ(::lstat((dir.path() / "first").c_str(), &link), 0);
        EXPECT_TRUE(S_ISLNK(link.st_mode)) << "clear removed the link itself";
    }
}

// A link owned by root (an administrator's, to a shared read-only cache) is followed for anyone.
TEST(OwnLinkAsRoot, RootsLinkIsFollowedForAnOrdinaryUser) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, to act as another user";
    TempDir dir;
    give(dir.path(), 0, 0755);
    const fs::path cache = dir.path() / "cache", root = dir.path() / "link";
    fs::create_directories(cache);
    give(cache, kOrdinaryVictim, 0700);
    ASSERT_EQ(::symlink(cache.c_str(), root.c_str()), 0);  // root's
    const Bounded run = run_bounded(
        [&] {
            WarningCapture warnings;
            int hits = 0;
            if (const int wrong = look_up(root)) return wrong;
            if (const int wrong = look_up(root, hits)) return wrong;
            return hits == 2 && warnings.messages.empty() ? 0 : 20 + hits;
        },
        10, kOrdinaryVictim);
    EXPECT_EQ(run.code, 0) << run.describe();
}

// Your own link to another user's link: the chain reaches a link that you did not make.
TEST(OwnLinkAsRoot, LeadingToAnotherUsersLinkIsRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, to make another user's link";
    TempDir dir;
    give(dir.path(), 0, 0755);
    const fs::path shared = dir.path() / "shared", precious = dir.path() / "precious";
    fs::create_directories(shared);
    give(shared, 0, 01777);
    ASSERT_EQ(look_up(precious), 0);
    attacker_links(precious, shared / "cache");
    const fs::path root = dir.path() / "mine";
    ASSERT_EQ(::symlink((shared / "cache").c_str(), root.c_str()), 0);
    const auto before = snapshot(precious);
    for (Op op : {Op::Loader, Op::Clear}) {
        const Bounded run = run_bounded([&] {
            WarningCapture warnings;
            if (op == Op::Clear)
                return clear_cache({true, root}).files == 0 && warnings.messages.size() == 1 &&
                               contains(warnings.messages[0], "owned by user 65534")
                           ? 0
                           : 30;
            int hits = 0;
            if (const int wrong = look_up(root, hits)) return wrong;
            return hits == 0 && warnings.messages.size() == 1 &&
                           contains(warnings.messages[0],
                                    (shared / "cache").string() + " is a symbolic link owned by user 65534")
                       ? 0
                       : 20;
        });
        EXPECT_EQ(run.code, 0) << kOpNames[static_cast<int>(op)] << ": " << run.describe();
    }
    EXPECT_EQ(snapshot(precious), before);
}

// A loop of your own links is an error said once, never a hang; the kernels come from memory.
TEST(OwnLinkAsRoot, ALoopOfLinksIsAnErrorNotAHang) {
    TempDir dir;
    ASSERT_EQ(::symlink("b", (dir.path() / "a").c_str()), 0);
    ASSERT_EQ(::symlink("a", (dir.path() / "b").c_str()), 0);
    const fs::path root = dir.path() / "a";
    const Bounded run = run_bounded([&] {
        WarningCapture warnings;
        int hits = 0;
        if (const int wrong = look_up(root, hits)) return wrong;
        if (hits != 0 || warnings.messages.size() != 1) return 20;
        if (!contains(warnings.messages[0], "symbolic links")) return 21;  // strerror(ELOOP)
        list_cache({true, root});
        clear_cache({true, root});
        return 0;
    });
    EXPECT_EQ(run.code, 0) << run.describe();
}

// The children of the fault-injection tests that act as another user have that user's groups
// only: none of root's supplementary groups is kept (tests/support/hostile_files.hpp).
TEST(HostileFiles, AChildAsAnotherUserKeepsNoneOfRootsGroups) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, to act as another user";
    EXPECT_TRUE(as_user(kOtherUser, [] {
        gid_t groups[64];
        const int count = ::getgroups(64, groups);
        for (int i = 0; i < count; ++i)
            if (groups[i] != kOtherUser) return false;
        return count >= 0 && ::getgid() == kOtherUser && ::getegid() == kOtherUser && ::geteuid() == kOtherUser;
    }));
}
