// Load: 16 threads make 10,000 calls each over 16 non-blocking streams (call i of thread t goes to
// stream (t + i) % 16, so every stream takes calls from every thread), with random types, semirings,
// operations, shapes, layouts and batches. Every result is checked against the CPU reference. Device
// and host memory are measured after every thread's first 1,000 calls, halfway and after the last
// call, with nothing in flight: they must not grow.
//
// TROPICAL_LOAD_CALLS=<n> changes the calls per thread (e.g. fewer under compute-sanitizer).
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <malloc.h>
#include <unistd.h>

#include <cuda.h>

#include <tropical/context.hpp>
#include <tropical/gemm.hpp>
#include "context/scoped_context.hpp"
#include "driver/cuda_driver.hpp"
#include "support/gemm_test_util.hpp"
#include "support/gpu.hpp"

using namespace tropical;
using namespace tropical::testing;
using tropical::detail::ScopedContext;

namespace {

constexpr int kThreads = 16;
constexpr int kStreams = 16;
constexpr int kWarmCalls = 1000;  // memory is first measured after this many calls per thread

int calls_per_thread() {
    if (const char* s = std::getenv("TROPICAL_LOAD_CALLS"); s && *s) return std::max(1, std::atoi(s));
    return 10000;
}

CUcontext primary() { return CudaContext::for_device(0).primary_context(); }

struct MemorySample {
    std::size_t device_free = 0;
    std::size_t host_resident = 0;
};

MemorySample measure_memory() {
    MemorySample m;
    ScopedContext current(primary());
    std::size_t total = 0;
    TROPICAL_CU(cuMemGetInfo(&m.device_free, &total));
    std::ifstream statm("/proc/self/statm");
    std::size_t pages = 0, resident = 0;
    statm >> pages >> resident;
    m.host_resident = resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return m;
}

// A host matrix's device mirror whose copies and fills are queued on one stream.
template <class T>
class StreamMatrix {
public:
    StreamMatrix(const HostMatrix<T>& host, CUstream stream)
        : meta_(host), buffer_(host.storage.size()), stream_(stream) {
        if (!host.storage.empty())
            TROPICAL_CU(cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(buffer_.data()), host.storage.data(),
                                          host.storage.size() * sizeof(T), stream_));
        meta_.storage.clear();
    }
    void poison(unsigned char byte) {
        if (buffer_.size())
            TROPICAL_CU(cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(buffer_.data()), byte, buffer_.size() * sizeof(T),
                                        stream_));
    }
    MatrixView<T> view() const { return {buffer_.data(), meta_.rows, meta_.cols, meta_.ld, meta_.layout}; }
    BatchedView<T> batched() const { return {view(), meta_.batch_stride}; }
    // Waits for the stream, then returns the device's bytes.
    HostMatrix<T> download() const {
        HostMatrix<T> out = meta_;
        out.storage.resize(buffer_.size());
        if (buffer_.size())
            TROPICAL_CU(cuMemcpyDtoHAsync(out.storage.data(), reinterpret_cast<CUdeviceptr>(buffer_.data()),
                                          buffer_.size() * sizeof(T), stream_));
        TROPICAL_CU(cuStreamSynchronize(stream_));
        return out;
    }

private:
    HostMatrix<T> meta_;
    DeviceBuffer<T> buffer_;
    CUstream stream_;
};

enum class Kind { Gemm, Argmax, Batched, BatchedArgmax, BackwardA, BackwardB };

const char* name_of(Kind k) {
    switch (k) {
    case Kind::Gemm: return "gemm";
    case Kind::Argmax: return "gemm_with_argmax";
    case Kind::Batched: return "gemm_batched";
    case Kind::BatchedArgmax: return "gemm_batched_with_argmax";
    case Kind::BackwardA: return "gemm_backward_a";
    case Kind::BackwardB: return "gemm_backward_b";
    }
    return "?";
}

Geometry random_geometry(Rng& rng, std::int64_t count, bool may_broadcast) {
    Geometry g;
    g.layout = rng.chance(0.5) ? Layout::RowMajor : Layout::ColMajor;
    g.pad = rng.integer(0, 2);
    g.count = count;
    g.gap = count > 1 ? rng.integer(0, 3) : 0;
    g.broadcast = may_broadcast && count > 1 && rng.chance(0.25);
    return g;
}

std::int64_t random_dim(Rng& rng) { return rng.chance(0.05) ? rng.integer(1, 160) : rng.integer(1, 48); }

