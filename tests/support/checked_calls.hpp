#pragma once
// System calls that set a test up or tidy it away, checked: a failed one would leave the test
// checking something other than what it says (a variable still set, a folder still writable, a child
// never reaped). Each records a failure of the running test, with the call and errno's message, and
// returns whether it succeeded, so that a caller that cannot go on writes ASSERT_TRUE(...).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace tropical::testing {

inline bool succeeded(int rc, const std::string& call) {
    if (rc == 0) return true;
    const int error = errno;
    ADD_FAILURE() << call << " failed: " << std::strerror(error);
    return false;
}

inline bool set_env(const char* name, const std::string& value) {
    return succeeded(::setenv(name, value.c_str(), 1), std::string("setenv ") + name);
}

inline bool unset_env(const char* name) { return succeeded(::unsetenv(name), std::string("unsetenv ") + name); }

inline bool change_mode(const std::filesystem::path& path, mode_t mode) {
    return succeeded(::chmod(path.c_str(), mode), "chmod " + path.string());
}

inline bool close_fd(int fd) { return succeeded(::close(fd), "close " + std::to_string(fd)); }

// Sends `signal` to `pid`, which must still be there to be sent it (a zombie is).
inline bool send_signal(pid_t pid, int signal) {
    return succeeded(::kill(pid, signal), "kill " + std::to_string(pid) + " " + std::to_string(signal));
}

// Waits for the child `pid` and returns its wait status; -1, and a failure, where it cannot be reaped.
inline int reap(pid_t pid) {
    int status = 0;
    pid_t done = -1;
    do {
        done = ::waitpid(pid, &status, 0);
    } while (done < 0 && errno == EINTR);
    if (done == pid) return status;
    const int error = errno;
    ADD_FAILURE() << "waitpid " << pid << " failed: " << std::strerror(error);
    return -1;
}

// A filesystem call's error_code, checked: `what` says which call and on what.
inline bool no_error(const std::error_code& ec, const std::string& what) {
    if (!ec) return true;
    ADD_FAILURE() << what << " failed: " << ec.message();
    return false;
}

}  // namespace tropical::testing
