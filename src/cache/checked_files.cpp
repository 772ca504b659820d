#include "cache/checked_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "cache/file_trust.hpp"

namespace tropical::detail {
namespace fs = std::filesystem;
namespace {

FolderOpen failed(FolderOpen out, const fs::path& path, int error, std::string_view doing) {
    out.outcome = FolderOpen::Outcome::Failed;
    out.error = error;
    out.refusal = {path, fmt::format("cannot be {}: {}", doing, std::strerror(error)), ""};
    return out;
}

FolderOpen in_the_way(FolderOpen out, const fs::path& path, const struct stat& found) {
    out.outcome = FolderOpen::Outcome::InTheWay;
    out.found = found;
    if (S_ISLNK(found.st_mode))
        out.refusal = {
            path,
            fmt::format("is a symbolic link (owned by user {}), which the kernel cache never follows", found.st_uid),
            fmt::format("remove the link (rm {}) so that a folder is made in its place, or set "
                        "TROPICAL_GEMM_CACHE_DIR to another folder",
                        path.string())};
    else
        out.refusal = {path, fmt::format("is not a folder (it is {})", file_type_words(found.st_mode)),
                       fmt::format("remove it (rm {}) so that a folder is made in its place, or set "
                                   "TROPICAL_GEMM_CACHE_DIR to another folder",
                                   path.string())};
    if (found.st_uid != ::geteuid() && found.st_uid != 0)
        out.refusal.fix = fmt::format(
            "it is user {}'s, which only they can remove: set TROPICAL_GEMM_CACHE_DIR to "
            "a folder of your own",
            found.st_uid);
    return out;
}

// The folder `fd` opened for `path`, judged by the trust rules (`above`: a refusal of a folder above it).
FolderOpen opened(FolderOpen out, FileHandle fd, const fs::path& path, const std::optional<Refusal>& above) {
    if (::fstat(fd.get(), &out.folder.info) != 0) return failed(std::move(out), path, errno, "examined");
    out.outcome = FolderOpen::Outcome::Opened;
    out.folder.fd = std::move(fd);
    out.folder.path = path;
    out.folder.distrust = above;
    if (!above)
        if (auto d = distrust(out.folder.info, path)) out.folder.distrust = Refusal{path, d->problem, d->fix};
    return out;
}

// mkdir -p, each new folder 0700 (a cache holds code the GPU will run). Another process clearing
// the cache may remove a folder just made: then it is made again, a few times. Returns 0 or the
// errno of the first folder that could not be made, with that folder in `where`.
int make_path(const fs::path& path, fs::path& where) {
    int error = 0;
    for (int attempt = 0; attempt < 3; ++attempt) {
        fs::path partial;
        error = 0;
        for (const auto& part : path) {
            partial /= part;
            if (::mkdir(partial.c_str(), 0700) == 0 || errno == EEXIST) continue;
            error = errno;
            where = partial;
            break;
        }
        if (error != ENOENT) return error;
    }
    return error;
}

void judge(FileRead& out, const fs::path& path, std::size_t max_bytes) {
    using Outcome = FileRead::Outcome;
    if (S_ISLNK(out.info.st_mode)) {
        out.outcome = Outcome::NotAFile;
        out.refusal = {path, "is a symbolic link, which the kernel cache never follows", ""};
    } else if (!S_ISREG(out.info.st_mode)) {
        out.outcome = Outcome::NotAFile;
        out.refusal = {path, fmt::format("is {}, not a file", file_type_words(out.info.st_mode)), ""};
    } else if (const auto d = distrust(out.info, path)) {
        out.outcome = Outcome::Untrusted;
        out.refusal = {path, d->problem, d->fix};
    } else if (static_cast<std::uintmax_t>(out.info.st_size) > max_bytes) {
        out.outcome = Outcome::TooLarge;
        out.refusal = {path,
                       fmt::format("is larger ({}) than a cache file may be ({})",
                                   byte_words(static_cast<std::uintmax_t>(out.info.st_size)), byte_words(max_bytes)),
                       ""};
    } else {
        out.outcome = Outcome::Read;
    }
}

FileRead read_failed(FileRead out, const fs::path& path, int error) {
    out.outcome = error == ENOENT ? FileRead::Outcome::Missing : FileRead::Outcome::Failed;
    out.refusal = {path, fmt::format("cannot be read: {}", std::strerror(error)), ""};
    return out;
}

// The root's path without what makes a lookup follow a link at its end anyway: "cache/" and
// "cache/." resolve a link named cache even for lstat and O_NOFOLLOW; "cache" does not.
fs::path without_trailing_parts(fs::path path) {
    while (path.has_relative_path() && (path.filename().empty() || path.filename() == ".")) {
        fs::path parent = path.parent_path();
        if (parent.empty()) break;  // "." itself: the current folder
        path = std::move(parent);
    }
    return path;
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// A link of another user's in the root's place: refused, wherever it points.
FolderOpen others_link(FolderOpen out, const fs::path& path, const struct stat& found) {
    out = in_the_way(std::move(out), path, found);
    out.refusal.problem = fmt::format(
        "is a symbolic link owned by user {}, not by you (user {}), and the kernel "
        "cache follows no link that another user made",
        found.st_uid, ::geteuid());
    return out;
}

// The root was looked at, and then something else was found there (`now`) when it was opened.
FolderOpen replaced(FolderOpen out, const fs::path& path, const struct stat& now) {
    if (S_ISLNK(now.st_mode) && now.st_uid != ::geteuid() && now.st_uid != 0)
        return others_link(std::move(out), path, now);
    out.outcome = FolderOpen::Outcome::InTheWay;
    out.found = now;
    out.refusal = {path,
                   "was replaced by something else while it was being opened, so the kernel cache does not use it",
                   fmt::format("if this happens again, another user or process keeps changing {}: set "
                               "TROPICAL_GEMM_CACHE_DIR to a folder of your own",
                               path.string())};
    return out;
}

// How many links of the user's own may lead from the root named to the folder (as the kernel
// bounds a chain of links): a loop of links is an error, not a hang.
constexpr int kMaxRootLinks = 8;

std::atomic<RootOpenHook> g_root_open_hook{nullptr};

}  // namespace

void FileHandle::reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
}

FolderOpen open_root_folder(const fs::path& root, bool create) {
    FolderOpen out;
    fs::path not_made;
    const int make_error = create ? make_path(root, not_made) : 0;
    const uid_t me = ::geteuid();
    // The path named, then the target of each link of this user's (or root's) on the way. Each is
    // looked at (lstat), opened without following a link, and what was opened compared with what
    // was looked at: a name swapped meanwhile (another user's link, another folder) is refused.
    fs::path path = without_trailing_parts(root);
    for (int links = 0;; ++links) {
        struct stat found {};
        if (::lstat(path.c_str(), &found) != 0) {
            const int error = errno;
            if (error == ENOENT && !create) return out;  // no cache yet, or a link of yours to nothing
            if (make_error && links == 0) return failed(std::move(out), not_made, make_error, "created");
            return failed(std::move(out), path, error, "examined");
        }
        if (S_ISLNK(found.st_mode)) {
            if (found.st_uid != me && found.st_uid != 0) return others_link(std::move(out), path, found);
            if (links == kMaxRootLinks) return failed(std::move(out), root, ELOOP, "opened");
            // Exactly the link judged is read: held by a descriptor of its own (O_PATH), compared
            // with what lstat said, and read through that descriptor.
            if (const RootOpenHook hook = g_root_open_hook.load()) hook(path);
            FileHandle link(::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
            struct stat held {};
            if (!link || ::fstat(link.get(), &held) != 0) return failed(std::move(out), path, errno, "opened");
            if (!same_file(held, found)) return replaced(std::move(out), path, held);
            char target[PATH_MAX];
            const ssize_t length = ::readlinkat(link.get(), "", target, sizeof target);
            if (length < 0) return failed(std::move(out), path, errno, "read");
            if (static_cast<std::size_t>(length) >= sizeof target)
                return failed(std::move(out), path, ENAMETOOLONG, "read");
            const fs::path text(std::string(target, static_cast<std::size_t>(length)));
            path = without_trailing_parts(text.is_absolute() ? text : path.parent_path() / text);
            continue;
        }
        if (!S_ISDIR(found.st_mode)) {
            out = in_the_way(std::move(out), path, found);
            out.refusal.fix = "set TROPICAL_GEMM_CACHE_DIR to a folder";  // the user's own file: never `rm` it
            return out;
        }
        if (const RootOpenHook hook = g_root_open_hook.load()) hook(path);
        FileHandle fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (!fd) {
            const int error = errno;
            if (error == ENOENT && !create) return out;  // removed since it was looked at
            struct stat now {};
            // A link (ELOOP) or something else (ENOTDIR) put in its place since it was looked at.
            if ((error == ELOOP || error == ENOTDIR) && ::lstat(path.c_str(), &now) == 0)
                return replaced(std::move(out), path, now);
            return failed(std::move(out), path, error, "opened");
        }
        struct stat opened_info {};
        if (::fstat(fd.get(), &opened_info) != 0) return failed(std::move(out), path, errno, "examined");
        if (!same_file(opened_info, found)) return replaced(std::move(out), path, opened_info);
        return opened(std::move(out), std::move(fd), root, std::nullopt);
    }
}

void set_root_open_hook_for_testing(RootOpenHook hook) { g_root_open_hook = hook; }

FolderOpen open_sub_folder(const Folder& parent, std::string_view name, bool create) {
    FolderOpen out;
    const std::string file(name);
    const fs::path path = parent.path / file;
    // Another process clearing the cache removes folders once empty, maybe right after they were
    // made here: then they are made again, a few times.
    int error = ENOENT;
    for (int attempt = 0; attempt < 3 && error == ENOENT; ++attempt) {
        struct stat found {};
        if (::fstatat(parent.fd.get(), file.c_str(), &found, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != ENOENT) return failed(std::move(out), path, errno, "examined");
            if (!create) return out;
            // ENOENT here: the parent itself was removed, and only the caller can open it again.
            if (::mkdirat(parent.fd.get(), file.c_str(), 0700) != 0 && errno != EEXIST)
                return failed(std::move(out), path, errno, "created");
            continue;
        }
        if (!S_ISDIR(found.st_mode)) return in_the_way(std::move(out), path, found);
        FileHandle fd(::openat(parent.fd.get(), file.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (fd) return opened(std::move(out), std::move(fd), path, parent.distrust);
        error = errno;
        // Replaced between the look and the open (by this user or root: the parent is theirs).
        if ((error == ELOOP || error == ENOTDIR) &&
            ::fstatat(parent.fd.get(), file.c_str(), &found, AT_SYMLINK_NOFOLLOW) == 0)
            return in_the_way(std::move(out), path, found);
        if (error == ENOENT && !create) return out;
    }
    return failed(std::move(out), path, error, create ? "created" : "opened");
}

std::vector<std::string> folder_names(const Folder& folder) {
    std::vector<std::string> names;
    // A descriptor of its own: closedir closes it, and reading moves only its offset.
    const int fd = ::openat(folder.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* dir = fd >= 0 ? ::fdopendir(fd) : nullptr;
    if (!dir) {
        if (fd >= 0) ::close(fd);
        return names;
    }
    while (const dirent* entry = ::readdir(dir)) {
        const std::string_view name = entry->d_name;
        if (name != "." && name != "..") names.emplace_back(name);
    }
    ::closedir(dir);
    return names;
}

std::optional<struct stat> stat_at(const Folder& folder, std::string_view name) {
    struct stat info {};
    if (::fstatat(folder.fd.get(), std::string(name).c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
    return info;
}

FileRead read_file_at(const Folder& folder, std::string_view name, std::size_t max_bytes) {
    FileRead out;
    const std::string file(name);
    const fs::path path = folder.path / file;
    // Looked at before it is opened: a device node is never opened, whatever opening it would do.
    if (::fstatat(folder.fd.get(), file.c_str(), &out.info, AT_SYMLINK_NOFOLLOW) != 0)
        return read_failed(std::move(out), path, errno);
    judge(out, path, max_bytes);
    if (out.outcome != FileRead::Outcome::Read) return out;
    FileHandle fd(::openat(folder.fd.get(), file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) {
        const int error = errno;
        if (error == ELOOP) {  // replaced by a link since it was looked at
            out.info.st_mode = S_IFLNK;
            judge(out, path, max_bytes);
            return out;
        }
        return read_failed(std::move(out), path, error);
    }
    // Judged again on what was opened: the name may have been replaced in between.
    if (::fstat(fd.get(), &out.info) != 0) return read_failed(std::move(out), path, errno);
    judge(out, path, max_bytes);
    if (out.outcome != FileRead::Outcome::Read) return out;
    // At most the size fstat gave, which the bound allows: a file growing meanwhile is cut short
    // (its checksum then rejects it), never read without end.
    out.bytes.resize(static_cast<std::size_t>(out.info.st_size));
    std::size_t done = 0;
    while (done < out.bytes.size()) {
        const ssize_t got = ::read(fd.get(), out.bytes.data() + done, out.bytes.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return read_failed(std::move(out), path, errno);
        if (got == 0) break;
        done += static_cast<std::size_t>(got);
    }
    out.bytes.resize(done);
    return out;
}

int remove_at(const Folder& folder, std::string_view name, const struct stat& expected) {
    const std::string file(name);
    struct stat now {};
    if (::fstatat(folder.fd.get(), file.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0) return errno;
    if (now.st_dev != expected.st_dev || now.st_ino != expected.st_ino) return ESTALE;
    return ::unlinkat(folder.fd.get(), file.c_str(), S_ISDIR(now.st_mode) ? AT_REMOVEDIR : 0) == 0 ? 0 : errno;
}

std::string byte_words(std::uintmax_t bytes) {
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
    if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
    return fmt::format("{} bytes", bytes);
}

}  // namespace tropical::detail
