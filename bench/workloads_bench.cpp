// The workloads users run (issue 14), each against what bounds it, f32 MaxPlus throughout:
//   batched/  batched products with and without argmax (Tops; argmax rows also time their plain
//             twin, interleaved, and report argmax_over_plain);
//   product/  one product, plain and with argmax (the same);
//   chain/    a Viterbi decoder: T = 512 dependent steps v <- v (x) W with argmax kept for each
//             step, for B sequences over S states, in µs per step: eager launches, one CUDA graph
//             replaying all steps, and the kernel time of one step (launches back to back); and
//             the walk back (the best final states, then tropical::backtrack) in µs;
//   bandwidth/ batched products of tiny matrices (plain, five also with argmax), row vectors times a
//             matrix and a matrix times a column vector (one and a batch, plain and with argmax), as
//             the bytes they must move (A and B read once, C and the argmax written once) per
//             second and as a fraction of HBM bandwidth;
//   host/     the host time of one warm asynchronous tropical::gemm call (64^3 on a stream), with
//             and without the device hint (and with it from a thread where the device's context is
//             current, as in a PyTorch program), and its floor: the driver's cuLaunchKernel alone, of the
//             kernel and parameters that call plans (what the library adds is the difference).
// GPU work is timed with CUDA events (median of the iterations) on inputs rotated beyond L2, except
// the chain, whose W stays in L2 as it does in a real decoder.
//
//   workloads_bench [--limits=f32:33.4,hbm:4300] [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <tropical/context.hpp>
#include <tropical/device_buffer.hpp>
#include <tropical/gemm.hpp>
#include "context/scoped_context.hpp"
#include "driver/cuda_driver.hpp"
#include "gemm/plan.hpp"
#include "request/request.hpp"
#include "request/validate.hpp"
#include "support/bench_inputs.hpp"
#include "support/gpu_timer.hpp"
#include "support/limits.hpp"
#include "support/timing.hpp"
#include "tests/support/stream_graph.hpp"

using namespace tropical;
using namespace tropical::bench;
using tropical::detail::CapturedGraph;
using tropical::detail::OwnedStream;

namespace {

Limits g_limits = default_limits();

constexpr std::int64_t kChainSteps = 512;

struct Product {
    std::int64_t m, n, k, batch = 1;
    bool with_argmax = false;
};

double terms_of(const Product& p) {
    return static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) *
           static_cast<double>(p.batch);
}

// Elements of `batch` matrices of rows x cols.
std::size_t cells(std::int64_t rows, std::int64_t cols, std::int64_t batch = 1) {
    return static_cast<std::size_t>(rows * cols * batch);
}

// Rotated inputs of a product (batched when p.batch > 1) and its launch, plain or with argmax.
class ProductInputs {
public:
    explicit ProductInputs(const Product& p)
        : p_(p),
          copies_(copies_to_defeat_l2(static_cast<std::size_t>(bytes(p)), l2_bytes())),
          a_(cells(p.m, p.k, p.batch), copies_, Semiring::MaxPlus, 1),
          b_(cells(p.k, p.n, p.batch), copies_, Semiring::MaxPlus, 2),
          c_(cells(p.m, p.n, p.batch), copies_, Semiring::MaxPlus, 3),
          argmax_(p.with_argmax ? cells(p.m, p.n, p.batch) : 0, copies_, Semiring::MaxMul, 4) {}

    void launch(std::size_t i, bool with_argmax) const {
        const auto a = batched(row_major<const float>(a_[i], p_.m, p_.k), p_.m * p_.k);
        const auto b = batched(row_major<const float>(b_[i], p_.k, p_.n), p_.k * p_.n);
        const auto c = batched(row_major(c_[i], p_.m, p_.n), p_.m * p_.n);
        if (with_argmax)
            gemm_batched_with_argmax<MaxPlus>(a, b, c, batched(row_major(argmax_[i], p_.m, p_.n), p_.m * p_.n),
                                              p_.batch);
        else gemm_batched<MaxPlus>(a, b, c, p_.batch);
    }
    int copies() const { return copies_; }
    // What the products move at least: A and B read once, C (and the argmax) written once.
    static double bytes(const Product& p) {
        const auto c = static_cast<double>(cells(p.m, p.n, p.batch));
        return 4.0 *
               (static_cast<double>(cells(p.m, p.k, p.batch) + cells(p.k, p.n, p.batch)) + c * (p.with_argmax ? 2 : 1));
    }

private:
    Product p_;
    int copies_;
    RotatingInput<float> a_, b_, c_;
    RotatingInput<std::int32_t> argmax_;
};

