#pragma once
// The scene of the link tests: a victim whose warm cache lies in its home, beside a shared folder
// (sticky or not) where another user (kOtherUser) makes links. Shared by cache_links_test and
// cache_root_link_test; needs root, to act as both users.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "support/cache_scenarios.hpp"
#include "support/hostile_files.hpp"

namespace tropical::testing {

inline void give(const std::filesystem::path& path, uid_t uid, mode_t mode) {
    ASSERT_EQ(::chown(path.c_str(), uid, uid), 0) << path;
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

// The attacker's symlink `at` -> `target`, made as the attacker.
inline void attacker_links(const std::filesystem::path& target, const std::filesystem::path& at) {
    ASSERT_TRUE(as_user(kOtherUser, [&] { return ::symlink(target.c_str(), at.c_str()) == 0; })) << at;
}

struct VictimBesideShared {
    std::filesystem::path home, victim_cache, shared;
};

// Under `dir`: the victim's home holding its own warm cache (filled by the victim), and a shared
// folder of root's with `shared_mode` (01777 or 0777).
inline void make_victim_beside_shared(const std::filesystem::path& dir, uid_t victim, mode_t shared_mode,
                                      VictimBesideShared& scene) {
    namespace fs = std::filesystem;
    give(dir, 0, 0755);
    scene = {dir / "home", dir / "home" / "cache", dir / "shared"};
    fs::create_directories(scene.home);
    give(scene.home, victim, 0755);
    ASSERT_EQ(run_bounded([&] { return look_up(scene.victim_cache); }, 10, victim).code, 0);
    fs::create_directory(scene.shared);
    give(scene.shared, 0, shared_mode);
}

}  // namespace tropical::testing
