// throughput_bench's LogPlus rows (bench/throughput_logplus.hpp): the same clock and rotation beyond
// L2 as the suite's other rows, on inputs uniform in +-span (span 100: the terms span +-200, where
// rescaling by row and column maxima underflows; span 10: values a few tens apart).
#include "throughput_logplus.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tropical/gemm.hpp>
#include "support/bench_inputs.hpp"
#include "support/gpu_timer.hpp"
#include "support/timing.hpp"

namespace tropical::bench {
namespace {

enum class LogKind { Product, BackwardA, BackwardB };

struct LogCase {
    LogKind kind;
    std::int64_t m, n, k, batch;
    double span;
};

template <class T>
std::vector<T> uniform_values(std::size_t count, double span, std::uint64_t seed) {
    std::vector<T> out(count);
    for (auto& v : out)
        v = static_cast<T>(span * (2.0 * static_cast<double>(splitmix64(seed) >> 11) * 0x1.0p-53 - 1.0));
    return out;
}

// Tterms: M*N*K terms per product over the median time (one ex2 each).
template <class T>
void run_logplus(benchmark::State& state, const LogCase& c) {
    if (!gpu_available(state)) return;
    const auto a_count = static_cast<std::size_t>(c.m * c.k * c.batch),
               b_count = static_cast<std::size_t>(c.k * c.n * c.batch),
               c_count = static_cast<std::size_t>(c.m * c.n * c.batch);
    const bool backward = c.kind != LogKind::Product;
    const std::size_t grad_count = c.kind == LogKind::BackwardA ? a_count : c.kind == LogKind::BackwardB ? b_count : 0;
    const std::size_t set_bytes = (a_count + b_count + c_count * (backward ? 2 : 1) + grad_count) * sizeof(T);
    const int copies = copies_to_defeat_l2(set_bytes, l2_bytes());
    state.counters["copies"] = copies;
    auto rotating = [&](std::size_t count, std::uint64_t seed) {
        std::vector<std::unique_ptr<DeviceBuffer<T>>> out;
        const auto host = uniform_values<T>(count, c.span, seed);
        for (int i = 0; i < copies; ++i) out.push_back(std::make_unique<DeviceBuffer<T>>(std::span<const T>(host)));
        return out;
    };
    auto a = rotating(a_count, 1), b = rotating(b_count, 2), out = rotating(c_count, 3);
    auto grad_c = rotating(backward ? c_count : 0, 4), grad = rotating(grad_count, 5);
    const std::int64_t sa = c.m * c.k, sb = c.k * c.n, sc = c.m * c.n;
    auto in = [](const auto& v, std::size_t i, std::int64_t rows, std::int64_t cols, std::int64_t stride) {
        return batched(row_major<const T>(v[i % v.size()]->data(), rows, cols), stride);
    };
    auto mut = [](const auto& v, std::size_t i, std::int64_t rows, std::int64_t cols, std::int64_t stride) {
        return batched(row_major(v[i % v.size()]->data(), rows, cols), stride);
    };
    if (backward)  // the forward's C of each copy, so that the weights are the real ones
        for (std::size_t i = 0; i < out.size(); ++i)
            gemm_batched<LogPlus>(in(a, i, c.m, c.k, sa), in(b, i, c.k, c.n, sb), mut(out, i, c.m, c.n, sc), c.batch);
    std::function<void(std::size_t)> launch;
    switch (c.kind) {
    case LogKind::Product:
        launch = [&](std::size_t i) {
            gemm_batched<LogPlus>(in(a, i, c.m, c.k, sa), in(b, i, c.k, c.n, sb), mut(out, i, c.m, c.n, sc), c.batch);
        };
        break;
    case LogKind::BackwardA:
        launch = [&](std::size_t i) {
            gemm_batched_backward_a<LogPlus>(in(grad_c, i, c.m, c.n, sc), in(out, i, c.m, c.n, sc),
                                             in(a, i, c.m, c.k, sa), in(b, i, c.k, c.n, sb), mut(grad, i, c.m, c.k, sa),
                                             c.batch);
        };
        break;
    case LogKind::BackwardB:
        launch = [&](std::size_t i) {
            gemm_batched_backward_b<LogPlus>(in(grad_c, i, c.m, c.n, sc), in(out, i, c.m, c.n, sc),
                                             in(a, i, c.m, c.k, sa), in(b, i, c.k, c.n, sb), mut(grad, i, c.k, c.n, sb),
                                             c.batch);
        };
        break;
    }
    const double median = time_launches(state, launch);
    state.counters["median_us"] = median * 1e6;
    state.counters["Tterms"] = static_cast<double>(c.m * c.n * c.k * c.batch) / median * 1e-12;
}

void add_logplus(const std::string& name, DType dtype, const LogCase& c) {
    const double terms = static_cast<double>(c.m * c.n * c.k * c.batch);
    const auto iterations = static_cast<benchmark::IterationCount>(std::clamp(4e9 / terms, 5.0, 200.0));
    benchmark::RegisterBenchmark(name.c_str(),
                                 [=](benchmark::State& state) {
                                     if (dtype == DType::F32) run_logplus<float>(state, c);
                                     else run_logplus<double>(state, c);
                                 })
        ->UseManualTime()
        ->Iterations(iterations)
        ->Unit(benchmark::kMicrosecond);
}

}  // namespace

void add_logplus_rows() {
    // Issue 34: products at 1024^3, 4096^3 and 8192^3, a batch of 4096 products of 128^3, and the
    // gradients at 4096^3, f32 and f64, on inputs spanning +-100 (the straight loop) and, for f32,
    // +-10 (the tiles factored: kernels/logplus_factored.cuh).
    for (DType t : {DType::F32, DType::F64})
        for (int span : {100, 10}) {
            if (t == DType::F64 && span == 10) continue;
            const std::string ts(to_string(t));
            for (std::int64_t n : {1024, 4096, 8192})
                add_logplus(fmt::format("logplus/gemm/{}/span{}/{}", ts, span, n), t,
                            {LogKind::Product, n, n, n, 1, static_cast<double>(span)});
            add_logplus(fmt::format("logplus/batched/{}/span{}/4096x128", ts, span), t,
                        {LogKind::Product, 128, 128, 128, 4096, static_cast<double>(span)});
            add_logplus(fmt::format("logplus/backward_a/{}/span{}/4096", ts, span), t,
                        {LogKind::BackwardA, 4096, 4096, 4096, 1, static_cast<double>(span)});
            add_logplus(fmt::format("logplus/backward_b/{}/span{}/4096", ts, span), t,
                        {LogKind::BackwardB, 4096, 4096, 4096, 1, static_cast<double>(span)});
        }
    // An HMM forward step: 64 sequences x 256 states times the 256 x 256 transition matrix.
    add_logplus("logplus/hmm_step/f32/64x256x256", DType::F32, {LogKind::Product, 64, 256, 256, 1, 10});
}

}  // namespace tropical::bench
