#include "progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "words.hpp"

namespace warmup {

Progress::Progress(OutputMode mode, std::size_t total)
    : mode_(mode), total_(total), start_(std::chrono::steady_clock::now()) {
    winsize size{};
    if (mode_ == OutputMode::Bar && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20)
        width_ = size.ws_col;
}

void Progress::started(const WarmTask& task) {
    std::lock_guard lock(mutex_);
    current_ = fmt::format("{} {}", arch_name(task.arch), task.kernel->name);
    if (mode_ == OutputMode::Bar) draw();
}

void Progress::finished(const WarmTask& task) {
    std::lock_guard lock(mutex_);
    ++done_;
    if (task.status == WarmTask::Status::Compiled) ++compiled_;
    if (task.status == WarmTask::Status::Failed) ++failed_;
    // A failure is said at once, not only in the summary: its compiler log is what the user needs.
    if (task.status == WarmTask::Status::Failed && mode_ != OutputMode::Json) {
        if (mode_ == OutputMode::Bar) clear_line();
        print_error(fmt::format("{} for {}: {}", task.kernel->name, arch_name(task.arch), task.error));
    }
    if (mode_ == OutputMode::Lines && task.status != WarmTask::Status::Failed) {
        std::printf("%-8s %-6s %-32s %6.2f s%s\n", status_name(task.status), arch_name(task.arch).c_str(),
                    std::string(task.kernel->name).c_str(), task.seconds,
                    task.ptx_for_jit ? "  (PTX, for the driver to finish)" : "");
        std::fflush(stdout);
    }
    if (mode_ == OutputMode::Bar) draw();
}

void Progress::end() {
    std::lock_guard lock(mutex_);
    if (mode_ == OutputMode::Bar) clear_line();
}

void Progress::clear_line() {
    std::printf("\r\x1b[K");
    std::fflush(stdout);
}

void Progress::draw() {
    constexpr std::size_t kBar = 30;
    const std::size_t filled = total_ ? done_ * kBar / total_ : kBar;
    std::string line = "[";
    line.append(filled, '#').append(kBar - filled, '.') += ']';
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    line += fmt::format(" {}/{}  {} compiled{}  {:.1f} s  {}", done_, total_, compiled_,
                        failed_ ? fmt::format(", {} FAILED", failed_) : "", seconds, current_);
    if (line.size() >= width_) line.resize(width_ - 1);
    std::printf("\r\x1b[K%s", line.c_str());
    std::fflush(stdout);
}

}  // namespace warmup
