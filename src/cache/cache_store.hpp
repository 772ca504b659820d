#pragma once
// The kernel cache on disk (named as cache_layout.hpp says), and the only code that reads, writes
// or removes its files: the loader reads and publishes entries and the compiler-identity record
// through it, and the administration (list, verify, clear, trim) walks and removes through it.
//
// Every folder below the root is opened relative to its checked parent and never through a link;
// every file is opened without following a link, without blocking, and checked (a regular file,
// of a bounded size, that the trust rules of file_trust.hpp accept) before a byte is read
// (checked_files.hpp). Publishing writes a unique temp file, locks it (flock) while it is written,
// fsyncs it, renames it over the final name and fsyncs the folder: readers never lock, and see a
// whole file or none. Temp files of writers that died (no lock held on them) are removed by the
// next writer into that folder, by trimming and by clearing.
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "cache/cache_layout.hpp"
#include "cache/checked_files.hpp"
#include "cache/identity_record.hpp"

namespace tropical::detail {

// No entry this library writes comes near this (the largest CUBIN is well under 1 MiB): a larger
// file is not one of ours, and is a miss, replaced, never read into memory.
inline constexpr std::size_t kMaxEntryBytes = std::size_t{64} << 20;

// A temp file that no writer holds locked belongs to a writer that died, and is removed at once:
// writers lock theirs from just after creating it until the rename, and one found unlocked in
// between is made again by its writer (store_publish.cpp). Only where the file system has no locks
// (flock fails), and for what is not a regular file, does the age decide: not written for this long.
inline constexpr std::chrono::seconds kAbandonedTempAge{30};

// Where a file of the cache lies: in the root, in the format folder, or in the folder of sm_<arch>.
inline constexpr int kInRoot = -1;
inline constexpr int kInFormatFolder = 0;

// What a write did.
struct StoreWrite {
    bool written = false;
    bool refused = false;  // not written because a folder is refused (not trusted, or in the way)
    std::string problem;   // when not written: "<path> is ...", or the error
    std::string fix;       // what to do about it, when known
};

// One file of the cache as a scan found it.
struct StoredFile {
    int where = kInFormatFolder;  // kInRoot, kInFormatFolder, or the arch of its sm_XY folder
    std::string name;             // its name in that folder
    std::filesystem::path path;
    struct stat info {};       // of the name itself (lstat): never of a link's target
    bool removable = false;    // the trust rules let this process remove it (file_trust.hpp)
    std::string kept_because;  // why not, in words ("<folder> is owned by user 1000, ...")
};

struct StoredEntry {
    StoredFile file;
    EntryName entry;
    bool valid = false;
    std::string problem;  // why not valid ("corrupted (checksum mismatch)", "not trusted: ...")
};

struct StoreScan {
    std::filesystem::path directory;          // root/v1
    std::vector<StoredEntry> entries;         // by folder, in the order the folder lists them
    std::vector<StoredFile> temp_files;       // writers' temp files, in flight or abandoned
    std::optional<StoredFile> identity_file;  // whatever has the record's name
    std::optional<IdentityRecord> identity;   // the record, when it verifies and is trusted
    std::vector<StoredFile> in_the_way;       // links and other non-folders named v1 or sm_XY
    std::vector<int> arch_folders;            // the sm_XY folders walked
    std::vector<Refusal> refused;             // folders not walked, or walked but not trusted
};

// What an entry file holds, verified.
struct EntryState {
    bool present = false;  // something has that name
    struct stat info {};   // of the name itself
    bool valid = false;
    bool trusted = true;             // false: the trust rules refuse it or its folder
    std::string problem;             // why not valid
    std::vector<std::byte> payload;  // when valid
};

class CacheStore {
public:
    enum class Access {
        Use,         // the library: makes the folders it needs; warns once where it cannot use them
        Administer,  // list, verify, clear, trim: makes nothing, warns about nothing
    };
    CacheStore(std::filesystem::path root, Access access);

    const std::filesystem::path& root() const { return root_; }
    std::filesystem::path format_directory() const;

    // Use: false when the root or the format folder cannot be made or is refused; nothing is then
    // read or written. writable(): false too once a write failed (full, read-only, not ours).
    bool usable() const { return usable_; }
    bool writable() const { return writable_; }
    // Why not, in words that name the file and say what to do.
    StoreWrite problem() const;

    // The payload of a verified entry, marked as just used; nothing if absent, invalid or refused.
    std::optional<std::vector<std::byte>> read_entry(int arch, const EntryName& name);
    StoreWrite write_entry(int arch, const EntryName& name, std::span<const std::byte> payload);
    std::optional<IdentityRecord> read_identity();
    StoreWrite write_identity(const IdentityRecord& record);

    // --- administration ---
    StoreScan scan();
    // The entry `file_name` of sm_<arch>, read and verified against its name, as the loader would.
    EntryState inspect_entry(int arch, std::string_view file_name);
    // Removes what a scan found: 0 on success, else an errno (ENOENT: gone already; ESTALE: replaced
    // since the scan; EPERM: the trust rules forbid it; ENOTEMPTY: a folder with files in it).
    int remove(const StoredFile& file);
    // Removes a temp file if its writer is gone (no lock held on it; see kAbandonedTempAge).
    bool remove_if_abandoned(const StoredFile& temp);
    // Removes these sm_XY folders, and then (`format_folder`) the format folder, where empty and ours.
    void remove_empty_folders(const std::vector<int>& archs, bool format_folder);

private:
    struct Opened {
        std::optional<Folder> folder;
        StoreWrite why;  // when there is no folder
    };
    Opened open_for_use(int where, bool create);
    bool accept(FolderOpen& open, int where, bool create, Opened& out);
    std::optional<Folder> open_for_admin(int where);
    StoreWrite publish(int where, const std::string& name, std::span<const std::byte> bytes);
    void sweep_abandoned(const Folder& folder, int where);
    bool remove_if_abandoned(const Folder& folder, const std::string& name);
    StoreWrite refuse(const Refusal& refusal, bool trust, int where);
    StoreWrite degrade(const std::string& why);
    void warn_untrusted(const Refusal& refusal, bool file) const;

    std::filesystem::path root_;
    Access access_;
    // Threads read and publish at once; a failed publish turns writing off for all of them.
    std::atomic<bool> usable_ = true;
    std::atomic<bool> writable_ = true;
    mutable std::mutex mutex_;  // guards problem_ and swept_
    StoreWrite problem_;
    std::set<int> swept_;  // folders whose abandoned temp files this store removed already
};

// The steps of a publish, in order. Tests kill a writer at each (set_publish_hook_for_testing).
enum class PublishStep { OpenFolder, CreateTemp, Lock, Write, SyncFile, Rename, SyncFolder, Done };
using PublishHook = void (*)(PublishStep step, std::string_view file_name);
void set_publish_hook_for_testing(PublishHook hook);

// Counts the removals made through any store of this process, so that in-memory tables of what is
// on disk (the warm-up's) can tell that they are out of date.
std::uint64_t cache_removals();
void note_cache_removal();

}  // namespace tropical::detail
