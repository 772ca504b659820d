// throughput_bench's OrAnd and CountingTropical rows (bench/throughput_orand_counting.hpp): the same
// clock and rotation beyond L2 as the suite's other rows (bench/support), with inputs of their own.
#include "throughput_orand_counting.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <tropical/counting.hpp>
#include <tropical/gemm.hpp>
#include "support/bench_inputs.hpp"
#include "support/gpu_timer.hpp"
#include "support/timing.hpp"

namespace tropical::bench {
namespace {

const Limits* g_limits = nullptr;  // add_orand_rows's, read when a row runs

// --- OrAnd ------------------------------------------------------------------------------------

enum class OrAndKind { Bytes, Packed, Pack };

struct OrAndCase {
    OrAndKind kind;
    bool argmax;
    std::int64_t m, n, k, batch = 1;
    Layout lb = Layout::RowMajor;  // B's layout (A is row-major): row-major B packs through the transpose
};

// Booleans with probability `density` of true (as bytes 0 and 1).
std::vector<std::uint8_t> random_booleans(std::size_t count, double density, std::uint64_t seed) {
    std::vector<std::uint8_t> out(count);
    const auto below = static_cast<std::uint64_t>(density * 18446744073709551615.0);
    for (auto& v : out) v = splitmix64(seed) < below ? 1 : 0;
    return out;
}

// A true term with probability density^2, so about half of the results are false with this density
// (0.69 = ln 2 true terms per result): no result, and no block of the argmax kernels, is decided
// before the end of K, and each C holds both values.
double orand_density(std::int64_t k) {
    return std::min(0.5, std::sqrt(0.69 / static_cast<double>(std::max<std::int64_t>(k, 1))));
}

void run_orand(benchmark::State& state, const OrAndCase& c) {
    if (!gpu_available(state)) return;
    const std::int64_t words = (c.k + 31) / 32;
    const auto a_count = static_cast<std::size_t>(c.m * c.k * c.batch),
               b_count = static_cast<std::size_t>(c.k * c.n * c.batch);
    const auto c_count = static_cast<std::size_t>(c.m * c.n * c.batch);
    const auto wa_count = static_cast<std::size_t>(c.m * words * c.batch),
               wb_count = static_cast<std::size_t>(words * c.n * c.batch);
    const std::size_t set_bytes =
        c.kind == OrAndKind::Packed
            ? (wa_count + wb_count) * 4 + c_count * (c.argmax ? 5 : 1)
            : a_count + b_count +
                  (c.kind == OrAndKind::Pack ? (wa_count + wb_count) * 4 : c_count * (c.argmax ? 5 : 1));
    const int copies = copies_to_defeat_l2(set_bytes, l2_bytes());
    state.counters["copies"] = copies;
    const double density = orand_density(c.k);
    const auto host_a = random_booleans(a_count, density, 1), host_b = random_booleans(b_count, density, 2);
    DeviceBuffer<std::uint8_t> bytes_a(host_a), bytes_b(host_b);
    auto view_a = [&](const std::uint8_t* p) { return row_major(p, c.m, c.k); };
    auto view_b = [&](const std::uint8_t* p) {
        return c.lb == Layout::RowMajor ? row_major(p, c.k, c.n) : col_major(p, c.k, c.n);
    };
    // Inputs rotated beyond L2: copies of the bytes, or of their words (packed once, untimed).
    std::vector<std::unique_ptr<DeviceBuffer<std::uint8_t>>> ra, rb;
    std::vector<std::unique_ptr<DeviceBuffer<std::uint32_t>>> wa, wb;
    for (int i = 0; i < copies; ++i) {
        if (c.kind == OrAndKind::Packed) {
            wa.push_back(std::make_unique<DeviceBuffer<std::uint32_t>>(wa_count));
            wb.push_back(std::make_unique<DeviceBuffer<std::uint32_t>>(wb_count));
            pack_bits_batched<std::uint8_t>(batched(view_a(bytes_a.data()), c.m * c.k), PackAs::A,
                                            batched(row_major(wa.back()->data(), c.m, words), c.m * words), c.batch);
            pack_bits_batched<std::uint8_t>(batched(view_b(bytes_b.data()), c.k * c.n), PackAs::B,
                                            batched(row_major(wb.back()->data(), words, c.n), words * c.n), c.batch);
        } else {
            ra.push_back(std::make_unique<DeviceBuffer<std::uint8_t>>(std::span<const std::uint8_t>(host_a)));
            rb.push_back(std::make_unique<DeviceBuffer<std::uint8_t>>(std::span<const std::uint8_t>(host_b)));
            if (c.kind == OrAndKind::Pack) {
                wa.push_back(std::make_unique<DeviceBuffer<std::uint32_t>>(wa_count));
                wb.push_back(std::make_unique<DeviceBuffer<std::uint32_t>>(wb_count));
            }
        }
    }
    RotatingInput<std::uint8_t> out(c_count, copies, Semiring::MaxMul, 3);
    RotatingInput<std::int32_t> index(c.argmax ? c_count : 0, copies, Semiring::MaxMul, 4);
    const std::int64_t sc = c.m * c.n;
    std::function<void(std::size_t)> launch = [&](std::size_t i) {
        const std::size_t r = i % static_cast<std::size_t>(copies);
        auto cv = batched(row_major(out[i], c.m, c.n), sc);
        auto iv = batched(row_major(index[i], c.m, c.n), sc);
        switch (c.kind) {
        case OrAndKind::Pack:
            pack_bits_batched<std::uint8_t>(batched(view_a(ra[r]->data()), c.m * c.k), PackAs::A,
                                            batched(row_major(wa[r]->data(), c.m, words), c.m * words), c.batch);
            pack_bits_batched<std::uint8_t>(batched(view_b(rb[r]->data()), c.k * c.n), PackAs::B,
                                            batched(row_major(wb[r]->data(), words, c.n), words * c.n), c.batch);
            break;
        case OrAndKind::Packed: {
            const auto a = batched(row_major<const std::uint32_t>(wa[r]->data(), c.m, words), c.m * words);
            const auto b = batched(row_major<const std::uint32_t>(wb[r]->data(), words, c.n), words * c.n);
            if (c.argmax) gemm_packed_batched_with_argmax<OrAnd>(a, b, c.k, cv, iv, c.batch);
            else gemm_packed_batched<OrAnd>(a, b, c.k, cv, c.batch);
            break;
        }
        case OrAndKind::Bytes: {
            const auto a = batched(view_a(ra[r]->data()), c.m * c.k);
            const auto b = batched(view_b(rb[r]->data()), c.k * c.n);
            if (c.argmax) gemm_batched_with_argmax<OrAnd>(a, b, cv, iv, c.batch);
            else gemm_batched<OrAnd>(a, b, cv, c.batch);
            break;
        }
        }
    };
    const double median = time_launches(state, launch);
    state.counters["median_us"] = median * 1e6;
    if (c.kind == OrAndKind::Pack) {
        // Bytes read once, words written once.
        const double bytes = static_cast<double>(a_count + b_count) + static_cast<double>(wa_count + wb_count) * 4;
        state.counters["GBps"] = bytes / median * 1e-9;
        state.counters["of_hbm"] = bytes / median * 1e-9 / g_limits->at("hbm");
        return;
    }
    const double terms = static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k) *
                         static_cast<double>(c.batch) / median * 1e-12;
    state.counters["Tterms"] = terms;
    state.counters["of_limit"] = terms / g_limits->at("u8");
}

void add_orand(const std::string& name, const OrAndCase& c) {
    const double words = static_cast<double>(c.m * c.n * ((c.k + 31) / 32) * c.batch);
    const auto iterations =
        static_cast<benchmark::IterationCount>(std::clamp(2e10 / std::max(words, 1.0), 10.0, 200.0));
    benchmark::RegisterBenchmark(name.c_str(), [c](benchmark::State& state) { run_orand(state, c); })
        ->UseManualTime()
        ->Iterations(iterations)
        ->Unit(benchmark::kMicrosecond);
}

// --- CountingTropical -------------------------------------------------------------------------

// Integer values in [-4, 4] as floats, so that many terms tie and their counts add (a spin glass's
// energies), and counts in [1, 3].
template <class T>
std::vector<T> small_integers(std::size_t count, std::uint64_t seed, int low, int high) {
    std::vector<T> out(count);
    for (auto& v : out)
        v = static_cast<T>(low + static_cast<int>(splitmix64(seed) % static_cast<std::uint64_t>(high - low + 1)));
    return out;
}

// The rows report Tterms (M*N*K terms per second): a term is an add, a compare and a count's
// multiply-add, not comparable with the Tops of a plain product.
template <class T>
void run_counting(benchmark::State& state, std::int64_t batch, std::int64_t n) {
    if (!gpu_available(state)) return;
    const auto count = static_cast<std::size_t>(n * n * batch);
    const std::size_t set_bytes = 3 * count * (sizeof(T) + sizeof(double));
    const int copies = copies_to_defeat_l2(set_bytes, l2_bytes());
    state.counters["copies"] = copies;
    std::vector<std::unique_ptr<DeviceBuffer<T>>> values;
    std::vector<std::unique_ptr<DeviceBuffer<double>>> counts;
    for (int i = 0; i < 3 * copies; ++i) {  // A, B and C of each copy
        const auto seed = static_cast<std::uint64_t>(i);
        values.push_back(std::make_unique<DeviceBuffer<T>>(std::span<const T>(small_integers<T>(count, seed, -4, 4))));
        counts.push_back(std::make_unique<DeviceBuffer<double>>(
            std::span<const double>(small_integers<double>(count, seed + 99, 1, 3))));
    }
    const std::int64_t stride = n * n;
    std::function<void(std::size_t)> launch = [&](std::size_t i) {
        const std::size_t r = 3 * (i % static_cast<std::size_t>(copies));
        auto in = [&](std::size_t j) {
            return std::pair{batched(row_major<const T>(values[r + j]->data(), n, n), stride),
                             batched(row_major<const double>(counts[r + j]->data(), n, n), stride)};
        };
        const auto [av, ac] = in(0);
        const auto [bv, bc] = in(1);
        counting_gemm_batched<T>(av, ac, bv, bc, batched(row_major(values[r + 2]->data(), n, n), stride),
                                 batched(row_major(counts[r + 2]->data(), n, n), stride), batch);
    };
    const double median = time_launches(state, launch);
    state.counters["median_us"] = median * 1e6;
    state.counters["Tterms"] = static_cast<double>(n * n * n * batch) / median * 1e-12;
}

void add_counting(const std::string& name, DType dtype, std::int64_t batch, std::int64_t n) {
    const auto iterations =
        static_cast<benchmark::IterationCount>(std::clamp(2e10 / static_cast<double>(n * n * n * batch), 10.0, 200.0));
    benchmark::RegisterBenchmark(name.c_str(),
                                 [=](benchmark::State& state) {
                                     if (dtype == DType::F32) run_counting<float>(state, batch, n);
                                     else run_counting<double>(state, batch, n);
                                 })
        ->UseManualTime()
        ->Iterations(iterations)
        ->Unit(benchmark::kMicrosecond);
}

}  // namespace

