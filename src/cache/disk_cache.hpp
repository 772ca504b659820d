#pragma once
// Files in the cache folder: whole-file reads, and writes published atomically (a unique temp file
// in the same folder, written and closed, then renamed over the final name). Readers never lock: a
// reader sees either the old file or the new one, never a partial one.
#include <sys/stat.h>

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tropical::detail {

// Reads up to `size` bytes from an open file; fewer if it ends early (it shrank: the checksum of
// the entry then rejects it).
std::vector<std::byte> read_all(int fd, std::size_t size);

class DiskCache {
public:
    // Creates `directory` (mode 0700) if needed. If that fails, or if it or its parent (the cache
    // root) could have been written by another user (file_trust.hpp), the cache is unusable: one
    // warning, and every read misses and every publish is skipped.
    explicit DiskCache(std::filesystem::path directory);

    const std::filesystem::path& directory() const { return directory_; }
    bool writable() const { return writable_; }

    // The whole file, or nothing if it is absent, unreadable, or not to be trusted (another user's,
    // or writable by others, or in such a folder: one warning per process for this cache).
    std::optional<std::vector<std::byte>> read(const std::filesystem::path& relative) const;

    // Publishes `bytes` as `relative`. Returns false, after one warning per process for this folder,
    // if the folder is not writable (read-only, full, foreign); later publishes are then skipped.
    bool publish(const std::filesystem::path& relative, std::span<const std::byte> bytes);

    // Marks an entry as just used, for least-recently-used trimming. Best effort.
    void touch(const std::filesystem::path& relative) const;

private:
    void degrade(const std::string& why);
    // False, after one warning, if `path` (the root, this folder, an sm_XY folder, or an entry with
    // its fstat `info`) could have been written by another user.
    bool trusted(const std::filesystem::path& path, const struct stat* info = nullptr) const;

    std::filesystem::path directory_;
    // Threads read and publish at once; a failed publish turns writing off for all of them.
    std::atomic<bool> writable_ = true;
    std::atomic<bool> readable_ = true;
};

}  // namespace tropical::detail
