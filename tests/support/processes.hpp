#pragma once
// Child processes for the multi-process tests: spawn with output to a file, wait, read the output.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace tropical::testing {

// For many children exiting at once: under LeakSanitizer, a crowd of exits on a loaded machine
// sometimes crashes its stop-the-world tracer ("Tracer caught signal 11", google/sanitizers#1353)
// after the child has passed. Such children skip the exit-time leak check; the tests that start
// one child at a time keep it.
inline const std::vector<std::string> kNoExitLeakCheck = {"LSAN_OPTIONS=detect_leaks=0"};

// Starts `args` (args[0] is the program's path) with stdout and stderr in `output`, and this
// process's environment with `extra_env` ("NAME=value") set over it; -1 on failure.
inline pid_t spawn(const std::vector<std::string>& args, const std::filesystem::path& output,
                   const std::vector<std::string>& extra_env = {}) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const auto overridden = [&](std::string_view entry) {
        for (const auto& e : extra_env)
            if (entry.substr(0, entry.find('=') + 1) == std::string_view(e).substr(0, e.find('=') + 1)) return true;
        return false;
    };
    std::vector<char*> envp;
    for (char** e = environ; *e != nullptr; ++e)
        if (!overridden(*e)) envp.push_back(*e);
    for (const auto& e : extra_env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    pid_t pid = -1;
    int rc = posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (rc == 0) rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
}

// The exit code, or 128 + the signal that ended it.
inline int wait_for(pid_t pid) {
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace tropical::testing
