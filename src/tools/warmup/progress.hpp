#pragma once
// What a warm-up shows while it runs: a bar redrawn in place on a terminal, one line per kernel
// otherwise, nothing with --json or --quiet (but failures, on standard error).
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

#include "commands.hpp"
#include "tool.hpp"

namespace warmup {

// Called from every worker thread at once.
class Progress {
public:
    Progress(OutputMode mode, std::size_t total);

    void started(const WarmTask& task);
    void finished(const WarmTask& task);
    // Leaves the terminal line clean for what follows.
    void end();

private:
    void clear_line();
    void draw();

    OutputMode mode_;
    std::size_t total_, done_ = 0, compiled_ = 0, failed_ = 0;
    std::size_t width_ = 80;
    std::chrono::steady_clock::time_point start_;
    std::string current_;
    std::mutex mutex_;
};

}  // namespace warmup