// One random call of `kind` on `stream`, checked; the failure's description, or empty.
template <class S, class T>
std::string one_call(Rng& rng, Kind kind, CUstream stream) {
    constexpr Semiring ring = S::value;
    const Shape s{random_dim(rng), random_dim(rng), rng.chance(0.02) ? 0 : random_dim(rng)};
    const bool batched = kind == Kind::Batched || kind == Kind::BatchedArgmax;
    const bool backward = kind == Kind::BackwardA || kind == Kind::BackwardB;
    const std::int64_t count = batched || (backward && rng.chance(0.3)) ? rng.integer(1, 4) : 1;
    const bool use_batched_api = count > 1 || batched;
    const std::string where = std::string(name_of(kind)) + " " + std::string(to_string(dtype_of<T>())) + " " +
                              std::string(to_string(ring)) + " " + describe(s) + " count " + std::to_string(count);
    const GemmOptions options{stream, false};

    if (backward) {
        if constexpr (std::is_floating_point_v<T>) {
            const bool for_a = kind == Kind::BackwardA;
            const Geometry gc = random_geometry(rng, count, false), gm = random_geometry(rng, count, false);
            const Geometry go = random_geometry(rng, count, true), gg = random_geometry(rng, count, false);
            const auto grad_c = random_gradient<T>(rng, s.m, s.n, gc);
            const auto argmax = random_argmax(rng, s.m, s.n, s.k, gm, rng.chance(0.2));
            const auto a = random_matrix<T>(rng, ring, Values::Typical, s.m, s.k, go);
            const auto b = random_matrix<T>(rng, ring, Values::Typical, s.k, s.n, random_geometry(rng, count, true));
            auto grad = for_a ? make_matrix<T>(s.m, s.k, gg) : make_matrix<T>(s.k, s.n, gg);
            const bool accumulate = rng.chance(0.3);
            if (accumulate) grad.fill([&] { return static_cast<T>(rng.real(-10.0, 10.0)); });
            StreamMatrix<T> dgc(grad_c, stream), da(a, stream), db(b, stream), dgrad(grad, stream);
            StreamMatrix<std::int32_t> dm(argmax, stream);
            if (!accumulate) dgrad.poison(grad.poison);
            const GemmOptions with{stream, accumulate};
            if (for_a) {
                if (use_batched_api)
                    gemm_batched_backward_a<S>(dgc.batched(), dm.batched(), da.batched(), db.batched(), dgrad.batched(),
                                               count, with);
                else gemm_backward_a<S>(dgc.view(), dm.view(), da.view(), db.view(), dgrad.view(), with);
            } else {
                if (use_batched_api)
                    gemm_batched_backward_b<S>(dgc.batched(), dm.batched(), da.batched(), db.batched(), dgrad.batched(),
                                               count, with);
                else gemm_backward_b<S>(dgc.view(), dm.view(), da.view(), db.view(), dgrad.view(), with);
            }
            const auto [expected, scale] = reference_backward<T>(ring, for_a, grad_c, argmax, a, b, grad, accumulate);
            if (auto r = close("grad", expected, dgrad.download(), scale, backward_rtol<T>()); !r)
                return where + (accumulate ? " accumulate: " : ": ") + r.message();
        }
        return {};
    }

    const Values values = rng.chance(0.2) ? Values::Ties : Values::Typical;
    const auto a = random_matrix<T>(rng, ring, values, s.m, s.k, random_geometry(rng, count, true));
    const auto b = random_matrix<T>(rng, ring, values, s.k, s.n, random_geometry(rng, count, true));
    auto c = make_matrix<T>(s.m, s.n, random_geometry(rng, count, false));
    StreamMatrix<T> da(a, stream), db(b, stream);

    if (kind == Kind::Argmax || kind == Kind::BatchedArgmax) {
        auto argmax = make_matrix<std::int32_t>(s.m, s.n, random_geometry(rng, count, false));
        StreamMatrix<T> dc(c, stream);
        StreamMatrix<std::int32_t> dm(argmax, stream);
        dc.poison(c.poison);
        dm.poison(argmax.poison);
        if (use_batched_api)
            gemm_batched_with_argmax<S>(da.batched(), db.batched(), dc.batched(), dm.batched(), count, options);
        else gemm_with_argmax<S>(da.view(), db.view(), dc.view(), dm.view(), options);
        const auto [expected_c, expected_m] = reference_gemm_argmax<T>(ring, a, b, c, argmax);
        if (auto r = exactly_equal("C", expected_c, dc.download()); !r) return where + ": " + r.message();
        if (auto r = exactly_equal("argmax", expected_m, dm.download()); !r) return where + ": " + r.message();
        return {};
    }

    const bool accumulate = rng.chance(0.25);
    if (accumulate) c.fill([&] { return random_value<T>(rng, ring, Values::Typical); });
    StreamMatrix<T> dc(c, stream);
    if (!accumulate) dc.poison(c.poison);
    const GemmOptions with{stream, accumulate};
    if (use_batched_api) gemm_batched<S>(da.batched(), db.batched(), dc.batched(), count, with);
    else gemm<S>(da.view(), db.view(), dc.view(), with);
    if (auto r = exactly_equal("C", reference_gemm<T>(ring, a, b, c, accumulate), dc.download()); !r)
        return where + (accumulate ? " accumulate: " : ": ") + r.message();
    return {};
}

template <class S>
std::string one_call_of_type(Rng& rng, Kind kind, CUstream stream) {
    switch (rng.integer(0, 3)) {
    case 0: return one_call<S, float>(rng, kind, stream);
    case 1: return one_call<S, double>(rng, kind, stream);
    case 2: return one_call<S, std::int32_t>(rng, kind, stream);
    default: return one_call<S, std::int64_t>(rng, kind, stream);
    }
}

