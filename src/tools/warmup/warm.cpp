// The default command: compile the selected kernels for the chosen architectures into the cache,
// in parallel, skipping those the cache already holds.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include <tropical/error.hpp>

#include "cache_folder.hpp"
#include "commands.hpp"
#include "progress.hpp"
#include "words.hpp"

namespace warmup {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The architectures to warm, by the library's rule (tropical::warm_targets, which the Python package
// shares): those named, checked against what NVRTC can target where it can be loaded, else this
// machine's GPUs'.
std::vector<int> target_architectures(const Options& o, std::string& note) {
    try {
        tropical::WarmTargets targets = tropical::warm_targets(o.archs, o.all_archs);
        note = std::move(targets.note);
        return std::move(targets.archs);
    } catch (const tropical::Unsupported& e) {
        throw Fatal{kUsage, e.what()};
    } catch (const tropical::InvalidArgument& e) {
        throw Fatal{kUsage, e.what()};
    } catch (const tropical::NoCompiler& e) {
        throw Fatal{kEnvironment, fmt::format("--arch all: {}", e.what())};
    } catch (const tropical::Error& e) {  // no driver or no device, and no --arch
        throw Fatal{kEnvironment, fmt::format("{}. With this tool: --arch sm_80,sm_90", e.what())};
    }
}

// Runs the tasks on `jobs` threads. The first error that makes going on pointless (no NVRTC, a
// cache that cannot be written, an architecture NVRTC refuses) stops every thread; the tasks not
// run then stay Pending. A kernel that fails to compile is that task's failure only.
std::optional<Fatal> run_tasks(std::vector<WarmTask>& tasks, const tropical::CacheSettings& settings, unsigned jobs,
                               Progress& progress) {
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    std::mutex fatal_mutex;
    std::optional<Fatal> fatal;
    auto stop_with = [&](int code, std::string message) {
        std::lock_guard lock(fatal_mutex);
        if (!fatal) fatal = Fatal{code, std::move(message)};
        stop = true;
    };
    auto work = [&] {
        for (std::size_t i; !stop && (i = next++) < tasks.size();) {
            WarmTask& task = tasks[i];
            progress.started(task);
            const auto task_start = Clock::now();
            try {
                const tropical::WarmResult r = tropical::warm_kernel(settings, *task.kernel, task.arch);
                task.status = r.compiled ? WarmTask::Status::Compiled : WarmTask::Status::Cached;
                task.ptx_for_jit = r.ptx_for_jit;
                task.seconds = r.seconds;
            } catch (const tropical::NoCompiler& e) {
                task.status = WarmTask::Status::Skipped;
                stop_with(kEnvironment, e.what());
            } catch (const tropical::CacheNotWritable& e) {
                task.status = WarmTask::Status::Skipped;
                stop_with(kEnvironment, std::string(e.what()) + " With this tool: --cache-dir DIR.");
            } catch (const tropical::Unsupported& e) {
                task.status = WarmTask::Status::Skipped;
                stop_with(kUsage, e.what());
            } catch (const std::exception& e) {
                task.status = WarmTask::Status::Failed;
                task.error = e.what();
                task.seconds = seconds_since(task_start);
            }
            if (task.status != WarmTask::Status::Skipped) progress.finished(task);
        }
    };
    const std::size_t threads = std::min<std::size_t>(jobs, tasks.size());
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    progress.end();
    return fatal;
}

}  // namespace

const char* status_name(WarmTask::Status s) {
    switch (s) {
    case WarmTask::Status::Compiled: return "compiled";
    case WarmTask::Status::Cached: return "cached";
    case WarmTask::Status::Failed: return "failed";
    case WarmTask::Status::Skipped: return "skipped";
    case WarmTask::Status::Pending: break;
    }
    return "pending";
}

WarmReport warm(const Options& o) {
    const auto start = Clock::now();
    WarmReport report;
    report.settings = cache_to_use(o);
    report.jobs = o.jobs;
    const auto kernels = select_kernels(o.selection);
    if (kernels.empty()) throw Fatal{kUsage, "no kernel matches the selection; `--list` shows every kernel"};
    report.kernels_selected = kernels.size();
    report.archs = target_architectures(o, report.note);

    for (const tropical::KernelInfo* k : kernels)
        for (int arch : report.archs) {
            WarmTask& task = report.tasks.emplace_back();
            task.kernel = k;
            task.arch = arch;
        }

    Progress progress(o.output, report.tasks.size());
    report.error = run_tasks(report.tasks, report.settings, o.jobs, progress);

    for (auto& task : report.tasks) {
        if (task.status == WarmTask::Status::Pending) task.status = WarmTask::Status::Skipped;
        auto& group = report.by_group[{task.arch, task.kernel->group}];
        ++group.kernels;
        switch (task.status) {
        case WarmTask::Status::Compiled:
            ++report.compiled;
            ++group.compiled;
            group.seconds += task.seconds;
            break;
        case WarmTask::Status::Cached: ++report.cached; break;
        case WarmTask::Status::Failed: ++report.failed; break;
        default: ++report.skipped; break;
        }
    }
    report.exit_code = report.error ? report.error->code : report.failed ? kFailed : kSuccess;
    report.seconds = seconds_since(start);
    return report;
}

}  // namespace warmup
