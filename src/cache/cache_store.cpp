#include "cache/cache_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include <fmt/format.h>

#include "cache/file_trust.hpp"
#include "util/warnings.hpp"

namespace tropical::detail {
namespace fs = std::filesystem;

namespace {

std::atomic<std::uint64_t> g_cache_removals{0};

// An entry file of `folder`, read and verified against its name, as the loader would judge it.
EntryState inspect(const Folder& folder, const std::string& file, const EntryName& name) {
    EntryState out;
    FileRead read = read_file_at(folder, file, kMaxEntryBytes);
    out.info = read.info;
    using Outcome = FileRead::Outcome;
    if (read.outcome == Outcome::Missing) return out;
    out.present = true;
    if (read.outcome == Outcome::Untrusted) {
        out.trusted = false;
        out.problem = fmt::format("not trusted: it {}", read.refusal.problem);
    } else if (read.outcome != Outcome::Read) {
        out.problem = read.refusal.problem;
    } else {
        const auto decoded = decode_entry(read.bytes, &name.key, &name.kind);
        out.valid = decoded.check == EntryCheck::Valid;
        if (out.valid) out.payload.assign(decoded.payload.begin(), decoded.payload.end());
        else out.problem = std::string(to_string(decoded.check));
    }
    // The library refuses whatever lies in a folder that another user could have written.
    if (folder.distrust) {
        out.valid = false;
        out.trusted = false;
        out.payload.clear();
        out.problem = fmt::format("not trusted: {} {}", folder.distrust->path.string(), folder.distrust->problem);
    }
    return out;
}

StoredFile stored(const Folder& folder, int where, const std::string& name, const struct stat& info) {
    StoredFile file{where, name, folder.path / name, info, false, ""};
    if (folder.distrust)
        file.kept_because = fmt::format("{} {}", folder.distrust->path.string(), folder.distrust->problem);
    else if (!may_remove(folder.info, info))
        file.kept_because =
            fmt::format("it is user {}'s, in {}, which others can write to", info.st_uid, folder.path.string());
    file.removable = file.kept_because.empty();
    return file;
}

// Whether a scan goes into the folder `open`, named `name` in `parent`; records why not.
bool walkable(FolderOpen& open, const Folder& parent, int parent_where, const std::string& name, StoreScan& out) {
    switch (open.outcome) {
    case FolderOpen::Outcome::Opened:
        if (open.folder.distrust && !parent.distrust) out.refused.push_back(*open.folder.distrust);
        return true;
    case FolderOpen::Outcome::Missing: return false;
    case FolderOpen::Outcome::InTheWay: {
        out.refused.push_back(open.refusal);
        StoredFile file = stored(parent, parent_where, name, open.found);
        // Only links and special files go: a regular file or folder there may hold someone's data.
        if (file.removable && (S_ISREG(open.found.st_mode) || S_ISDIR(open.found.st_mode))) {
            file.removable = false;
            file.kept_because = "it may hold someone's data: remove it yourself if it is not needed";
        }
        out.in_the_way.push_back(std::move(file));
        return false;
    }
    case FolderOpen::Outcome::Failed: out.refused.push_back(open.refusal); return false;
    }
    return false;
}

// A folder that could not be made or opened because a folder above it was removed meanwhile.
bool vanished(const FolderOpen& open) { return open.outcome == FolderOpen::Outcome::Failed && open.error == ENOENT; }

}  // namespace

std::uint64_t cache_removals() { return g_cache_removals.load(); }

void note_cache_removal() { ++g_cache_removals; }

CacheStore::CacheStore(fs::path root, Access access) : root_(std::move(root)), access_(access) {
    // The library makes its folders now, and knows from the start whether it can use them.
    if (access_ != Access::Use) return;
    const Opened opened = open_for_use(kInFormatFolder, true);
    if (opened.folder) return;
    usable_ = false;
    writable_ = false;
    std::lock_guard lock(mutex_);
    if (problem_.problem.empty()) problem_ = opened.why;
}

fs::path CacheStore::format_directory() const { return root_ / format_folder_name(); }

StoreWrite CacheStore::problem() const {
    std::lock_guard lock(mutex_);
    return problem_;
}

void CacheStore::warn_untrusted(const Refusal& refusal, bool file) const {
    // One topic per cache: a cache with one bad file usually has more, and one warning says it.
    warn_once("kernel cache trust " + format_directory().string(),
              fmt::format("the kernel cache {} is not safe to use: {} {}, so another user could have put code there "
                          "that this process would run on the GPU. {} To fix it: {}; or set TROPICAL_GEMM_CACHE_DIR "
                          "to a folder of your own.",
                          format_directory().string(), refusal.path.string(), refusal.problem,
                          file ? "That file is ignored and its kernel compiled again."
                               : "The folder is not used: kernels are compiled and kept in memory only.",
                          refusal.fix));
}

StoreWrite CacheStore::refuse(const Refusal& refusal, bool trust, int where) {
    StoreWrite why{false, true, fmt::format("{} {}", refusal.path.string(), refusal.problem), refusal.fix};
    if (trust) {
        warn_untrusted(refusal, false);
    } else {
        warn_once("kernel cache " + format_directory().string(),
                  fmt::format("the kernel cache folder {} is not usable ({}); kernels compiled by this process are "
                              "kept in memory only. To fix it: {}.",
                              format_directory().string(), why.problem, refusal.fix));
    }
    // The root or the format folder: nothing of this cache is used. An sm_XY folder: that one is not.
    if (where <= kInFormatFolder) {
        usable_ = false;
        writable_ = false;
        std::lock_guard lock(mutex_);
        if (problem_.problem.empty()) problem_ = why;
    }
    return why;
}

StoreWrite CacheStore::degrade(const std::string& why) {
    writable_ = false;
    StoreWrite out{false, false, why, "choose a writable folder (TROPICAL_GEMM_CACHE_DIR)"};
    {
        std::lock_guard lock(mutex_);
        if (problem_.problem.empty()) problem_ = out;
    }
    warn_once("kernel cache " + format_directory().string(),
              fmt::format("the kernel cache folder {} is not usable ({}); kernels compiled by this process are kept "
                          "in memory only. Set TROPICAL_GEMM_CACHE_DIR to a writable folder, or "
                          "TROPICAL_GEMM_CACHE=off to not use a disk cache.",
                          format_directory().string(), why));
    return out;
}

bool CacheStore::accept(FolderOpen& open, int where, bool create, Opened& out) {
    switch (open.outcome) {
    case FolderOpen::Outcome::Opened:
        if (!open.folder.distrust) return true;
        out.why = refuse(*open.folder.distrust, true, where);
        return false;
    case FolderOpen::Outcome::Missing:
        out.why = {false, false, "the cache folder does not exist yet", ""};
        return false;
    case FolderOpen::Outcome::InTheWay: out.why = refuse(open.refusal, false, where); return false;
    case FolderOpen::Outcome::Failed:
        // Reading a folder that cannot be opened is a miss; one that cannot be made stops the writes.
        out.why = create ? degrade(fmt::format("{} {}", open.refusal.path.string(), open.refusal.problem))
                         : StoreWrite{false, false, open.refusal.problem, ""};
        return false;
    }
    return false;
}

CacheStore::Opened CacheStore::open_for_use(int where, bool create) {
    Opened out;
    if (!usable_) {
        out.why = problem();
        return out;
    }
    // A folder removed by a clear in another process while this one was on its way through it (a
    // failure with ENOENT) is opened again from the root, a few times.
    for (int attempt = 0;; ++attempt) {
        const bool again = create && attempt < 2;
        FolderOpen root = open_root_folder(root_, create);
        if (again && vanished(root)) continue;
        if (!accept(root, kInRoot, create, out)) return out;
        FolderOpen format = open_sub_folder(root.folder, format_folder_name(), create);
        if (again && vanished(format)) continue;
        if (!accept(format, kInFormatFolder, create, out)) return out;
        if (where == kInFormatFolder) {
            out.folder = std::move(format.folder);
            return out;
        }
        FolderOpen arch = open_sub_folder(format.folder, arch_folder_name(where), create);
        if (again && vanished(arch)) continue;
        if (!accept(arch, where, create, out)) return out;
        out.folder = std::move(arch.folder);
        return out;
    }
}

std::optional<std::vector<std::byte>> CacheStore::read_entry(int arch, const EntryName& name) {
    const Opened opened = open_for_use(arch, false);
    if (!opened.folder) return std::nullopt;
    const std::string file = entry_file_name(name.kernel, name.key, name.kind);
    const FileRead read = read_file_at(*opened.folder, file, kMaxEntryBytes);
    if (read.outcome == FileRead::Outcome::Untrusted) warn_untrusted(read.refusal, true);
    // Anything else that is not a verified entry is a miss: compiled again, and published over it.
    if (read.outcome != FileRead::Outcome::Read) return std::nullopt;
    const auto decoded = decode_entry(read.bytes, &name.key, &name.kind);
    if (decoded.check != EntryCheck::Valid) return std::nullopt;
    // Marked as used, for least-recently-used trimming; best effort (a cache may be read-only).
    ::utimensat(opened.folder->fd.get(), file.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
    return std::vector<std::byte>(decoded.payload.begin(), decoded.payload.end());
}

StoreWrite CacheStore::write_entry(int arch, const EntryName& name, std::span<const std::byte> payload) {
    return publish(arch, entry_file_name(name.kernel, name.key, name.kind), encode_entry(name.kind, name.key, payload));
}

std::optional<IdentityRecord> CacheStore::read_identity() {
    const Opened opened = open_for_use(kInFormatFolder, false);
    if (!opened.folder) return std::nullopt;
    const FileRead read = read_file_at(*opened.folder, kIdentityFileName, kMaxIdentityBytes);
    if (read.outcome == FileRead::Outcome::Untrusted) warn_untrusted(read.refusal, true);
    if (read.outcome != FileRead::Outcome::Read) return std::nullopt;  // rewritten once NVRTC is loaded
    return decode_identity(read.bytes);
}

StoreWrite CacheStore::write_identity(const IdentityRecord& record) {
    return publish(kInFormatFolder, std::string(kIdentityFileName), encode_identity(record));
}

// --- administration -----------------------------------------------------------------------------

std::optional<Folder> CacheStore::open_for_admin(int where) {
    FolderOpen root = open_root_folder(root_, false);
    if (root.outcome != FolderOpen::Outcome::Opened) return std::nullopt;
    if (where == kInRoot) return std::move(root.folder);
    FolderOpen format = open_sub_folder(root.folder, format_folder_name(), false);
    if (format.outcome != FolderOpen::Outcome::Opened) return std::nullopt;
    if (where == kInFormatFolder) return std::move(format.folder);
    FolderOpen arch = open_sub_folder(format.folder, arch_folder_name(where), false);
    if (arch.outcome != FolderOpen::Outcome::Opened) return std::nullopt;
    return std::move(arch.folder);
}

StoreScan CacheStore::scan() {
    StoreScan out;
    out.directory = format_directory();
    FolderOpen root = open_root_folder(root_, false);
    if (root.outcome == FolderOpen::Outcome::Missing) return out;
    if (root.outcome != FolderOpen::Outcome::Opened) {
        out.refused.push_back(root.refusal);
        return out;
    }
    if (root.folder.distrust) out.refused.push_back(*root.folder.distrust);
    FolderOpen format = open_sub_folder(root.folder, format_folder_name(), false);
    if (!walkable(format, root.folder, kInRoot, format_folder_name(), out)) return out;
    const Folder& v1 = format.folder;
    for (const auto& name : folder_names(v1)) {
        if (name == kIdentityFileName) {
            const FileRead read = read_file_at(v1, name, kMaxIdentityBytes);
            if (read.outcome == FileRead::Outcome::Missing) continue;
            out.identity_file = stored(v1, kInFormatFolder, name, read.info);
            if (read.outcome == FileRead::Outcome::Read && !v1.distrust) out.identity = decode_identity(read.bytes);
            continue;
        }
        if (const auto info = is_temp_file_name(name) ? stat_at(v1, name) : std::nullopt) {
            out.temp_files.push_back(stored(v1, kInFormatFolder, name, *info));
            continue;
        }
        const int arch = arch_of_folder_name(name);
        if (arch == 0) continue;  // not the library's
        FolderOpen folder = open_sub_folder(v1, name, false);
        if (!walkable(folder, v1, kInFormatFolder, name, out)) continue;
        out.arch_folders.push_back(arch);
        for (const auto& file : folder_names(folder.folder)) {
            if (const auto info = is_temp_file_name(file) ? stat_at(folder.folder, file) : std::nullopt) {
                out.temp_files.push_back(stored(folder.folder, arch, file, *info));
                continue;
            }
            const auto parsed = parse_entry_file_name(file);
            if (!parsed) continue;  // not the library's
            EntryState state = inspect(folder.folder, file, *parsed);
            if (!state.present) continue;  // removed since the folder was read: a clear elsewhere
            out.entries.push_back({stored(folder.folder, arch, file, state.info), *parsed, state.valid, state.problem});
        }
    }
    return out;
}

EntryState CacheStore::inspect_entry(int arch, std::string_view file_name) {
    const auto parsed = parse_entry_file_name(file_name);
    const auto folder = parsed ? open_for_admin(arch) : std::nullopt;
    if (!folder) return {};
    return inspect(*folder, std::string(file_name), *parsed);
}

int CacheStore::remove(const StoredFile& file) {
    const auto folder = open_for_admin(file.where);
    if (!folder) return ENOENT;
    if (folder->distrust || !may_remove(folder->info, file.info)) return EPERM;
    const int error = remove_at(*folder, file.name, file.info);
    if (error == 0) note_cache_removal();
    return error;
}

bool CacheStore::remove_if_abandoned(const StoredFile& temp) {
    const auto folder = open_for_admin(temp.where);
    return folder && remove_if_abandoned(*folder, temp.name);
}

void CacheStore::remove_empty_folders(const std::vector<int>& archs, bool format_folder) {
    // rmdir leaves alone any folder that holds something, which is then no longer ours to remove.
    auto remove_folder = [](const Folder& parent, const std::string& name) {
        const auto info = stat_at(parent, name);
        if (info && S_ISDIR(info->st_mode) && !parent.distrust && may_remove(parent.info, *info))
            ::unlinkat(parent.fd.get(), name.c_str(), AT_REMOVEDIR);
    };
    if (const auto v1 = open_for_admin(kInFormatFolder))
        for (int arch : archs) remove_folder(*v1, arch_folder_name(arch));
    if (format_folder)
        if (const auto root = open_for_admin(kInRoot)) remove_folder(*root, format_folder_name());
}

}  // namespace tropical::detail
