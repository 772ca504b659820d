// Throughput of every kernel group, type and semiring over a size sweep, timed with CUDA events on
// inputs rotated beyond L2. Reports tropical Tops (2*M*N*K per product over the median time) and
// that as a fraction of the hardware limit; backward kernels report the bytes they must move
// against HBM bandwidth. The latency cases report the kernel time of one small product (launches
// queued back to back behind a long product, so the GPU never waits for the host) and, as
// one_launch_us, events around a single launch, which adds the launch's own cost.
//
//   throughput_bench [--limits=f32:33.4,f64:16.7,i32:33.4,i64:8.4,u8:535,hbm:4300] [Google Benchmark flags]
// The limits are the H200's from shared/REFERENCE.md (Tops; hbm in GB/s); give others for another GPU.
// OrAnd's rows (orand/...) count terms, not operations: Tterms = M*N*K per product over the median
// time (one LOP3 is 32 terms), against u8, the LOP3 bound in T terms/s (64 per clock per SM). Those
// rows and the counting semiring's are in bench/throughput_orand_counting.cpp.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tropical/context.hpp>
#include <tropical/gemm.hpp>
#include "driver/cuda_driver.hpp"
#include "support/bench_inputs.hpp"
#include "support/gpu_timer.hpp"
#include "support/limits.hpp"
#include "support/timing.hpp"
#include "throughput_logplus.hpp"
#include "throughput_orand_counting.hpp"

using namespace tropical;
using namespace tropical::bench;

