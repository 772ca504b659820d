#pragma once
// The file-system steps of the cache store, each safe against whatever another user, a crash or
// a mistake left in a cache folder:
// - a folder below the root is opened relative to its parent's descriptor and never through a
//   link (O_NOFOLLOW), so that no name can lead out of the folder that was checked;
// - a file is looked at (fstatat, not following a link) before it is opened, so that a device is
//   never opened; it is opened without following a link and without blocking (a FIFO), and
//   checked again with fstat: a regular file that the trust rules accept, no larger than the
//   caller's bound, before a byte is read.
// Nothing here warns: it says what it found, and the store decides what to do with it.
#include <sys/stat.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tropical::detail {

// A file descriptor that closes itself.
class FileHandle {
public:
    FileHandle() = default;
    explicit FileHandle(int fd) : fd_(fd) {}
    FileHandle(FileHandle&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    FileHandle& operator=(FileHandle&& other) noexcept {
        reset(std::exchange(other.fd_, -1));
        return *this;
    }
    FileHandle(const FileHandle&) = delete;
    FileHandle& operator=(const FileHandle&) = delete;
    ~FileHandle() { reset(); }
    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    void reset(int fd = -1);  // closes the one held

private:
    int fd_ = -1;
};

// What is wrong with a folder or file of the cache, in words that name it and say what to do.
struct Refusal {
    std::filesystem::path path;
    std::string problem;  // "is writable by other users (mode 0777)": follows the path in a sentence
    std::string fix;      // "chmod go-w <path>"
};

// A folder of the cache, open.
struct Folder {
    FileHandle fd;
    std::filesystem::path path;
    struct stat info {};
    // Why the trust rules refuse this folder or one above it (the topmost); nothing: trusted.
    std::optional<Refusal> distrust;
};

struct FolderOpen {
    enum class Outcome {
        Opened,    // `folder` is open (trusted or not: see folder.distrust)
        Missing,   // nothing of that name, and it was not to be created
        InTheWay,  // a link, or something that is not a folder: `found` says what
        Failed,    // the system refused (permissions, a full or read-only disk): `error` says why
    };
    Outcome outcome = Outcome::Missing;
    Folder folder;
    Refusal refusal;       // InTheWay, Failed
    struct stat found {};  // InTheWay: what lstat says of the thing in the way
    int error = 0;         // Failed: the errno
};

// The cache root; `create`: made if missing, with every missing folder on the way, each 0700. The
// root is the one place where a link is followed (the user named the path, and a cache on another
// disk through a link is common), and only a link that this user or root made: another user's link
// there is refused (InTheWay), whatever it points to. The root (and each link of a chain) is looked
// at with lstat, then opened without following a link (O_NOFOLLOW; a link through O_PATH, read
// with readlinkat on that descriptor), and what was opened must be what lstat saw (device and
// inode): a root replaced in between, by another user's link or by another folder, is refused.
// The folders above the root are the user's choice, and followed as the path names them.
FolderOpen open_root_folder(const std::filesystem::path& root, bool create);

// Tests only: called between the look at the root (or at a link on the way) and its open, with
// the path about to be opened, so that a test can replace it there.
using RootOpenHook = void (*)(const std::filesystem::path& path);
void set_root_open_hook_for_testing(RootOpenHook hook);

// The folder `name` inside `parent`, never through a link; `create`: made (0700) if missing.
FolderOpen open_sub_folder(const Folder& parent, std::string_view name, bool create);

// The names in a folder, without "." and "..".
std::vector<std::string> folder_names(const Folder& folder);

// What lstat says of `name` in `folder`; nothing if there is no such name.
std::optional<struct stat> stat_at(const Folder& folder, std::string_view name);

struct FileRead {
    enum class Outcome { Read, Missing, NotAFile, Untrusted, TooLarge, Failed };
    Outcome outcome = Outcome::Missing;
    struct stat info {};           // of the name itself, never of a link's target
    std::vector<std::byte> bytes;  // Read: the whole file
    Refusal refusal;               // the other outcomes: what is wrong, in words
};

// Reads the file `name` of `folder` whole, as described above.
FileRead read_file_at(const Folder& folder, std::string_view name, std::size_t max_bytes);

// Removes `name` from `folder` (a folder only if empty) if it is still the file `expected`
// describes (lstat); 0 on success, else an errno (ENOENT: gone already; ESTALE: replaced meanwhile).
int remove_at(const Folder& folder, std::string_view name, const struct stat& expected);

// "64 MiB", "8 KiB", "100 bytes".
std::string byte_words(std::uintmax_t bytes);

}  // namespace tropical::detail
