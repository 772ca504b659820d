// Publishing a file of the cache (CacheStore::publish), and removing the temp files of writers
// that died. A publish is: make the folder, create a unique temp file in it, lock it, write it,
// fsync it, rename it over the final name, fsync the folder. A writer killed at any step leaves
// the final name as it was (absent, or the old whole file) and at most its temp file, which the
// next writer removes as soon as no lock is held on it (the lock dies with its writer).
//
// The one moment a live writer's temp file is not locked is between its creation (O_EXCL) and
// its flock. A sweeper that finds it then takes the lock itself and removes the file while holding
// it; the writer's flock waits for that lock, then finds its file without a name (st_nlink 0), and
// makes a fresh temp file. So no live writer loses its file, and no dead writer's file waits.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "cache/cache_store.hpp"
#include "cache/file_trust.hpp"
#include "util/warnings.hpp"

namespace tropical::detail {

namespace {

std::atomic<PublishHook> g_publish_hook{nullptr};

void step(PublishStep s, std::string_view file) {
    if (const PublishHook hook = g_publish_hook.load(std::memory_order_relaxed)) hook(s, file);
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

// How taking the lock of a new temp file went.
enum class TempLock {
    Held,     // this writer holds it: no sweeper will remove the file now
    Swept,    // a sweeper removed the file before the lock was taken: make another
    NoLocks,  // this file system has no flock: temp files go by their age alone
};

TempLock lock_temp(int fd) {
    // A sweeper holds the lock only while it looks at the file and removes it: a moment. Far
    // longer (a sweeper stopped in a debugger) counts as swept, and the writer makes another file.
    for (int wait = 0; wait < 1000; ++wait) {
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
            struct stat info {};
            return ::fstat(fd, &info) == 0 && info.st_nlink > 0 ? TempLock::Held : TempLock::Swept;
        }
        if (errno == EINTR) continue;
        if (errno != EWOULDBLOCK) return TempLock::NoLocks;
        ::usleep(1000);
    }
    return TempLock::Swept;
}

std::chrono::system_clock::time_point modified(const struct stat& info) {
    return std::chrono::system_clock::time_point{std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::seconds(info.st_mtim.tv_sec) + std::chrono::nanoseconds(info.st_mtim.tv_nsec))};
}

}  // namespace

void set_publish_hook_for_testing(PublishHook hook) { g_publish_hook = hook; }