// batched/ and product/: Tops of the product; an argmax row also times its plain twin on the same
// inputs, interleaved, so that argmax_over_plain compares like with like.
void product(benchmark::State& state, Product p) {
    if (!gpu_available(state)) return;
    const ProductInputs inputs(p);
    state.counters["copies"] = inputs.copies();
    inputs.launch(0, false);
    inputs.launch(0, p.with_argmax);
    GpuTimer timer;
    std::vector<double> plain, timed;
    std::size_t i = 1;
    for (auto _ : state) {
        if (p.with_argmax) {
            timer.start();
            inputs.launch(i, false);
            plain.push_back(timer.stop());
        }
        timer.start();
        inputs.launch(i++, p.with_argmax);
        const double s = timer.stop();
        state.SetIterationTime(s);
        timed.push_back(s);
    }
    const double median = median_of(timed);
    state.counters["median_us"] = median * 1e6;
    state.counters["Tops"] = 2 * terms_of(p) / median * 1e-12;
    state.counters["of_limit"] = state.counters["Tops"] / g_limits["f32"];
    if (p.with_argmax) {
        const double plain_median = median_of(plain);
        state.counters["plain_us"] = plain_median * 1e6;
        state.counters["argmax_over_plain"] = median / plain_median;
    }
}

// bandwidth/: the same products reported as the bytes they must move.
void bandwidth(benchmark::State& state, Product p) {
    if (!gpu_available(state)) return;
    const ProductInputs inputs(p);
    state.counters["copies"] = inputs.copies();
    const double median = time_launches(state, [&](std::size_t i) { inputs.launch(i, p.with_argmax); });
    const double gbps = ProductInputs::bytes(p) / median * 1e-9;
    state.counters["median_us"] = median * 1e6;
    state.counters["GBps"] = gbps;
    state.counters["of_hbm"] = gbps / g_limits["hbm"];
    state.counters["Tops"] = 2 * terms_of(p) / median * 1e-12;
}

// The forward pass of a Viterbi decoder for `batch` sequences over `states` states: step t reads
// v_t (B x S; v_0 random), writes v_{t+1} = v_t (x) W and the argmax of step t into its slice of a
// T x B x S buffer. W (S x S) is the same every step. Then the walk back: the best final states (one
// more product with argmax, of v_T by a column of zeros) and tropical::backtrack through the tables.
class ViterbiChain {
public:
    ViterbiChain(std::int64_t batch, std::int64_t states)
        : batch_(batch),
          states_(states),
          w_(std::span<const float>(random_values<float>(cells(states, states), Semiring::MaxPlus, 5))),
          v0_(std::span<const float>(random_values<float>(cells(batch, states), Semiring::MaxPlus, 6))),
          ping_(cells(batch, states)),
          pong_(cells(batch, states)),
          argmax_(cells(batch, states, kChainSteps)),
          zeros_(std::span<const float>(std::vector<float>(cells(states, 1)))),
          best_(cells(batch, 1)),
          ends_(cells(batch, 1)),
          paths_(cells(batch, kChainSteps + 1)) {}

    void step(std::int64_t t, const GemmOptions& options) const {
        const float* in = t == 0 ? v0_.data() : (t % 2 ? ping_.data() : pong_.data());
        float* out = t % 2 ? pong_.data() : ping_.data();
        gemm_with_argmax<MaxPlus>(row_major(in, batch_, states_), w_.row_major(states_, states_),
                                  row_major(out, batch_, states_),
                                  row_major(argmax_.data() + t * batch_ * states_, batch_, states_), options);
    }
    void run(const GemmOptions& options) const {
        for (std::int64_t t = 0; t < kChainSteps; ++t) step(t, options);
    }
    void walk_back(const GemmOptions& options) const {
        const DeviceBuffer<float>& last = kChainSteps % 2 ? ping_ : pong_;
        gemm_with_argmax<MaxPlus>(last.row_major(batch_, states_), zeros_.row_major(states_, 1),
                                  best_.row_major(batch_, 1), ends_.row_major(batch_, 1), options);
        backtrack(batched(MatrixView<const std::int32_t>(argmax_.row_major(batch_, states_)), batch_ * states_),
                  kChainSteps, ends_.row_major(batch_, 1), paths_.row_major(batch_, kChainSteps + 1), options);
    }

private:
    std::int64_t batch_, states_;
    DeviceBuffer<float> w_, v0_, ping_, pong_;
    DeviceBuffer<std::int32_t> argmax_;
    DeviceBuffer<float> zeros_, best_;
    DeviceBuffer<std::int32_t> ends_, paths_;
};

