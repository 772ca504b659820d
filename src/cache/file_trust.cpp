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

std::optional<Distrust> distrust(const std::filesystem::path& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) return std::nullopt;
    return distrust(info, path);
}

}  // namespace tropical::detail
