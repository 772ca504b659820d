// Start-up, each case in fresh processes running startup_probe:
//   cold: an empty kernel cache, with NVRTC's and the driver's own caches disabled;
//   warm: a new process over a filled cache (also with the driver's JIT cache disabled);
//   hot:  in one process, what a call costs beyond its kernel's own time.
// The benchmark's time is the time to the first finished product (or to the loaded kernel set),
// context creation excluded; it is reported apart as context_ms.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <tropical/context.hpp>
#include <tropical/device_buffer.hpp>
#include <tropical/gemm.hpp>
#include "support/gpu_timer.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace {

struct ProbeResult {
    double context_s = 0, work_s = 0, wall_s = 0;
    bool ok = false;
    std::string output;
};

double field(const std::string& json, const std::string& name) {
    const auto at = json.find("\"" + name + "\": ");
    return at == std::string::npos ? -1 : std::atof(json.c_str() + at + name.size() + 4);
}

// Runs the probe with extra environment variables; measures its whole life from the parent.
ProbeResult run_probe(const std::string& set, const std::map<std::string, std::string>& extra_env) {
    std::vector<std::string> env_storage;
    for (char** e = environ; *e; ++e) {
        const std::string entry = *e;
        const auto name = entry.substr(0, entry.find('='));
        if (!extra_env.count(name)) env_storage.push_back(entry);
    }
    for (const auto& [k, v] : extra_env) env_storage.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& e : env_storage) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string probe = STARTUP_PROBE;
    std::string set_arg = set;
    char* argv[] = {probe.data(), set_arg.data(), nullptr};

    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return {};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    int rc = posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    if (rc == 0) rc = posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = -1;
    if (rc == 0) rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    // Every step is checked: a probe whose output was cut short, or that was not reaped, is a failed
    // probe (the benchmark then skips with an error), not a measurement.
    bool closed = ::close(pipe_fds[1]) == 0;
    ProbeResult result;
    char buffer[512];
    ssize_t got = 0;
    while ((got = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0 || (got < 0 && errno == EINTR))
        if (got > 0) result.output.append(buffer, static_cast<std::size_t>(got));
    closed = ::close(pipe_fds[0]) == 0 && closed;
    int status = 0;
    const bool reaped = rc == 0 && ::waitpid(pid, &status, 0) == pid;
    result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.ok = reaped && closed && got == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!reaped || !closed || got < 0) result.output += "\n(spawning, reading or reaping the probe failed)";
    result.context_s = field(result.output, "context_s");
    result.work_s = field(result.output, "work_s");
    return result;
}

// A fresh, empty cache folder, removed with what a probe put there however the case ends.
class FreshDir {
public:
    FreshDir() {
        std::string pattern = (fs::temp_directory_path() / "tropical-startup-XXXXXX").string();
        path_ = ::mkdtemp(pattern.data());
    }
    ~FreshDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
        if (ec) std::fprintf(stderr, "startup_bench: could not remove %s: %s\n", path_.c_str(), ec.message().c_str());
    }
    FreshDir(const FreshDir&) = delete;
    FreshDir& operator=(const FreshDir&) = delete;
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

void report(benchmark::State& state, const std::vector<ProbeResult>& runs) {
    double context = 0, wall = 0;
    for (const auto& r : runs) context += r.context_s, wall += r.wall_s;
    state.counters["context_ms"] = 1e3 * context / static_cast<double>(runs.size());
    state.counters["process_ms"] = 1e3 * wall / static_cast<double>(runs.size());
}

// cold/<set>: every run starts from an empty cache, with NVRTC's and the driver's caches off.
void cold(benchmark::State& state, std::string set) {
    std::vector<ProbeResult> runs;
    for (auto _ : state) {
        const FreshDir dir;
        const auto r = run_probe(set, {{"TROPICAL_GEMM_CACHE_DIR", dir.path().string()}, {"CUDA_CACHE_DISABLE", "1"}});
        if (!r.ok) {
            state.SkipWithError(("probe failed: " + r.output).c_str());
            break;
        }
        state.SetIterationTime(r.work_s);
        runs.push_back(r);
    }
    if (!runs.empty()) report(state, runs);
}

// warm/<set>: new processes over a cache filled by an earlier one.
void warm(benchmark::State& state, std::string set, bool driver_cache_off) {
    const FreshDir dir;
    std::map<std::string, std::string> env = {{"TROPICAL_GEMM_CACHE_DIR", dir.path().string()}};
    if (driver_cache_off) env.emplace("CUDA_CACHE_DISABLE", std::string(1, '1'));
    if (!run_probe(set, env).ok) {
        state.SkipWithError("the probe could not fill the cache");
        for (auto _ : state) {
        }
        return;
    }
    std::vector<ProbeResult> runs;
    for (auto _ : state) {
        const auto r = run_probe(set, env);
        if (!r.ok) {
            state.SkipWithError(("probe failed: " + r.output).c_str());
            break;
        }
        state.SetIterationTime(r.work_s);
        runs.push_back(r);
    }
    if (!runs.empty()) report(state, runs);
}

// hot: a 64^3 f32 MaxPlus product in a process that has already run one. The benchmark's time is
// the host's latency of call + wait; counters split it into the kernel's own time and the rest.
void hot(benchmark::State& state) {
    using namespace tropical;
    if (!bench::gpu_available(state)) return;
    constexpr int n = 64;
    DeviceBuffer<float> a(n * n), b(n * n), c(n * n);
    a.fill_bytes(0), b.fill_bytes(0);
    auto call = [&] { gemm<MaxPlus>(a.row_major(n, n), b.row_major(n, n), c.row_major(n, n)); };
    call();
    bench::GpuTimer timer;
    double kernel = 0, latency = 0;
    for (auto _ : state) {
        timer.start();
        const auto t0 = std::chrono::steady_clock::now();
        call();
        const double gpu = timer.stop();
        const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        state.SetIterationTime(host);
        kernel += gpu, latency += host;
    }
    // Launch cost alone: many calls back to back, no waiting.
    constexpr int calls = 2000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    const double enqueue = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / calls;
    (void)c.to_host();
    const auto iterations = static_cast<double>(state.iterations());
    state.counters["kernel_us"] = 1e6 * kernel / iterations;
    state.counters["overhead_us"] = 1e6 * (latency - kernel) / iterations;
    state.counters["call_us"] = 1e6 * enqueue;
}

}  // namespace

int main(int argc, char** argv) {
    for (const char* set : {"first", "pytorch", "all"}) {
        const std::string s = set;
        const int runs = s == "all" ? 1 : 3;
        benchmark::RegisterBenchmark(("cold/" + s).c_str(), cold, s)
            ->UseManualTime()
            ->Iterations(runs)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("warm/" + s).c_str(), warm, s, false)
            ->UseManualTime()
            ->Iterations(5)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("warm_no_driver_cache/" + s).c_str(), warm, s, true)
            ->UseManualTime()
            ->Iterations(5)
            ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark("hot/f32_maxplus_64", hot)
        ->UseManualTime()
        ->Iterations(2000)
        ->Unit(benchmark::kMicrosecond);
    return tropical::bench::run_or_skip(argc, argv);
}
