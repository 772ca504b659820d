// Every kind of special file in place of every kind of file and folder the cache holds (a CUBIN, a
// PTX, a PTX for the JIT, the compiler record, the v1 and sm_XY folders): a FIFO, a socket, a
// device, a folder (empty or not), and links to each of these, to the victim's own folder and
// file, to another user's file, and to nothing. The loader, the listing, trim and clear each
// finish within a time and a memory bound, follow and open none of them, change nothing of the
// victim's, and leave a cache that works: a clear and two lookups later, kernels load from disk.
#include <gtest/gtest.h>

#include <string>

#include <tropical/cache.hpp>
#include "support/cache_scenarios.hpp"
#include "support/hostile_files.hpp"
#include "support/temp_dir.hpp"
#include "support/warning_capture.hpp"

using namespace tropical;
using namespace tropical::testing;
namespace fs = std::filesystem;

namespace {

enum class Operation { Lookup, List, Trim, Clear };
const char* const kOperationNames[] = {"the loader", "list_cache", "trim_cache", "clear_cache"};

class SpecialFile : public ::testing::TestWithParam<std::tuple<Position, Thing>> {};

}  // namespace

TEST_P(SpecialFile, NeitherHangsNorFollowsItAndTheCacheWorksAfterwards) {
    const auto [position, thing] = GetParam();
    for (Operation op : {Operation::Lookup, Operation::List, Operation::Trim, Operation::Clear}) {
        SCOPED_TRACE(kOperationNames[static_cast<int>(op)]);
        TempDir dir;
        const fs::path root = dir.path() / "cache", victim = dir.path() / "victim";
        ASSERT_EQ(look_up(root), 0);  // a warm cache, by a process that has ended
        const fs::path target = position_path(root, position);
        ASSERT_FALSE(target.empty());
        fs::remove_all(target);
        if (!put(thing, target, victim)) GTEST_SKIP() << "cannot make a " << name_of(thing) << " here (needs root)";
        const auto before = snapshot(victim);

        const Bounded run = run_bounded([&] {
            WarningCapture quiet;
            switch (op) {
            case Operation::Lookup: return look_up(root);
            case Operation::List: {
                const CacheListing listing = list_cache({true, root});
                if (position == Position::Identity && listing.compiler) return 20;  // not a record
                if (!is_entry(position)) return 0;
                for (const auto& e : listing.entries)  // listed, as what it is, and not valid
                    if (e.path == target) return !e.valid && !e.problem.empty() ? 0 : 21;
                return 22;
            }
            case Operation::Trim: trim_cache({true, root}, 0); return 0;
            case Operation::Clear: clear_cache({true, root}); return 0;
            }
            return 1;
        });
        EXPECT_EQ(run.code, 0) << run.describe();
        EXPECT_LT(run.max_rss_kib, 512 * 1024) << run.describe();
        EXPECT_EQ(snapshot(victim), before) << "something of the victim's was written, removed or touched";
        struct stat info {};
        const bool still_there = ::lstat(target.c_str(), &info) == 0;
        const bool a_folder = thing == Thing::EmptyFolder || thing == Thing::FullFolder;
        if (op == Operation::Clear && (is_entry(position) || position == Position::Identity) &&
            thing != Thing::FullFolder) {
            EXPECT_FALSE(still_there) << "clear removes what is in the way in its own folder";
        }
        // What a lookup reads (a CUBIN, a PTX for the JIT, the record) is replaced by the fresh
        // compile; a PTX twin is not read, and the warm-up repairs it (warm_kernel).
        const bool read = position == Position::Cubin || position == Position::JitPtx || position == Position::Identity;
        if (op == Operation::Lookup && read && !a_folder) {
            EXPECT_TRUE(still_there && S_ISREG(info.st_mode)) << "the fresh compile replaces it";
        }

        // Usable afterwards: a clear, then a process that stores both kernels, then one that loads
        // both from the disk; only a folder full of someone's files, where an entry goes, stays.
        const bool blocked = is_entry(position) && thing == Thing::FullFolder;
        const Bounded after = run_bounded([&] {
            WarningCapture quiet;
            clear_cache({true, root});
            int first = 0, second = 0;
            if (const int wrong = look_up(root, first)) return wrong;
            if (const int wrong = look_up(root, second)) return wrong;
            return second == (blocked ? 1 : 2) ? 0 : 30 + second;
        });
        EXPECT_EQ(after.code, 0) << "afterwards: " << after.describe();
        EXPECT_EQ(snapshot(victim), before);
    }
}

INSTANTIATE_TEST_SUITE_P(
    EveryPlace, SpecialFile,
    ::testing::Combine(::testing::Values(Position::Cubin, Position::Ptx, Position::JitPtx, Position::Identity,
                                         Position::FormatFolder, Position::ArchFolder),
                       ::testing::Values(Thing::Fifo, Thing::Socket, Thing::Device, Thing::EmptyFolder,
                                         Thing::FullFolder, Thing::LinkToFifo, Thing::LinkToSocket, Thing::LinkToDevice,
                                         Thing::LinkToFolder, Thing::LinkToOthersFile, Thing::LinkToOwnFile,
                                         Thing::DanglingLink)),
    [](const auto& info) {
        return std::string(name_of(std::get<0>(info.param))) + "_" + name_of(std::get<1>(info.param));
    });