void add_orand_rows(const Limits& limits) {
    g_limits = &limits;
    // OrAnd (issue 16's target: >= 250 T terms/s at 8192^3 packed on the H200): products of words
    // packed once beforehand; of bytes, packed as they are staged (B row-major, through the
    // transpose; and column-major, along K like A); argmax (sparse inputs: no result is decided
    // early); a batch; and the packing itself (GB/s).
    for (std::int64_t n : {1024, 2048, 4096, 8192}) {
        add_orand(fmt::format("orand/packed/{}", n), {OrAndKind::Packed, false, n, n, n});
        add_orand(fmt::format("orand/bytes/{}", n), {OrAndKind::Bytes, false, n, n, n});
    }
    add_orand("orand/bytes/8192/b_col_major", {OrAndKind::Bytes, false, 8192, 8192, 8192, 1, Layout::ColMajor});
    add_orand("orand/packed_argmax/8192", {OrAndKind::Packed, true, 8192, 8192, 8192});
    add_orand("orand/bytes_argmax/8192", {OrAndKind::Bytes, true, 8192, 8192, 8192});
    add_orand("orand/batched_packed/256x512x512x2048", {OrAndKind::Packed, false, 512, 512, 2048, 256});
    add_orand("orand/batched_bytes/4096x128", {OrAndKind::Bytes, false, 128, 128, 128, 4096});
    add_orand("orand/pack/8192", {OrAndKind::Pack, false, 8192, 8192, 8192});
    add_orand("orand/pack/8192/b_col_major", {OrAndKind::Pack, false, 8192, 8192, 8192, 1, Layout::ColMajor});
}

void add_counting_rows() {
    // CountingTropical: one product (the Tiled and Small kernels) and a batch of small ones.
    for (DType t : {DType::F32, DType::F64}) {
        for (std::int64_t n : {256, 1024, 4096}) add_counting(fmt::format("counting/{}/{}", to_string(t), n), t, 1, n);
        add_counting(fmt::format("counting_batched/{}/4096x128", to_string(t)), t, 4096, 128);
    }
}

}  // namespace tropical::bench
