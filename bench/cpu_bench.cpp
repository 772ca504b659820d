// The CPU path (tropical/host.hpp) against the per-core SIMD ceiling.
//
//   ceiling/<type>/<semiring>              one core's ceiling (bench/cpu_ceiling.hpp): the faster of a
//                                          register-only loop and the micro-kernel on panels in L1
//   copies/f32/maxplus/<n>/threads:all     one single-threaded n^3 product on every core at once,
//                                          each on its own operands: how this machine's cores scale
//                                          together (all-core clocks, shared cores), beside one
//                                          product cut over them (gemm/.../threads:all)
//   gemm/<type>/<semiring>/<m>x<n>/threads:1  an m x n x n product on one core: the band of rows of
//                                          an n^3 product that one of several threads computes
//   gemm/<type>/<semiring>/<n>/threads:<t> n x n x n row-major products on t threads (all: every core)
//   argmax/..., batched/..., backward_a/... the other operations
//   counting/..., orand/..., orand_argmax/... the counting and OrAnd semirings, as G terms/s
//                                          (registered by cpu_bench_counting.cpp, cpu_bench_orand.cpp)
//
// Products report Gops (tropical ops per second, 2 M N K / time, over the fastest timed run, in
// 1e9), of_ceiling (that over the ceiling of the same type and semiring times the threads used),
// and the fastest and median times. Wall-clock time; inputs uniform in [-10, 10] ([0, 10] for
// MaxMul; no NaN, so the fast kernels run). The ceilings (best of 5 runs each) are measured once,
// first, on the SIMD target the products run on (in the context as simd_target). Single-threaded cases
// also report Gops_cpu and of_ceiling_cpu, the same on the thread's CPU time (against the
// ceiling's), which a machine shared with other work disturbs less.
//
//   cpu_bench [--simd=<target>] [Google Benchmark flags], e.g. --benchmark_filter='ceiling|gemm/f32/maxplus/1024'
// --simd=SSE4 (for one) runs everything on that target instead of the best one this CPU has.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <latch>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <tropical/host.hpp>
#include "cpu/targets.hpp"
#include "cpu_ceiling.hpp"
#include "support/cpu_timing.hpp"

using namespace tropical;

