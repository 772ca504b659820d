#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/checked_calls.hpp"

namespace tropical::testing {

// A fresh folder under $TMPDIR, removed with everything in it when the test ends (a test that left
// something there it cannot remove fails).
class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "tropical-test-XXXXXX").string();
        path_ = ::mkdtemp(pattern.data());
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
        no_error(ec, "making " + path_.string() + " writable again");
        std::filesystem::remove_all(path_, ec);
        no_error(ec, "removing " + path_.string());
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

}  // namespace tropical::testing