// chain/: µs per step eager (512 launches timed by events on their stream), replayed from one graph
// of the 512 steps, and the kernel time of one step (launches back to back behind a long product);
// and the walk back's µs (the final states and the backtrack, eager, after the steps). Calls pass the
// device, as PyTorch's ops do. The benchmark's time is the graph's.
void chain(benchmark::State& state, std::int64_t batch, std::int64_t states) {
    if (!gpu_available(state)) return;
    const ViterbiChain chain(batch, states);
    const OwnedStream stream;
    const GemmOptions on_stream{stream.get(), false, 0};
    chain.run(on_stream);  // loads the kernels
    chain.walk_back(on_stream);
    const CapturedGraph graph(stream, [&] { chain.run(on_stream); });
    graph.launch(stream);  // the first replay also uploads the graph
    stream.synchronize();

    GpuTimer timer(stream.get());
    std::vector<double> eager, replayed, walked;
    for (auto _ : state) {
        timer.start();
        chain.run(on_stream);
        eager.push_back(timer.stop() / kChainSteps);
        timer.start();
        chain.walk_back(on_stream);
        walked.push_back(timer.stop());
        timer.start();
        graph.launch(stream);
        const double s = timer.stop() / kChainSteps;
        replayed.push_back(s);
        state.SetIterationTime(s);
    }
    BackToBack queue;
    std::vector<double> kernel;
    std::size_t i = 0;
    const GemmOptions on_default_stream{nullptr, false, 0};
    for (int r = 0; r < 11; ++r)
        kernel.push_back(queue.seconds_per_launch([&](std::size_t) { chain.step(0, on_default_stream); }, i));
    state.counters["steps"] = static_cast<double>(kChainSteps);
    state.counters["eager_us_per_step"] = median_of(eager) * 1e6;
    state.counters["graph_us_per_step"] = median_of(replayed) * 1e6;
    state.counters["kernel_us"] = median_of(kernel) * 1e6;
    state.counters["walk_back_us"] = median_of(walked) * 1e6;
}

// host/: the host time of one warm call: `calls` launches of a 64^3 product queued on a stream,
// the host's clock around them, divided by `calls`; the stream drained between iterations (so the
// launch queue never fills and blocks the host). The benchmark's time is that per call.
// How a host-cost row calls: the library's gemm, from a thread whose current context is none or
// the device's (as in a PyTorch program), or the driver's launch alone of what gemm plans.
enum class HostCall { NoHint, DeviceHint, DeviceHintContextCurrent, LaunchOnly };

void host_cost(benchmark::State& state, HostCall how) {
    if (!gpu_available(state)) return;
    constexpr std::int64_t n = 64;
    constexpr int calls = 200;
    DeviceBuffer<float> a(n * n), b(n * n), c(n * n);
    a.fill_bytes(0), b.fill_bytes(0);
    const OwnedStream stream;
    const GemmOptions options{stream.get(), false, how == HostCall::NoHint ? -1 : 0};
    detail::Request q;
    q.a = detail::operand(a.row_major(n, n)), q.b = detail::operand(b.row_major(n, n));
    q.c = detail::operand(c.row_major(n, n));
    q.options = options;
    CudaContext& context = CudaContext::for_device(0);
    const detail::LaunchPlan plan = detail::plan(
        q, detail::validate(q).shape, {context.multiprocessor_count(), context.shared_memory_per_block_optin()});
    CUfunction function = context.kernel(*plan.choice.kernel);
    void* args[] = {const_cast<TgGemmParams*>(&plan.product)};
    const auto call = [&] {
        if (how != HostCall::LaunchOnly) {
            gemm<MaxPlus>(a.row_major(n, n), b.row_major(n, n), c.row_major(n, n), options);
            return;
        }
        TROPICAL_CU(cuLaunchKernel(function, plan.grid[0], plan.grid[1], plan.grid[2], plan.block, 1, 1,
                                   plan.shared_bytes, reinterpret_cast<CUstream>(stream.get()), args, nullptr));
    };
    gemm<MaxPlus>(a.row_major(n, n), b.row_major(n, n), c.row_major(n, n), options);
    // The launch alone needs the device's context current, which gemm makes so for each call (and
    // then restores the thread's own, here none).
    std::optional<detail::ScopedContext> current;
    if (how == HostCall::LaunchOnly || how == HostCall::DeviceHintContextCurrent)
        current.emplace(context.primary_context());
    std::vector<double> per_call;
    for (auto _ : state) {
        stream.synchronize();
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) call();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls;
        state.SetIterationTime(s);
        per_call.push_back(s);
    }
    stream.synchronize();
    state.counters["host_us_per_call"] = median_of(per_call) * 1e6;
}

