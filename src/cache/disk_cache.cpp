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

#include "util/warnings.hpp"

namespace tropical::detail {
namespace {

// mkdir -p, creating each missing folder private to the user: a cache holds code the GPU will run.
bool make_directories(const std::filesystem::path& directory, std::string& why) {
    std::filesystem::path partial;
    for (const auto& part : directory) {
        partial /= part;
        if (::mkdir(partial.c_str(), 0700) == 0 || errno == EEXIST) continue;
        why = fmt::format("cannot create {}: {}", partial.string(), std::strerror(errno));
        return false;
    }
    struct stat info {};
    if (::stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
        why = fmt::format("{} is not a folder", directory.string());
        return false;
    }
    return true;
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

DiskCache::DiskCache(std::filesystem::path directory) : directory_(std::move(directory)) {
    std::string why;
    if (!make_directories(directory_, why)) {
        readable_ = false;
        degrade(why);
    }
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
    const int fd = ::open((directory_ / relative).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::vector<std::byte> bytes;
    struct stat info {};
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
        bytes.resize(static_cast<std::size_t>(info.st_size));
        std::size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;
            done += static_cast<std::size_t>(got);
        }
        bytes.resize(done);  // a file that shrank under us reads short; the checksum rejects it
    }
    ::close(fd);
    return bytes;
}

bool DiskCache::publish(const std::filesystem::path& relative, std::span<const std::byte> bytes) {
    if (!writable_) return false;
    const auto target = directory_ / relative;
    std::string why;
    if (!make_directories(target.parent_path(), why)) {
        degrade(why);
        return false;
    }
    const std::string temp = target.string() + unique_suffix();
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
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
