#pragma once
// Whether a file or folder of the kernel cache may be trusted. A cache holds code that the GPU
// runs: a file that another user wrote, or could have rewritten, is never loaded, so that a cache
// in a shared place (/tmp) cannot let one user run code on another user's GPU.
#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <string>

namespace tropical::detail {

struct Distrust {
    std::string problem;  // "is writable by other users (mode 0777)"
    std::string fix;      // "chmod go-w <path>"
};

// Trusted: owned by this user, or by root (root can run code here anyway, and an administrator may
// ship a read-only warmed cache), and writable by nobody else. A folder with the sticky bit (/tmp)
// may be writable by others: they cannot rename or remove what is ours there, and what they add
// is theirs, which this check refuses file by file.
std::optional<Distrust> distrust(const struct stat& info, const std::filesystem::path& path);

// The same for a path, following symlinks; a path that cannot be examined is not judged here (the
// open or the read that follows fails on its own).
std::optional<Distrust> distrust(const std::filesystem::path& path);

}  // namespace tropical::detail