namespace {

using bench::Clock;
using bench::thread_seconds;
using bench::time_runs;
using bench::Timing;

std::string name_of(DType t) { return std::string(to_string(t)); }

// Terms per second of one core, best of several runs, by wall clock and by thread CPU time.
struct Rate {
    double wall = 0, cpu = 0;
};

// The ceiling of one type and semiring: the faster of the register-only loop and the products'
// micro-kernel on panels in L1. Both do the term's arithmetic and nothing a product could leave
// out, so the faster one is the best this core was seen to do; the loop is the faster where the
// compiler writes it cleanly (f32: 8 add and max pairs a round, nothing else), the kernel where it
// does not (for i32 GCC adds register copies after the maxes of the loop, which the kernel avoids).
struct Ceiling {
    Rate loop, kernel;
    double wall() const { return std::max(loop.wall, kernel.wall); }
    double cpu() const { return std::max(loop.cpu, kernel.cpu); }
};

// The best of 5 runs of at least 0.1 s each of run(iterations), which returns the terms it did.
template <class Run>
Rate best_rate(Run&& run) {
    Rate best;
    std::int64_t iterations = 1 << 10;
    for (int runs = 0; runs < 5;) {
        const auto start = Clock::now();
        const double cpu_start = thread_seconds();
        const std::int64_t terms = run(iterations);
        const double cpu = thread_seconds() - cpu_start;
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (seconds < 0.1) {  // grow until a run lasts long enough to time
            iterations *= 2;
            continue;
        }
        best.wall = std::max(best.wall, static_cast<double>(terms) / seconds);
        best.cpu = std::max(best.cpu, static_cast<double>(terms) / cpu);
        ++runs;
    }
    return best;
}

// Measured once per type and semiring; MinPlus shares MaxPlus's and MinMax MaxMin's (a min costs
// what a max does).
const Ceiling& ceiling_of(DType dtype, Semiring semiring) {
    if (semiring == Semiring::MinPlus) semiring = Semiring::MaxPlus;
    if (semiring == Semiring::MinMax) semiring = Semiring::MaxMin;
    static std::map<std::pair<DType, Semiring>, Ceiling> measured;
    if (auto it = measured.find({dtype, semiring}); it != measured.end()) return it->second;
    Ceiling c;
    c.loop = best_rate([&](std::int64_t n) { return bench::register_loop_terms(dtype, semiring, n); });
    c.kernel = best_rate([&](std::int64_t n) { return bench::micro_kernel_terms(dtype, semiring, n); });
    return measured[{dtype, semiring}] = c;
}

void ceiling(benchmark::State& state, DType dtype, Semiring semiring) {
    const Ceiling& c = ceiling_of(dtype, semiring);
    for (auto _ : state) benchmark::DoNotOptimize(bench::register_loop_terms(dtype, semiring, 1 << 10));
    state.counters["Gops"] = 2 * c.wall() * 1e-9;
    state.counters["Gops_cpu"] = 2 * c.cpu() * 1e-9;
    state.counters["loop_Gops"] = 2 * c.loop.wall * 1e-9;
    state.counters["kernel_Gops"] = 2 * c.kernel.wall * 1e-9;
}

// Uniform in [lowest, 10]: MaxMul's inputs are non-negative (its domain), the others' from -10.
template <class T>
std::vector<T> random_values(std::size_t count, std::uint64_t seed, double lowest) {
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<double> uniform(lowest, 10.0);
    std::vector<T> v(count);
    for (T& x : v) x = static_cast<T>(uniform(engine));
    return v;
}

enum class Kind { Gemm, Argmax, Batched, BackwardA, BackwardB };

struct Case {
    Kind kind;
    DType dtype;
    Semiring semiring;
    std::int64_t n;
    int threads;  // 0: every core
    std::int64_t batch = 1;
    std::int64_t rows = 0;  // M of a gemm case (0: n)
};

template <class S, class T>
void run_case(benchmark::State& state, const Case& c) {
    const std::int64_t n = c.n, count = c.batch, m = c.rows ? c.rows : n;
    const auto elements = static_cast<std::size_t>(n * n * count);
    const double lowest = S::value == Semiring::MaxMul ? 0.0 : -10.0;
    const std::vector<T> a = random_values<T>(elements, 1, lowest), b = random_values<T>(elements, 2, lowest);
    std::vector<T> out(elements);
    std::vector<std::int32_t> argmax(elements);
    const host::Options options{false, c.threads};
    const auto in = [&](const std::vector<T>& x) { return batched(row_major(x.data(), n, n), n * n); };
    const auto mine = batched(row_major(out.data(), m, n), n * n);
    const auto indices = batched(row_major(argmax.data(), n, n), n * n);
    if (c.kind == Kind::BackwardA || c.kind == Kind::BackwardB)  // a real argmax to route through
        host::gemm_batched_with_argmax<S>(in(a), in(b), mine, indices, count, options);
    const Timing timing = time_runs(state, [&] {
        switch (c.kind) {
        case Kind::Gemm:
        case Kind::Batched:
            host::gemm_batched<S>(batched(row_major(a.data(), m, n), n * n), in(b), mine, count, options);
            break;
        case Kind::Argmax: host::gemm_batched_with_argmax<S>(in(a), in(b), mine, indices, count, options); break;
        case Kind::BackwardA:  // grad_C: A's values will do
            host::gemm_batched_backward_a<S>(in(a), indices, in(a), in(b), mine, count, options);
            break;
        case Kind::BackwardB:
            host::gemm_batched_backward_b<S>(in(a), indices, in(a), in(b), mine, count, options);
            break;
        }
        benchmark::ClobberMemory();
    });
    const int threads = c.threads ? c.threads : host::default_threads();
    if (c.kind == Kind::BackwardA || c.kind == Kind::BackwardB) {
        // grad_C and argmax read, the gradient zeroed and written.
        const double bytes = double(elements) * (2 * sizeof(T) + sizeof(std::int32_t)) + double(elements) * sizeof(T);
        state.counters["GBps"] = bytes / timing.best * 1e-9;
        state.counters["ms_best"] = timing.best * 1e3;
        return;
    }
    const double ops = 2.0 * double(m) * double(n) * double(n) * double(count);
    state.counters["Gops"] = ops / timing.best * 1e-9;
    const Ceiling& ceiling = ceiling_of(c.dtype, c.semiring);
    state.counters["of_ceiling"] = ops / timing.best / (2 * ceiling.wall() * threads);
    state.counters["ms_best"] = timing.best * 1e3;
    state.counters["ms_median"] = timing.median * 1e3;
    if (threads == 1) {  // the same on CPU time, which other processes on the core do not inflate
        state.counters["Gops_cpu"] = ops / timing.best_cpu * 1e-9;
        state.counters["of_ceiling_cpu"] = ops / timing.best_cpu / (2 * ceiling.cpu());
    }
}

template <class T>
void run_typed(benchmark::State& state, const Case& c) {
    switch (c.semiring) {
    case Semiring::MaxPlus: return run_case<MaxPlus, T>(state, c);
    case Semiring::MinPlus: return run_case<MinPlus, T>(state, c);
    case Semiring::MaxMul: return run_case<MaxMul, T>(state, c);
    case Semiring::MaxMin: return run_case<MaxMin, T>(state, c);
    case Semiring::MinMax: return run_case<MinMax, T>(state, c);
    case Semiring::Counting: break;  // (value, count) pairs: not a case of this suite
    case Semiring::OrAnd: break;     // not among the CPU suite's cases
    case Semiring::LogPlus: break;   // not among the CPU suite's cases
    }
}

// Every core runs its own single-threaded n^3 f32 MaxPlus product at once (threads that start
// together, twice each): Gops over the time until the last ends, best of 3 rounds, against one
// such product alone (best of 3) as cores_worth: how far the machine's cores scale on this work
// when nothing is shared. Not a bound for one product cut over every core, which shares its
// packing of B in L3 where the copies each stream their own operands (bench/RESULTS.md).
void copies(benchmark::State& state, std::int64_t n) {
    const int threads = host::default_threads();
    const auto elements = static_cast<std::size_t>(n * n);
    struct Operands {
        std::vector<float> a, b, c;
    };
    std::vector<Operands> operands;
    for (int i = 0; i < threads; ++i)
        operands.push_back({random_values<float>(elements, 2 * i + 1, -10.0),
                            random_values<float>(elements, 2 * i + 2, -10.0), std::vector<float>(elements)});
    const auto product = [&](Operands& o) {
        host::gemm<MaxPlus>(row_major(o.a.data(), n, n), row_major(o.b.data(), n, n), row_major(o.c.data(), n, n),
                            {false, 1});
    };
    const auto seconds_since = [](Clock::time_point start) {
        return std::chrono::duration<double>(Clock::now() - start).count();
    };
    double alone = 1e300, together = 1e300;
    for (int round = 0; round < 3; ++round) {
        const auto start = Clock::now();
        product(operands[0]);
        alone = std::min(alone, seconds_since(start));
    }
    for (int round = 0; round < 3; ++round) {
        std::latch ready(threads + 1);
        std::vector<std::thread> workers;
        for (int i = 0; i < threads; ++i)
            workers.emplace_back([&, i] {
                ready.arrive_and_wait();
                for (int repeat = 0; repeat < 2; ++repeat) product(operands[static_cast<std::size_t>(i)]);
            });
        ready.arrive_and_wait();
        const auto start = Clock::now();
        for (std::thread& w : workers) w.join();
        together = std::min(together, seconds_since(start));
    }
    for (auto _ : state) benchmark::DoNotOptimize(together);
    const double ops = 2.0 * double(n) * double(n) * double(n);
    state.counters["Gops"] = 2 * threads * ops / together * 1e-9;
    state.counters["Gops_one_alone"] = ops / alone * 1e-9;
    state.counters["cores_worth"] = 2 * threads * alone / together;
    state.counters["threads"] = threads;
}

void run(benchmark::State& state, Case c) {
    switch (c.dtype) {
    case DType::F32: return run_typed<float>(state, c);
    case DType::F64: return run_typed<double>(state, c);
    case DType::I32: return run_typed<std::int32_t>(state, c);
    case DType::I64: return run_typed<std::int64_t>(state, c);
    case DType::U8:
    case DType::BF16:
    case DType::F16:
    case DType::I16: break;  // no rows (OrAnd: cpu_bench_orand.cpp; 16-bit: issue 35)
    }
}

void add(const Case& c) {
    static const char* kinds[] = {"gemm", "argmax", "batched", "backward_a", "backward_b"};
    std::string name =
        fmt::format("{}/{}/{}/{}", kinds[static_cast<int>(c.kind)], name_of(c.dtype), to_string(c.semiring), c.n);
    if (c.kind == Kind::Batched) name = fmt::format("{}x{}", name, c.batch);
    if (c.rows)
        name = fmt::format("{}/{}/{}/{}x{}", kinds[static_cast<int>(c.kind)], name_of(c.dtype), to_string(c.semiring),
                           c.rows, c.n);
    name += c.threads ? fmt::format("/threads:{}", c.threads) : std::string("/threads:all");
    benchmark::RegisterBenchmark(name.c_str(), run, c)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
}

void register_all() {
    for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64})
        for (Semiring s : {Semiring::MaxPlus, Semiring::MaxMul, Semiring::MaxMin})
            benchmark::RegisterBenchmark(fmt::format("ceiling/{}/{}", name_of(t), to_string(s)).c_str(), ceiling, t, s)
                ->Iterations(1);
    for (std::int64_t n : {1024, 2048})
        benchmark::RegisterBenchmark(fmt::format("copies/f32/maxplus/{}/threads:all", n).c_str(), copies, n)
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
    for (std::int64_t n : {256, 512, 1024, 2048})
        for (int threads : {1, 0}) add({Kind::Gemm, DType::F32, Semiring::MaxPlus, n, threads});
    // One thread's share of 2048^3 when 16 or 64 bands of rows cut it (host_product.cpp's cut_for):
    // each band packs all of B again, which these rows price against gemm/f32/maxplus/2048/threads:1.
    for (std::int64_t rows : {128, 32}) add({Kind::Gemm, DType::F32, Semiring::MaxPlus, 2048, 1, 1, rows});
    for (Semiring s : {Semiring::MinPlus, Semiring::MaxMul, Semiring::MaxMin})
        add({Kind::Gemm, DType::F32, s, 1024, 1});
    for (DType t : {DType::F64, DType::I32, DType::I64})
        for (int threads : {1, 0}) add({Kind::Gemm, t, Semiring::MaxPlus, 1024, threads});
    add({Kind::Gemm, DType::I32, Semiring::MaxMul, 1024, 1});
    add({Kind::Gemm, DType::I64, Semiring::MaxMul, 1024, 1});
    for (int threads : {1, 0}) add({Kind::Argmax, DType::F32, Semiring::MaxPlus, 1024, threads});
    add({Kind::Batched, DType::F32, Semiring::MaxPlus, 64, 0, 1024});
    add({Kind::Batched, DType::F32, Semiring::MaxPlus, 128, 0, 256});
    add({Kind::BackwardA, DType::F32, Semiring::MaxPlus, 2048, 0});
    add({Kind::BackwardB, DType::F32, Semiring::MaxPlus, 2048, 0});
}

}  // namespace

// --simd=<name>: run on that SIMD target (one of those this CPU runs) instead of the best one.
bool force_simd_target(int& argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--simd=", 0) != 0) continue;
        const std::string wanted = arg.substr(7);
        std::string known;
        for (const std::int64_t t : cpu::runnable_targets()) {
            if (wanted == cpu::target_name(t)) {
                cpu::force_target(t);
                for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
                --argc;
                return true;
            }
            known += std::string(" ") + cpu::target_name(t);
        }
        std::fprintf(stderr, "cpu_bench: --simd=%s is not a target this CPU runs; use one of:%s\n", wanted.c_str(),
                     known.c_str());
        return false;
    }
    return true;
}

int main(int argc, char** argv) {
    if (!force_simd_target(argc, argv)) return 2;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    benchmark::AddCustomContext("simd_target", host::simd_target());
    benchmark::AddCustomContext("threads_all", std::to_string(host::default_threads()));
    register_all();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