namespace {

Limits g_limits = default_limits();

enum class Kind { Gemm, Argmax, Batched, BatchedArgmax, BackwardA, BackwardB, Latency };

struct Case {
    Kind kind;
    DType dtype;
    Semiring semiring;
    std::int64_t m, n, k, batch = 1;
    Layout la = Layout::RowMajor, lb = Layout::RowMajor, lc = Layout::RowMajor;
};

template <class T>
MatrixView<T> view(T* data, std::int64_t rows, std::int64_t cols, Layout layout) {
    return layout == Layout::RowMajor ? row_major(data, rows, cols) : col_major(data, rows, cols);
}

template <class T, class S>
void run_case(benchmark::State& state, const Case& c) {
    if (!gpu_available(state)) return;
    const auto a_count = static_cast<std::size_t>(c.m * c.k * c.batch);
    const auto b_count = static_cast<std::size_t>(c.k * c.n * c.batch);
    const auto c_count = static_cast<std::size_t>(c.m * c.n * c.batch);
    const bool backward = c.kind == Kind::BackwardA || c.kind == Kind::BackwardB;
    const bool with_index = c.kind == Kind::Argmax || c.kind == Kind::BatchedArgmax || backward;
    const std::size_t set_bytes = (a_count + b_count + c_count) * sizeof(T) + (with_index ? c_count * 4 : 0);
    const int copies = copies_to_defeat_l2(set_bytes, l2_bytes());
    state.counters["copies"] = copies;

    RotatingInput<T> a(a_count, copies, c.semiring, 1), b(b_count, copies, c.semiring, 2);
    RotatingInput<T> out(c_count, copies, c.semiring, 3);
    // Random indices in [0, K): the scatter pattern of a real backward pass.
    RotatingInput<std::int32_t> index(with_index ? c_count : 0, copies, Semiring::MaxMul, 4);
    if (backward) {
        std::uint64_t state = 5;
        std::vector<std::int32_t> host(c_count);
        for (auto& v : host) v = static_cast<std::int32_t>(splitmix64(state) % static_cast<std::uint64_t>(c.k));
        index.upload(host);
    }

    const std::int64_t sa = c.m * c.k, sb = c.k * c.n, sc = c.m * c.n;  // batch strides
    std::function<void(std::size_t)> launch;
    switch (c.kind) {
    case Kind::Latency:
    case Kind::Gemm:
        launch = [&](std::size_t i) {
            gemm<S>(view<const T>(a[i], c.m, c.k, c.la), view<const T>(b[i], c.k, c.n, c.lb),
                    view(out[i], c.m, c.n, c.lc));
        };
        break;
    case Kind::Batched:
        launch = [&](std::size_t i) {
            gemm_batched<S>(batched(view<const T>(a[i], c.m, c.k, c.la), sa),
                            batched(view<const T>(b[i], c.k, c.n, c.lb), sb), batched(view(out[i], c.m, c.n, c.lc), sc),
                            c.batch);
        };
        break;
    case Kind::BatchedArgmax:
        launch = [&](std::size_t i) {
            gemm_batched_with_argmax<S>(
                batched(view<const T>(a[i], c.m, c.k, c.la), sa), batched(view<const T>(b[i], c.k, c.n, c.lb), sb),
                batched(view(out[i], c.m, c.n, c.lc), sc), batched(row_major(index[i], c.m, c.n), sc), c.batch);
        };
        break;
    case Kind::Argmax:
        launch = [&](std::size_t i) {
            gemm_with_argmax<S>(view<const T>(a[i], c.m, c.k, c.la), view<const T>(b[i], c.k, c.n, c.lb),
                                view(out[i], c.m, c.n, c.lc), row_major(index[i], c.m, c.n));
        };
        break;
    case Kind::BackwardA:
        if constexpr (detail::needs_both_operands<S>) break;  // not registered (register_all)
        else
            launch = [&](std::size_t i) {
                gemm_backward_a<S>(view<const T>(out[i], c.m, c.n, c.lc),
                                   row_major<const std::int32_t>(index[i], c.m, c.n),
                                   view<const T>(b[i], c.k, c.n, c.lb), view(a[i], c.m, c.k, c.la));
            };
        break;
    case Kind::BackwardB:
        if constexpr (detail::needs_both_operands<S>) break;
        else
            launch = [&](std::size_t i) {
                gemm_backward_b<S>(view<const T>(out[i], c.m, c.n, c.lc),
                                   row_major<const std::int32_t>(index[i], c.m, c.n),
                                   view<const T>(a[i], c.m, c.k, c.la), view(b[i], c.k, c.n, c.lb));
            };
        break;
    }
    const double median = c.kind == Kind::Latency ? time_back_to_back(state, launch) : time_launches(state, launch);
    state.counters["median_us"] = median * 1e6;
    if (backward) {
        // What a backward pass must move: grad_C and argmax read once, the gradient written once,
        // and for MaxMul the other operand read once.
        const double grad = static_cast<double>(c.kind == Kind::BackwardA ? a_count : b_count) * sizeof(T);
        const double bytes =
            static_cast<double>(c_count) * (sizeof(T) + 4) + grad * (c.semiring == Semiring::MaxMul ? 2 : 1);
        state.counters["GBps"] = bytes / median * 1e-9;
        state.counters["of_hbm"] = bytes / median * 1e-9 / g_limits["hbm"];
    } else {
        const double tops = 2.0 * static_cast<double>(c.m * c.n * c.k * c.batch) / median * 1e-12;
        state.counters["Tops"] = tops;
        state.counters["of_limit"] = tops / g_limits[std::string(to_string(c.dtype))];
    }
}

template <class S>
void dispatch_type(benchmark::State& state, const Case& c) {
    switch (c.dtype) {
    case DType::F32: return run_case<float, S>(state, c);
    case DType::F64: return run_case<double, S>(state, c);
    case DType::I32: return run_case<std::int32_t, S>(state, c);
    case DType::I64: return run_case<std::int64_t, S>(state, c);
    case DType::BF16: return run_case<bfloat16, S>(state, c);
    case DType::F16: return run_case<float16, S>(state, c);
    case DType::I16:
        if constexpr (!std::is_same_v<S, MaxMul>) return run_case<std::int16_t, S>(state, c);
        break;              // (int16 has no MaxMul)
    case DType::U8: break;  // OrAnd's rows: add_orand_rows
    }
}

void dispatch(benchmark::State& state, Case c) {
    switch (c.semiring) {
    case Semiring::MaxPlus: return dispatch_type<MaxPlus>(state, c);
    case Semiring::MinPlus: return dispatch_type<MinPlus>(state, c);
    case Semiring::MaxMul: return dispatch_type<MaxMul>(state, c);
    case Semiring::MaxMin: return dispatch_type<MaxMin>(state, c);
    case Semiring::MinMax: return dispatch_type<MinMax>(state, c);
    case Semiring::Counting: break;  // (value, count) pairs: not a case of this suite
    case Semiring::OrAnd: break;     // its own rows: add_orand_rows
    case Semiring::LogPlus: break;   // its own rows: add_logplus_rows
    }
}

void add(const std::string& name, const Case& c) {
    const double terms = static_cast<double>(c.m * c.n * c.k * c.batch);
    // Enough timed runs for a stable median: at least 10, more for short kernels.
    const auto iterations =
        static_cast<benchmark::IterationCount>(std::clamp(2e10 / std::max(terms, 1.0), 10.0, 200.0));
    benchmark::RegisterBenchmark(name.c_str(), dispatch, c)
        ->UseManualTime()
        ->Iterations(iterations)
        ->Unit(benchmark::kMicrosecond);
}

char layout_letter(Layout l) { return l == Layout::RowMajor ? 'R' : 'C'; }

void register_all() {
    const DType types[] = {DType::F32, DType::F64, DType::I32, DType::I64};
    // Products of every semiring; the backward rows for the semirings whose gradient of one operand
    // reads the other at most (those of MaxMin and MinMax read both, as a MaxMul one reads one).
    const auto& semirings = all_semirings;
    const Semiring backward_semirings[] = {Semiring::MaxPlus, Semiring::MinPlus, Semiring::MaxMul};
    for (DType t : types)
        for (Semiring s : semirings) {
            // OrAnd: add_orand_rows; Counting (value, count pairs): add_counting_rows; LogPlus:
            // add_logplus_rows. Rows of theirs here would time nothing, which Google Benchmark aborts on.
            if (!supports(s, t) || s == Semiring::Counting || s == Semiring::LogPlus) continue;
            const std::string ts = fmt::format("{}/{}", to_string(t), to_string(s));
            const bool wide = t == DType::F32 || t == DType::I32;
            for (std::int64_t n : {64, 128, 256, 512, 1024, 2048, 4096, 8192}) {
                if (n == 8192 && !wide) continue;
                add(fmt::format("gemm/{}/{}", ts, n), {Kind::Gemm, t, s, n, n, n});
            }
            for (std::int64_t n : {256, 1024, 4096, 8192}) {
                if (n == 8192 && !wide) continue;
                add(fmt::format("argmax/{}/{}", ts, n), {Kind::Argmax, t, s, n, n, n});
            }
            for (auto [count, n] :
                 {std::pair{4096, 128}, std::pair{16384, 64}, std::pair{1024, 256}, std::pair{256, 64}}) {
                add(fmt::format("batched/{}/{}x{}", ts, count, n), {Kind::Batched, t, s, n, n, n, count});
                add(fmt::format("batched_argmax/{}/{}x{}", ts, count, n), {Kind::BatchedArgmax, t, s, n, n, n, count});
            }
        }
    for (DType t : {DType::F32, DType::F64})
        for (Semiring s : backward_semirings) {
            add(fmt::format("backward_a/{}/{}/4096", to_string(t), to_string(s)),
                {Kind::BackwardA, t, s, 4096, 4096, 4096});
            add(fmt::format("backward_b/{}/{}/4096", to_string(t), to_string(s)),
                {Kind::BackwardB, t, s, 4096, 4096, 4096});
        }
    // A long K over few tiles (the split-K kernels): a contraction of a tropical tensor network.
    for (DType t : {DType::F32, DType::I32})
        add(fmt::format("longk/{}/maxplus/256x256x65536", to_string(t)),
            {Kind::Gemm, t, Semiring::MaxPlus, 256, 256, 65536});
    // Latency of one small f32 product, the size of a tropical network's layer.
    for (std::int64_t n : {64, 128, 256, 512})
        add(fmt::format("latency/f32/maxplus/{}", n), {Kind::Latency, DType::F32, Semiring::MaxPlus, n, n, n});
    add_orand_rows(g_limits);  // bench/throughput_orand_counting.cpp
    add_counting_rows();
    add_logplus_rows();  // bench/throughput_logplus.cpp
    // The 16-bit types (issue 35): products at 1024^3, 4096^3 and 8192^3, and a batch of 4096 of 128^3.
    for (DType t : {DType::BF16, DType::F16, DType::I16})
        for (Semiring s :
             {Semiring::MaxPlus, Semiring::MinPlus, Semiring::MaxMul, Semiring::MaxMin, Semiring::MinMax}) {
            if (!supports(s, t)) continue;
            const std::string ts = fmt::format("{}/{}", to_string(t), to_string(s));
            for (std::int64_t n : {1024, 4096, 8192})
                add(fmt::format("gemm/{}/{}", ts, n), {Kind::Gemm, t, s, n, n, n});
            add(fmt::format("batched/{}/4096x128", ts), {Kind::Batched, t, s, 128, 128, 128, 4096});
        }
    // Every layout combination of A, B and C at n = 4096.
    for (Layout la : {Layout::RowMajor, Layout::ColMajor})
        for (Layout lb : {Layout::RowMajor, Layout::ColMajor})
            for (Layout lc : {Layout::RowMajor, Layout::ColMajor}) {
                Case c{Kind::Gemm, DType::F32, Semiring::MaxPlus, 4096, 4096, 4096};
                c.la = la, c.lb = lb, c.lc = lc;
                add(fmt::format("layouts/f32/maxplus/4096/{}{}{}", layout_letter(la), layout_letter(lb),
                                layout_letter(lc)),
                    c);
            }
}

}  // namespace

int main(int argc, char** argv) {
    take_limits(argc, argv, g_limits);
    register_all();
    record_limits(g_limits);
    return run_or_skip(argc, argv);
}
