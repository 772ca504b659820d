#include "cache/file_trust.hpp"

#include <unistd.h>

#include <fmt/format.h>

namespace tropical::detail {

std::optional<Distrust> distrust(const struct stat& info, const std::filesystem::path& path) {
    const uid_t me = ::geteuid();
    if (info.st_uid != me && info.st_uid != 0)
        return Distrust{fmt::format("is owned by user {}, not by you (user {})", info.st_uid, me),
                        fmt::format("remove it (rm -rf {}) so that it is created again as yours", path.string())};
    const bool sticky_folder = S_ISDIR(info.st_mode) && (info.st_mode & S_ISVTX);
    if ((info.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_folder)
        return Distrust{fmt::format("is writable by other users (mode {:04o})", info.st_mode & 07777),
                        fmt::format("chmod go-w {}", path.string())};
    return std::nullopt;
}

bool may_remove(const struct stat& folder, const struct stat& item) {
    return item.st_uid == ::geteuid() || !(folder.st_mode & (S_IWGRP | S_IWOTH));
}

std::string_view file_type_words(mode_t mode) {
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISREG(mode)) return "a file";
    return "neither a file nor a folder";
}

}  // namespace tropical::detail
