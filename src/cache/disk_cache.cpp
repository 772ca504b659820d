#include "cache/disk_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include <fmt/format.h>

#include "cache/file_trust.hpp"
#include "util/warnings.hpp"

namespace tropical::detail {
namespace {

// mkdir -p, creating each missing folder private to the user: a cache holds code the GPU will run.
// Another process clearing the cache removes folders once empty, maybe right after they were made
// here: then they are made again (a few times) rather than the cache called unusable.
bool make_directories(const std::filesystem::path& directory, std::string& why) {
    for (int attempt = 0; attempt < 3; ++attempt) {
        std::filesystem::path partial;
        bool vanished = false;
        for (const auto& part : directory) {
            partial /= part;
            if (::mkdir(partial.c_str(), 0700) == 0 || errno == EEXIST) continue;
            if (errno == ENOENT) {  // a parent made (or found) a moment ago is gone
                vanished = true;
                break;
            }
            why = fmt::format("cannot create {}: {}", partial.string(), std::strerror(errno));
            return false;
        }
        struct stat info {};
        if (vanished || ::stat(directory.c_str(), &info) != 0) continue;
        if (S_ISDIR(info.st_mode)) return true;
        why = fmt::format("{} is not a folder", directory.string());
        return false;
    }
    why = fmt::format("a folder on the way to {} keeps disappearing (another process clearing the cache, or a "
                      "dangling symlink?)",
                      directory.string());
    return false;
}

std::string unique_suffix() {
    static const std::uint64_t seed = std::random_device{}() * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(::getpid());
    static std::atomic<std::uint64_t> counter{0};
    return fmt::format(".tmp-{}-{:x}", ::getpid(), seed + counter.fetch_add(1));
}

bool write_all(int fd, std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
        const ssize_t written = ::write(fd, bytes.data(), bytes.size());
        if (written < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        bytes = bytes.subspan(static_cast<std::size_t>(written));
    }
    return true;
}

}  // namespace

std::vector<std::byte> read_all(int fd, std::size_t size) {
    std::vector<std::byte> bytes(size);
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        done += static_cast<std::size_t>(got);
    }
    bytes.resize(done);
    return bytes;
}

DiskCache::DiskCache(std::filesystem::path directory) : directory_(std::move(directory)) {
    std::string why;
    if (!make_directories(directory_, why)) {
        readable_ = false;
        degrade(why);
    } else if (!trusted(directory_.parent_path()) || !trusted(directory_)) {
        readable_ = false;
        writable_ = false;
    }
}

bool DiskCache::trusted(const std::filesystem::path& path, const struct stat* info) const {
    const auto problem = info ? distrust(*info, path) : distrust(path);
    if (!problem) return true;
    // One topic per cache: a cache with one bad file usually has more, and one warning says it.
    warn_once("kernel cache trust " + directory_.string(),
              fmt::format("the kernel cache {} is not safe to use: {} {}, so another user could have put code "
                          "there that this process would run on the GPU. {} To fix it: {}; or set "
                          "TROPICAL_GEMM_CACHE_DIR to a folder of your own.",
                          directory_.string(), path.string(), problem->problem,
                          info ? "That file is ignored and its kernel compiled again."
                               : "The folder is not used: kernels are compiled and kept in memory only.",
                          problem->fix));
    return false;
}

void DiskCache::degrade(const std::string& why) {
    writable_ = false;
    warn_once("kernel cache " + directory_.string(),
              fmt::format("the kernel cache folder {} is not usable ({}); kernels compiled by this process are kept "
                          "in memory only. Set TROPICAL_GEMM_CACHE_DIR to a writable folder, or "
                          "TROPICAL_GEMM_CACHE=off to not use a disk cache.",
                          directory_.string(), why));
}

std::optional<std::vector<std::byte>> DiskCache::read(const std::filesystem::path& relative) const {
    if (!readable_) return std::nullopt;
    const auto path = directory_ / relative;
    if (path.parent_path() != directory_ && !trusted(path.parent_path())) return std::nullopt;
    // O_NONBLOCK: a FIFO planted in place of an entry must not hang the open.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return std::nullopt;
    std::vector<std::byte> bytes;
    struct stat info {};
    // Judged on the file that was opened, not on its name, which could change in between.
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && !trusted(path, &info)) {
        ::close(fd);
        return std::nullopt;  // a miss: recompiled and published over it
    }
    if (S_ISREG(info.st_mode)) bytes = read_all(fd, static_cast<std::size_t>(info.st_size));
    ::close(fd);
    return bytes;
}

bool DiskCache::publish(const std::filesystem::path& relative, std::span<const std::byte> bytes) {
    if (!writable_) return false;
    const auto target = directory_ / relative;
    const std::string temp = target.string() + unique_suffix();
    int fd = -1;
    // Another process clearing the cache may remove the folders, empty, between their creation and
    // the open: create them again (a few times) before calling the cache unusable.
    for (int attempt = 0; attempt < 3 && fd < 0; ++attempt) {
        std::string why;
        if (!make_directories(target.parent_path(), why)) {
            degrade(why);
            return false;
        }
        if (target.parent_path() != directory_ && !trusted(target.parent_path())) {
            writable_ = false;
            return false;
        }
        // 0644 whatever the umask (it can only remove bits): never writable by anyone else.
        fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != ENOENT) break;
    }
    if (fd < 0) {
        degrade(fmt::format("cannot create {}: {}", temp, std::strerror(errno)));
        return false;
    }
    const bool written = write_all(fd, bytes);
    const int write_errno = errno;
    // close() reports delayed write errors (NFS, quota): check it before publishing.
    const bool closed = ::close(fd) == 0;
    if (!written || !closed) {
        ::unlink(temp.c_str());
        degrade(fmt::format("cannot write {}: {}", temp, std::strerror(written ? errno : write_errno)));
        return false;
    }
    if (::rename(temp.c_str(), target.c_str()) != 0) {
        const int rename_errno = errno;
        ::unlink(temp.c_str());
        degrade(fmt::format("cannot rename {} to {}: {}", temp, target.string(), std::strerror(rename_errno)));
        return false;
    }
    return true;
}

void DiskCache::touch(const std::filesystem::path& relative) const {
    if (writable_) ::utimensat(AT_FDCWD, (directory_ / relative).c_str(), nullptr, 0);
}

}  // namespace tropical::detail
