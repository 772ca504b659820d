// Files far larger than any entry or record this library writes, in place of each kind of cache
// file: sparse files of 100 GiB and 2 GiB (ftruncate: no disk used) and one just over the bound.
// Every reader rejects them by their size, without reading them or allocating their size: the
// loader, the listing, trim, clear and load_cache_entry finish within a time and a memory bound,
// the loader replaces them, and trim and clear remove them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include <tropical/cache.hpp>
#include <tropical/error.hpp>
#include "cache/cache_store.hpp"
#include "cache/identity_record.hpp"
#include "support/cache_scenarios.hpp"
#include "support/hostile_files.hpp"
#include "support/temp_dir.hpp"
#include "support/warning_capture.hpp"

using namespace tropical;
using namespace tropical::testing;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
// Well under the 2 GiB that reading the smaller sparse file would take.
constexpr long kMemoryBoundKiB = 512 * 1024;

std::uint64_t size_of(const fs::path& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0 ? static_cast<std::uint64_t>(info.st_size) : 0;
}

class Oversized : public ::testing::TestWithParam<std::tuple<Position, std::uint64_t>> {};

}  // namespace

TEST_P(Oversized, IsRejectedBySizeWithoutBeingReadAndIsReplacedOrRemoved) {
    const auto [position, bytes] = GetParam();
    enum Operation { Lookup, List, Trim, Clear, Load };
    const char* const names[] = {"the loader", "list_cache", "trim_cache", "clear_cache", "load_cache_entry"};
    for (int op : {Lookup, List, Trim, Clear, Load}) {
        SCOPED_TRACE(names[op]);
        TempDir dir;
        const fs::path root = dir.path() / "cache";
        ASSERT_EQ(look_up(root), 0);
        const fs::path target = position_path(root, position);
        if (!make_sparse(target, bytes))
            GTEST_SKIP() << "this file system holds no sparse file of " << bytes << " bytes";

        const Bounded run = run_bounded([&] {
            WarningCapture quiet;
            switch (op) {
            case Lookup: return look_up(root);
            case List: {
                const CacheListing listing = list_cache({true, root});
                if (position == Position::Identity) return listing.compiler ? 20 : 0;
                for (const auto& e : listing.entries)
                    if (e.path == target)
                        return !e.valid && e.bytes == bytes && e.problem.find("larger") != std::string::npos ? 0 : 21;
                return 22;
            }
            case Trim: return trim_cache({true, root}, 0).entries.empty() ? 30 : 0;
            case Clear: clear_cache({true, root}); return 0;
            case Load:
                for (const auto& e : list_cache({true, root}).entries) {
                    if (e.path != target) continue;
                    try {
                        load_cache_entry(e, 0);  // rejected by the store before the driver is asked
                        return 40;
                    } catch (const InvalidArgument& error) {
                        return std::string(error.what()).find("larger") != std::string::npos ? 0 : 41;
                    }
                }
                return 0;
            }
            return 1;
        });
        EXPECT_EQ(run.code, 0) << run.describe();
        EXPECT_LT(run.max_rss_kib, kMemoryBoundKiB) << run.describe();
        const std::uint64_t left = size_of(target);
        // Trim bounds the entries; the record is not one, and the loader rewrites it.
        if (op == Clear || (op == Trim && position != Position::Identity)) {
            EXPECT_EQ(left, 0u) << "removed";
        }
        if (op == Lookup && position != Position::Ptx) {  // replaced by the fresh compile
            EXPECT_GT(left, 0u);
            EXPECT_LT(left, 1u << 20);
        }
        // Usable afterwards: the next lookups store and then find both kernels.
        const Bounded after = run_bounded([&] {
            WarningCapture quiet;
            clear_cache({true, root});
            int first = 0, second = 0;
            if (const int wrong = look_up(root, first)) return wrong;
            if (const int wrong = look_up(root, second)) return wrong;
            return second == 2 ? 0 : 50 + second;
        });
        EXPECT_EQ(after.code, 0) << "afterwards: " << after.describe();
    }
}

INSTANTIATE_TEST_SUITE_P(
    EveryFile, Oversized,
    ::testing::Combine(::testing::Values(Position::Cubin, Position::Ptx, Position::JitPtx, Position::Identity),
                       ::testing::Values(100 * kGiB, 2 * kGiB, std::uint64_t{detail::kMaxEntryBytes} + 1)),
    [](const auto& info) {
        return std::string(name_of(std::get<0>(info.param))) + "_" + std::to_string(std::get<1>(info.param) >> 20) +
               "MiB";
    });

// The record has a bound of its own, far below an entry's: a record of 8 KiB and one byte is not one.
TEST(Oversized, ARecordJustOverItsBoundIsRewritten) {
    TempDir dir;
    const fs::path root = dir.path() / "cache";
    ASSERT_EQ(look_up(root), 0);
    const fs::path record = position_path(root, Position::Identity);
    ASSERT_TRUE(make_sparse(record, detail::kMaxIdentityBytes + 1));
    EXPECT_FALSE(list_cache({true, root}).compiler);
    const Bounded run = run_bounded([&] { return look_up(root); });
    EXPECT_EQ(run.code, 0) << run.describe();
    EXPECT_LT(size_of(record), detail::kMaxIdentityBytes);
    EXPECT_TRUE(list_cache({true, root}).compiler);
}