std::string random_call(Rng& rng, CUstream stream) {
    const double u = rng.real(0.0, 1.0);
    const Kind kind = u < 0.35  ? Kind::Gemm
                      : u < 0.5 ? Kind::Argmax
                      : u < 0.7 ? Kind::Batched
                      : u < 0.8 ? Kind::BatchedArgmax
                      : u < 0.9 ? Kind::BackwardA
                                : Kind::BackwardB;
    switch (rng.integer(0, 2)) {
    case 0: return one_call_of_type<MaxPlus>(rng, kind, stream);
    case 1: return one_call_of_type<MinPlus>(rng, kind, stream);
    default: return one_call_of_type<MaxMul>(rng, kind, stream);
    }
}

TEST(LoadGpu, SixteenThreadsOnSixteenStreamsWithFlatMemory) {
    TROPICAL_REQUIRE_GPU();
    const std::uint64_t seed = test_seed();
    SCOPED_TRACE(seed_message(seed) + " (thread t draws from seed + t)");
    const int calls = calls_per_thread();
    const int warm = std::min(kWarmCalls, calls);

    std::vector<CUstream> streams(kStreams, nullptr);
    {
        ScopedContext current(primary());
        for (auto& s : streams) TROPICAL_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    }

    // Measured at three points with nothing in flight: after the warm-up, halfway, at the end. A leak
    // grows both halves alike; the allocator's arenas settle early.
    const int halfway = warm + (calls - warm) / 2;
    // One malloc arena for all threads: with an arena per thread, resident memory kept growing for a
    // while without any leak (+13 MB over a clean run on the H200, +0 with one arena), which would
    // hide a small leak behind a loose bound.
    mallopt(M_ARENA_MAX, 1);
    MemorySample after_warm, at_half, at_end;
    std::barrier warmed(kThreads, [&]() noexcept { after_warm = measure_memory(); });
    std::barrier halved(kThreads, [&]() noexcept { at_half = measure_memory(); });
    std::mutex failures_mutex;
    std::vector<std::string> failures;
    std::int64_t failed_calls = 0;

    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            ScopedContext current(primary());
            Rng rng(seed + static_cast<std::uint64_t>(t));
            for (int i = 0; i < calls; ++i) {
                if (i == warm) warmed.arrive_and_wait();
                if (i == halfway) halved.arrive_and_wait();
                std::string failure;
                try {
                    failure = random_call(rng, streams[static_cast<std::size_t>((t + i) % kStreams)]);
                } catch (const std::exception& e) {
                    failure = std::string("threw: ") + e.what();
                }
                if (failure.empty()) continue;
                std::lock_guard lock(failures_mutex);
                if (failures.size() < 5)
                    failures.push_back("thread " + std::to_string(t) + " call " + std::to_string(i) + ": " + failure);
                ++failed_calls;
            }
            if (warm == calls) warmed.arrive_and_wait();
            if (halfway == calls) halved.arrive_and_wait();
        });
    }
    for (auto& th : threads) th.join();
    at_end = measure_memory();
    {
        ScopedContext current(primary());
        for (CUstream s : streams) tropical::detail::driver().cuStreamDestroy(s);
    }

    EXPECT_EQ(failed_calls, 0) << "of " << std::int64_t{kThreads} * calls << " calls";
    for (const auto& f : failures) ADD_FAILURE() << f;

    const double device_growth = static_cast<double>(after_warm.device_free) - static_cast<double>(at_end.device_free);
    const double host_growth =
        static_cast<double>(at_end.host_resident) - static_cast<double>(after_warm.host_resident);
    const double first_half =
        static_cast<double>(at_half.host_resident) - static_cast<double>(after_warm.host_resident);
    const double second_half = static_cast<double>(at_end.host_resident) - static_cast<double>(at_half.host_resident);
    std::printf(
        "load: %d threads x %d calls on %d streams; device memory free after %d, %d and %d calls each: %zu, %zu, "
        "%zu (grew by %.0f bytes); host resident: %zu, %zu, %zu (grew by %.0f bytes)\n",
        kThreads, calls, kStreams, warm, halfway, calls, after_warm.device_free, at_half.device_free,
        at_end.device_free, device_growth, after_warm.host_resident, at_half.host_resident, at_end.host_resident,
        host_growth);
    RecordProperty("device_growth_bytes", std::to_string(device_growth));
    RecordProperty("host_growth_bytes", std::to_string(host_growth));
    // Device memory: nothing the calls allocate may stay behind (the driver's own pools are sized by
    // the first calls). Host: a leak grows both halves alike, while the allocator and the driver
    // settle in one of them now and then (on the H200 once +4.3 MB in the first half next to +0.3 MB
    // in the second; other runs +1.9 / +0.4 MB), so the smaller half bounds the leak: 30 bytes per
    // call over the 72,000 calls of a half would exceed 2 MiB.
    EXPECT_LE(device_growth, 2.0 * 1024 * 1024);
    EXPECT_LE(std::min(first_half, second_half), 2.0 * 1024 * 1024)
        << "host memory grew in both halves: " << first_half << " and " << second_half << " bytes";
}

}  // namespace