template <class... Args>
benchmark::internal::Benchmark* add(const std::string& name, benchmark::IterationCount iterations, Args&&... args) {
    return benchmark::RegisterBenchmark(name.c_str(), std::forward<Args>(args)...)
        ->UseManualTime()
        ->Iterations(iterations)
        ->Unit(benchmark::kMicrosecond);
}

// Enough timed runs for a stable median: at least 10, more for short kernels.
benchmark::IterationCount iterations_for(const Product& p) {
    return static_cast<benchmark::IterationCount>(std::clamp(2e10 / std::max(terms_of(p), 1.0), 10.0, 200.0));
}

void register_all() {
    for (auto [count, n] : {std::pair{4096, 128}, std::pair{16384, 64}, std::pair{1024, 256}})
        for (bool with_argmax : {false, true}) {
            const Product p{n, n, n, count, with_argmax};
            add(fmt::format("batched/f32/maxplus/{}x{}/{}", count, n, with_argmax ? "argmax" : "plain"),
                iterations_for(p), product, p);
        }
    for (std::int64_t n : {256, 1024})
        for (bool with_argmax : {false, true}) {
            const Product p{n, n, n, 1, with_argmax};
            add(fmt::format("product/f32/maxplus/{}/{}", n, with_argmax ? "argmax" : "plain"), iterations_for(p),
                product, p);
        }
    for (auto [batch, states] : {std::pair{1, 1024}, std::pair{64, 256}, std::pair{512, 512}, std::pair{4096, 64}})
        add(fmt::format("chain/viterbi/f32/B{}xS{}", batch, states), 20, chain, batch, states);
    for (const Product& p :
         {Product{16, 16, 16, 65536}, Product{32, 32, 8, 16384}, Product{64, 64, 16, 4096}, Product{64, 64, 32, 4096},
          Product{48, 48, 16, 8192}, Product{40, 40, 16, 8192}, Product{24, 64, 16, 8192}})
        add(fmt::format("bandwidth/f32/maxplus/{}x{}x{}x{}", p.batch, p.m, p.n, p.k), 100, bandwidth, p);
    // Some of them with argmax (the Dense and Wide kernels' argmax twins; the plain rows above keep
    // their names).
    for (Product p : {Product{16, 16, 16, 65536}, Product{32, 32, 8, 16384}, Product{64, 64, 16, 4096},
                      Product{64, 64, 32, 4096}, Product{48, 48, 16, 8192}}) {
        p.with_argmax = true;
        add(fmt::format("bandwidth/f32/maxplus/{}x{}x{}x{}/argmax", p.batch, p.m, p.n, p.k), 100, bandwidth, p);
    }
    // Row vectors times a matrix (the Vector kernels) and a matrix times a column vector (the Column
    // kernels): one, and a batch.
    for (const Product& p :
         {Product{1, 1024, 1024}, Product{1, 4096, 4096}, Product{1, 256, 256, 1024}, Product{1024, 1, 1024},
          Product{4096, 1, 4096}, Product{256, 1, 256, 1024}, Product{32, 1, 64, 16384}, Product{16, 4, 32, 65536}})
        for (bool with_argmax : {false, true}) {
            Product q = p;
            q.with_argmax = with_argmax;
            add(fmt::format("bandwidth/f32/maxplus/{}x{}x{}x{}/{}", q.batch, q.m, q.n, q.k,
                            with_argmax ? "argmax" : "plain"),
                100, bandwidth, q);
        }
    for (auto [how, name] :
         {std::pair{HostCall::DeviceHint, "gemm_call/f32/maxplus/64/device_hint"},
          std::pair{HostCall::NoHint, "gemm_call/f32/maxplus/64/no_hint"},
          std::pair{HostCall::DeviceHintContextCurrent, "gemm_call/f32/maxplus/64/device_hint_context_current"},
          std::pair{HostCall::LaunchOnly, "launch_floor/f32/maxplus/64"}})
        add(fmt::format("host/{}", name), 100, host_cost, how);
}

}  // namespace

int main(int argc, char** argv) {
    take_limits(argc, argv, g_limits);
    register_all();
    record_limits(g_limits);
    return run_or_skip(argc, argv);
}
