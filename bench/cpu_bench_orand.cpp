// cpu_bench's OrAnd rows: Boolean products on the CPU path (src/cpu/orand.cpp), registered here
// when the program starts, so cpu_bench.cpp's own list stays as it is.
//
//   orand/<bytes|packed>/<density>/<n>/threads:<1|all>   n x n x n row-major products
//   orand_argmax/bytes/<density>/1024/threads:<1|all>     the same with the argmax
//
// Densities (the chance that an input is true): dense 0.5, where nearly every result is found in
// the first few k; sparse 0.01 and rare 1/K, where most results are false, so a product that scans
// K for each result scans all of it. Bytes are 0 or any of 1..255; packed operands are 32-bit words
// along K (A M x K/32, B K/32 x N, both row-major). Rows report G terms/s (M N K / time, over the
// fastest timed run, in 1e9) and the fastest and median times; single-threaded rows also G terms/s
// on the thread's CPU time, which other work on a shared machine disturbs less.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tropical/host.hpp>
#include "support/cpu_timing.hpp"

using namespace tropical;

namespace {

enum class Density { Dense, Sparse, Rare };

const char* name_of(Density d) {
    switch (d) {
    case Density::Dense: return "dense";
    case Density::Sparse: return "sparse";
    case Density::Rare: return "rare";
    }
    return "";
}

double chance(Density d, std::int64_t k) {
    switch (d) {
    case Density::Dense: return 0.5;
    case Density::Sparse: return 0.01;
    case Density::Rare: return 1.0 / double(k);
    }
    return 0;
}

struct Case {
    bool packed, argmax;
    Density density;
    std::int64_t n;
    int threads;  // 0: every core
};

// rows x cols booleans, row-major, true with probability p (a true byte is any of 1..255).
std::vector<std::uint8_t> random_bytes(std::int64_t rows, std::int64_t cols, double p, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::bernoulli_distribution truth(p);
    std::uniform_int_distribution<int> value(1, 255);
    std::vector<std::uint8_t> v(static_cast<std::size_t>(rows * cols));
    for (auto& x : v) x = truth(engine) ? static_cast<std::uint8_t>(value(engine)) : 0;
    return v;
}

void run(benchmark::State& state, Case c) {
    const std::int64_t n = c.n, words = (n + 31) / 32;
    const double p = chance(c.density, n);
    const std::vector<std::uint8_t> a = random_bytes(n, n, p, 1), b = random_bytes(n, n, p, 2);
    std::vector<std::uint32_t> wa(static_cast<std::size_t>(n * words)), wb(static_cast<std::size_t>(words * n));
    std::vector<std::uint8_t> out(static_cast<std::size_t>(n * n));
    std::vector<std::int32_t> argmax(static_cast<std::size_t>(n * n));
    const host::Options options{false, c.threads};
    const auto a_bytes = row_major(a.data(), n, n), b_bytes = row_major(b.data(), n, n);
    const auto a_words = row_major(wa.data(), n, words), b_words = row_major(wb.data(), words, n);
    host::pack_bits<std::uint8_t>(a_bytes, PackAs::A, a_words);
    host::pack_bits<std::uint8_t>(b_bytes, PackAs::B, b_words);
    const auto c_view = row_major(out.data(), n, n);
    const auto i_view = row_major(argmax.data(), n, n);
    const auto call = [&] {
        if (c.packed && c.argmax)
            host::gemm_packed_with_argmax<OrAnd>(row_major<const std::uint32_t>(wa.data(), n, words),
                                                 row_major<const std::uint32_t>(wb.data(), words, n), n, c_view, i_view,
                                                 options);
        else if (c.packed)
            host::gemm_packed<OrAnd>(row_major<const std::uint32_t>(wa.data(), n, words),
                                     row_major<const std::uint32_t>(wb.data(), words, n), n, c_view, options);
        else if (c.argmax) host::gemm_with_argmax<OrAnd>(a_bytes, b_bytes, c_view, i_view, options);
        else host::gemm<OrAnd>(a_bytes, b_bytes, c_view, options);
        benchmark::ClobberMemory();
    };
    bench::report_terms(state, double(n) * double(n) * double(n), bench::time_runs(state, call), c.threads);
    state.counters["true_of_C"] =
        double(std::count_if(out.begin(), out.end(), [](std::uint8_t x) { return x != 0; })) / double(n * n);
}

void add(const Case& c) {
    const std::string name =
        fmt::format("{}/{}/{}/{}/threads:{}", c.argmax ? "orand_argmax" : "orand", c.packed ? "packed" : "bytes",
                    name_of(c.density), c.n, c.threads ? std::to_string(c.threads) : std::string("all"));
    benchmark::RegisterBenchmark(name.c_str(), run, c)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
}

// Registered before main() runs, beside the rows cpu_bench.cpp registers.
const bool registered = [] {
    for (const std::int64_t n : {1024, 2048})
        for (const bool packed : {false, true})
            for (const Density d : {Density::Dense, Density::Sparse, Density::Rare})
                for (const int threads : {1, 0}) add({packed, false, d, n, threads});
    for (const Density d : {Density::Dense, Density::Sparse, Density::Rare})
        for (const int threads : {1, 0}) add({false, true, d, 1024, threads});
    return true;
}();

}  // namespace
