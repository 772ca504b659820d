#pragma once
// Whether a file or folder of the kernel cache may be trusted. A cache holds code that the GPU
// runs: a file that another user wrote, or could have rewritten, is never loaded, so that a cache
// in a shared place (/tmp) cannot let one user run code on another user's GPU. Judged on what
// fstat or lstat says of the thing itself, never on the target of a link.
#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

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

// Whether this process may remove `item` (what lstat says of it) from a folder that it trusts
// (`folder`, what fstat says of it): always where nobody else can write that folder, and only
// what is its own where others can (a sticky shared folder, where the rest is another user's).
bool may_remove(const struct stat& folder, const struct stat& item);

// What a file is, in words: "a symbolic link", "a FIFO", "a socket", "a character device",
// "a block device", "a folder", "a file".
std::string_view file_type_words(mode_t mode);

}  // namespace tropical::detail
