#pragma once
// What the cache fault-injection tests put in a cache's way, and how they run an operation on it:
// special files of every kind, links, other users, and a child process held to a time and a
// memory bound, so that a hang, a crash or an allocation of a file's whole size is a failure of
// the test, not of the test run.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "support/checked_calls.hpp"

namespace tropical::testing {

inline constexpr uid_t kOtherUser = 65534;  // nobody: the attacker, or simply "another user"

// How a bounded child ended.
struct Bounded {
    int code = -1;         // its exit code, or 128 + the signal that ended it
    long max_rss_kib = 0;  // its peak resident memory
    double seconds = 0;
    bool hung() const { return code == 128 + SIGALRM; }
    std::string describe() const {
        return "exit " + std::to_string(code) + (hung() ? " (hung: killed by the time bound)" : "") + ", peak " +
               std::to_string(max_rss_kib / 1024) + " MiB, " + std::to_string(seconds) + " s";
    }
};

// Runs `body` in a child process, as user `uid` (if not -1), killed after `seconds`; its return
// value is the exit code, an exception escaping it exit code 99.
inline Bounded run_bounded(const std::function<int()>& body, unsigned seconds = 10,
                           uid_t uid = static_cast<uid_t>(-1)) {
    const auto start = std::chrono::steady_clock::now();
    const pid_t child = ::fork();
    if (child == 0) {
        ::alarm(seconds);
        // Root's supplementary groups go first: a child left in them could write what the user
        // `uid` cannot (a folder of group root, 0775), and prove nothing about that user.
        if (uid != static_cast<uid_t>(-1) && (::setgroups(0, nullptr) != 0 || ::setgid(uid) != 0 || ::setuid(uid) != 0))
            ::_exit(98);
        int code = 99;
        try {
            code = body();
        } catch (...) {
        }
        ::_exit(code);
    }
    Bounded out;
    int status = 0;
    rusage usage{};
    if (child < 0 || ::wait4(child, &status, 0, &usage) != child) return out;
    out.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    out.max_rss_kib = usage.ru_maxrss;
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

// Runs `body` as another user, in a child; true if it returned true.
inline bool as_user(uid_t uid, const std::function<bool()>& body) {
    return run_bounded([&] { return body() ? 0 : 1; }, 10, uid).code == 0;
}

// The kinds of thing that can stand where the cache keeps a file or a folder.
enum class Thing {
    Fifo,
    Socket,
    Device,  // a character device (the numbers of /dev/null)
    EmptyFolder,
    FullFolder,  // a folder with a file in it
    LinkToFifo,
    LinkToSocket,
    LinkToDevice,
    LinkToFolder,      // the victim's folder
    LinkToOthersFile,  // a file of another user
    LinkToOwnFile,     // the victim's own file
    DanglingLink,
};

inline const char* name_of(Thing t) {
    switch (t) {
    case Thing::Fifo: return "Fifo";
    case Thing::Socket: return "Socket";
    case Thing::Device: return "Device";
    case Thing::EmptyFolder: return "EmptyFolder";
    case Thing::FullFolder: return "FullFolder";
    case Thing::LinkToFifo: return "LinkToFifo";
    case Thing::LinkToSocket: return "LinkToSocket";
    case Thing::LinkToDevice: return "LinkToDevice";
    case Thing::LinkToFolder: return "LinkToFolder";
    case Thing::LinkToOthersFile: return "LinkToOthersFile";
    case Thing::LinkToOwnFile: return "LinkToOwnFile";
    case Thing::DanglingLink: return "DanglingLink";
    }
    return "?";
}

inline bool make_fifo(const std::filesystem::path& at) { return ::mkfifo(at.c_str(), 0600) == 0; }

// A sparse file of `bytes` at `path`, replacing what is there: no disk is used, and reading it
// would take its whole size of memory.
inline bool make_sparse(const std::filesystem::path& path, std::uint64_t bytes) {
    std::error_code ec;
    std::filesystem::remove(path, ec);  // false, and no error, where nothing was there
    if (!no_error(ec, "removing " + path.string())) return false;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    const bool made = fd >= 0 && ::ftruncate(fd, static_cast<off_t>(bytes)) == 0;
    return fd >= 0 ? close_fd(fd) && made : made;
}

// Bound by its name relative to its folder: a whole path may be longer than sun_path holds.
inline bool make_socket(const std::filesystem::path& at) {
    const std::string name = at.filename().string();
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (name.size() >= sizeof address.sun_path) return false;
    std::strcpy(address.sun_path, name.c_str());
    const int here = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool bound = here >= 0 && fd >= 0 && ::chdir(at.parent_path().c_str()) == 0 &&
                       ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    if (here >= 0 && ::fchdir(here) != 0) return false;
    if (here >= 0) ::close(here);
    if (fd >= 0) ::close(fd);  // the socket file stays, with no one listening
    return bound;
}

inline bool make_device(const std::filesystem::path& at) {
    return ::mknod(at.c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0;
}

// Puts `thing` at `at` (which must not exist); its targets go in `victim`, a folder of the victim's
// whose contents must survive whatever the cache does. False if this system cannot make it.
inline bool put(Thing thing, const std::filesystem::path& at, const std::filesystem::path& victim) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(victim, ec);
    if (!no_error(ec, "creating " + victim.string())) return false;
    const fs::path target = victim / (std::string("target-") + name_of(thing));
    switch (thing) {
    case Thing::Fifo: return make_fifo(at);
    case Thing::Socket: return make_socket(at);
    case Thing::Device: return make_device(at);
    case Thing::EmptyFolder: return ::mkdir(at.c_str(), 0700) == 0;
    case Thing::FullFolder: return ::mkdir(at.c_str(), 0700) == 0 && (std::ofstream(at / "data") << "data").good();
    case Thing::LinkToFifo: return make_fifo(target) && ::symlink(target.c_str(), at.c_str()) == 0;
    case Thing::LinkToSocket: return make_socket(target) && ::symlink(target.c_str(), at.c_str()) == 0;
    case Thing::LinkToDevice: return make_device(target) && ::symlink(target.c_str(), at.c_str()) == 0;
    case Thing::LinkToFolder:
        return ::mkdir(target.c_str(), 0700) == 0 && (std::ofstream(target / "precious") << "victim").good() &&
               ::symlink(target.c_str(), at.c_str()) == 0;
    case Thing::LinkToOthersFile:
        return (std::ofstream(target) << "another user's").good() &&
               ::chown(target.c_str(), kOtherUser, kOtherUser) == 0 && ::symlink(target.c_str(), at.c_str()) == 0;
    case Thing::LinkToOwnFile:
        return (std::ofstream(target) << "the victim's own").good() && ::symlink(target.c_str(), at.c_str()) == 0;
    case Thing::DanglingLink: return ::symlink((victim / "nothing-here").c_str(), at.c_str()) == 0;
    }
    return false;
}

// Everything under `dir` (links not followed): type, size, owner, mode and modification time, to
// prove that nothing there was written, removed or touched.
inline std::map<std::string, std::tuple<unsigned, long long, unsigned, unsigned, long long>> snapshot(
    const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    std::map<std::string, std::tuple<unsigned, long long, unsigned, unsigned, long long>> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        struct stat info {};
        if (::lstat(it->path().c_str(), &info) != 0) continue;
        out[it->path().string()] = {info.st_mode & S_IFMT, static_cast<long long>(info.st_size), info.st_uid,
                                    info.st_mode & 07777,
                                    static_cast<long long>(info.st_mtim.tv_sec) * 1000000000LL + info.st_mtim.tv_nsec};
    }
    return out;
}

}  // namespace tropical::testing