StoreWrite CacheStore::publish(int where, const std::string& name, std::span<const std::byte> bytes) {
    if (!usable_ || !writable_) return problem();
    Opened opened;
    std::string temp;
    FileHandle fd;
    bool swept = false;
    // Another process clearing the cache may remove the folders, empty, between their creation and
    // the open, or a sweeper the temp file before it is locked: each is made again, a moment later
    // each time, before the cache is called unusable. (Three tries were too few on CI's 2-core
    // machine: 8 of 32 warm-up processes clearing one cache took all three from a warming one.)
    constexpr int kAttempts = 12;
    for (int attempt = 0; attempt < kAttempts && !fd; ++attempt) {
        if (attempt > 0) ::usleep(static_cast<useconds_t>(500 * attempt));  // let the clearing pass
        step(PublishStep::OpenFolder, name);
        opened = open_for_use(where, true);
        if (!opened.folder) return opened.why;
        sweep_abandoned(*opened.folder, where);
        step(PublishStep::CreateTemp, name);
        temp = temp_file_name(name);
        // 0644 whatever the umask (it can only remove bits): never writable by anyone else.
        const int created =
            ::openat(opened.folder->fd.get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        const int error = errno;
        fd.reset(created);
        if (!fd && error != ENOENT)
            return degrade(
                fmt::format("cannot create {}: {}", (opened.folder->path / temp).string(), std::strerror(error)));
        if (!fd) continue;
        step(PublishStep::Lock, name);
        // Held until the file is renamed and closed: whoever finds it locked knows that its writer lives.
        if (lock_temp(fd.get()) == TempLock::Swept) {
            struct stat info {};
            // Gone already, or (held too long by another) removed here if it is still this file.
            if (::fstat(fd.get(), &info) == 0 && info.st_nlink > 0) remove_at(*opened.folder, temp, info);
            fd.reset();
            swept = true;
        }
    }
    if (!fd)
        return degrade(swept ? fmt::format("the temp files for {} were removed as they were made (another process "
                                           "clearing the cache?)",
                                           (root_ / name).string())
                             : fmt::format("a folder on the way to {} keeps disappearing (another process clearing "
                                           "the cache?)",
                                           (root_ / name).string()));
    const Folder& folder = *opened.folder;
    const std::string temp_path = (folder.path / temp).string();
    auto failed = [&](const char* doing, int error) {
        ::unlinkat(folder.fd.get(), temp.c_str(), 0);
        return degrade(fmt::format("cannot {} {}: {}", doing, temp_path, std::strerror(error)));
    };
    step(PublishStep::Write, name);
    if (!write_all(fd.get(), bytes)) return failed("write", errno);
    step(PublishStep::SyncFile, name);
    // On disk before it has its final name: after a power loss that name holds a whole file or the
    // old one, never a partial one. A file system that cannot sync (EINVAL) still renames atomically.
    if (::fsync(fd.get()) != 0 && errno != EINVAL) return failed("write", errno);
    step(PublishStep::Rename, name);
    if (::renameat(folder.fd.get(), temp.c_str(), folder.fd.get(), name.c_str()) != 0) {
        const int error = errno;
        ::unlinkat(folder.fd.get(), temp.c_str(), 0);
        if (error != EISDIR && error != ENOTEMPTY && error != EEXIST)
            return degrade(fmt::format("cannot rename {} to {}: {}", temp_path, name, std::strerror(error)));
        // A folder where the file goes: this one file cannot be kept, the others still can. A link,
        // a FIFO or any other file there is simply replaced by the rename.
        const std::string path = (folder.path / name).string();
        StoreWrite why{false, true, fmt::format("{} is a folder, where the kernel cache keeps a file", path),
                       fmt::format("remove it (rm -r {}); tropical-gemm-warmup --clear removes it if empty", path)};
        warn_once("kernel cache in the way " + path,
                  fmt::format("the kernel cache cannot keep {}: it is a folder, where the cache keeps a file. {} "
                              "To fix it: {}.",
                              path,
                              name == kIdentityFileName
                                  ? "Which NVRTC filled the cache is not recorded; the kernels are still kept."
                                  : "That kernel is kept in memory only.",
                              why.fix));
        return why;
    }
    step(PublishStep::SyncFolder, name);
    // The rename itself on disk; a file system that cannot sync a folder is no failure.
    (void)::fsync(folder.fd.get());
    step(PublishStep::Done, name);
    return {true, false, "", ""};
}

void CacheStore::sweep_abandoned(const Folder& folder, int where) {
    {
        std::lock_guard lock(mutex_);
        if (!swept_.insert(where).second) return;  // once per folder and store
    }
    for (const auto& name : folder_names(folder))
        if (is_temp_file_name(name)) remove_if_abandoned(folder, name);
}

bool CacheStore::remove_if_abandoned(const Folder& folder, const std::string& name) {
    if (folder.distrust) return false;
    const auto info = stat_at(folder, name);
    if (!info || !may_remove(folder.info, *info)) return false;
    const bool old = std::chrono::system_clock::now() - modified(*info) >= kAbandonedTempAge;
    FileHandle held;
    if (S_ISREG(info->st_mode)) {
        held.reset(::openat(folder.fd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (!held) return false;
        struct stat opened {};
        if (::fstat(held.get(), &opened) != 0 || opened.st_dev != info->st_dev || opened.st_ino != info->st_ino)
            return false;  // replaced since it was looked at: judged again next time
        // Its writer holds it locked from just after its creation until the rename: a lock refused
        // means the writer lives; a lock taken means it is dead (or between creating and locking
        // its file: it then finds the file gone and makes another, see lock_temp). The lock is held
        // here until the file is removed. Where the file system has no locks, the age alone decides.
        if (::flock(held.get(), LOCK_EX | LOCK_NB) != 0 && (errno == EWOULDBLOCK || errno == EINTR || !old))
            return false;
    } else if (!old) {
        return false;  // not a writer's: left to age, as where there are no locks
    }
    if (remove_at(folder, name, *info) != 0) return false;
    note_cache_removal();
    return true;
}

}  // namespace tropical::detail
