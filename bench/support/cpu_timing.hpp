#pragma once
// How the CPU suite (cpu_bench and the rows registered beside it) times a call: wall clock and the
// calling thread's CPU time, the fastest and the median of the benchmark's iterations.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

namespace tropical::bench {

using Clock = std::chrono::steady_clock;

// The CPU time of the calling thread: what a single-threaded run really used, also while other
// processes take turns on its core.
inline double thread_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

struct Timing {
    double best, median;  // wall seconds
    double best_cpu;      // the calling thread's CPU seconds (what a single-threaded run used)
};

// Times `call` once per iteration (after one untimed call: threads started, scratch allocated):
// the fastest and the median run. The fastest is the figure to compare with the ceiling, also
// measured as a best run: on a machine shared with other work (as CI runners are) it is the one
// least disturbed by it.
template <class Call>
Timing time_runs(benchmark::State& state, Call&& call) {
    call();
    std::vector<double> seconds;
    double best_cpu = 1e300;
    for (auto _ : state) {
        const auto start = Clock::now();
        const double cpu_start = thread_seconds();
        call();
        best_cpu = std::min(best_cpu, thread_seconds() - cpu_start);
        const double s = std::chrono::duration<double>(Clock::now() - start).count();
        state.SetIterationTime(s);
        seconds.push_back(s);
    }
    std::sort(seconds.begin(), seconds.end());
    return {seconds.front(), seconds[seconds.size() / 2], best_cpu};
}

// The counters of a row counted in terms (M N K): Gterms over the fastest run, ms_best, ms_median,
// and for one thread Gterms_cpu on the thread's CPU time.
inline void report_terms(benchmark::State& state, double terms, const Timing& timing, int threads) {
    state.counters["Gterms"] = terms / timing.best * 1e-9;
    state.counters["ms_best"] = timing.best * 1e3;
    state.counters["ms_median"] = timing.median * 1e3;
    if (threads == 1) state.counters["Gterms_cpu"] = terms / timing.best_cpu * 1e-9;
}

}  // namespace tropical::bench
