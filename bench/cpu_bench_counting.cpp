// cpu_bench's rows for the counting semiring (tropical/counting.hpp) on the CPU:
//
//   counting/<type>/<n>/threads:<t>   n x n x n row-major products of (value, count) pairs on t threads
//                                     (all: every core), values f32 or f64, counts f64
//
// Each reports Gterms (terms per second, M N K / time, over the fastest timed run, in 1e9) and the
// fastest and median times; single-threaded rows also Gterms_cpu, the same on the thread's CPU time.
// Values are integers in [-8, 8] and counts in {1, 2, 3}, so that many terms tie (as in the
// degeneracy counts the semiring is for) and no NaN appears. Registered when the program starts,
// beside bench/cpu_bench.cpp's rows; --simd=<target> steers these too.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tropical/counting.hpp>
#include "support/cpu_timing.hpp"

namespace {

template <class T>
std::vector<T> random_integers(std::size_t count, std::uint64_t seed, int lowest, int highest) {
    std::mt19937_64 engine(seed);
    std::uniform_int_distribution<int> uniform(lowest, highest);
    std::vector<T> v(count);
    for (T& x : v) x = static_cast<T>(uniform(engine));
    return v;
}

template <class T>
void counting_case(benchmark::State& state, std::int64_t n, int threads) {
    using namespace tropical;
    const auto elements = static_cast<std::size_t>(n * n);
    const std::vector<T> a = random_integers<T>(elements, 1, -8, 8), b = random_integers<T>(elements, 2, -8, 8);
    const std::vector<double> ac = random_integers<double>(elements, 3, 1, 3);
    const std::vector<double> bc = random_integers<double>(elements, 4, 1, 3);
    std::vector<T> c(elements);
    std::vector<double> cc(elements);
    const host::Options options{false, threads};
    const auto call = [&] {
        host::counting_gemm<T>(row_major(a.data(), n, n), row_major(ac.data(), n, n), row_major(b.data(), n, n),
                               row_major(bc.data(), n, n), row_major(c.data(), n, n), row_major(cc.data(), n, n),
                               options);
        benchmark::ClobberMemory();
    };
    tropical::bench::report_terms(state, double(n) * double(n) * double(n), tropical::bench::time_runs(state, call),
                                  threads);
}

bool register_counting() {
    for (const char* type : {"f32", "f64"})
        for (std::int64_t n : {256, 512, 1024})
            for (int threads : {1, 0}) {
                const std::string name = fmt::format("counting/{}/{}/threads:{}", type, n,
                                                     threads ? std::to_string(threads) : std::string("all"));
                auto* bench = std::string(type) == "f32"
                                  ? benchmark::RegisterBenchmark(name.c_str(), counting_case<float>, n, threads)
                                  : benchmark::RegisterBenchmark(name.c_str(), counting_case<double>, n, threads);
                bench->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
            }
    return true;
}

[[maybe_unused]] const bool registered = register_counting();

}  // namespace
