#pragma once
// Times GPU work with CUDA events on a stream, as RMM's cuda_event_timer does: the clock that
// counts is the GPU's, not the host's.
#include <benchmark/benchmark.h>
#include <cuda.h>

#include <cstdio>
#include <string>
#include <string_view>

#include <tropical/context.hpp>
#include <tropical/error.hpp>
#include "context/scoped_context.hpp"
#include "driver/cuda_driver.hpp"
#include "tests/support/gpu_availability.hpp"

namespace tropical::bench {

class GpuTimer {
public:
    explicit GpuTimer(CUstream stream = nullptr, int device = 0)
        : current_(CudaContext::for_device(device).primary_context()), stream_(stream) {
        TROPICAL_CU(cuEventCreate(&start_, CU_EVENT_DEFAULT));
        TROPICAL_CU(cuEventCreate(&stop_, CU_EVENT_DEFAULT));
    }
    ~GpuTimer() {
        destroyed(detail::driver().cuEventDestroy(start_));
        destroyed(detail::driver().cuEventDestroy(stop_));
    }
    GpuTimer(const GpuTimer&) = delete;
    GpuTimer& operator=(const GpuTimer&) = delete;

    void start() { TROPICAL_CU(cuEventRecord(start_, stream_)); }
    // Seconds since start(), after waiting for the stream to get there.
    double stop() {
        TROPICAL_CU(cuEventRecord(stop_, stream_));
        TROPICAL_CU(cuEventSynchronize(stop_));
        float ms = 0;
        TROPICAL_CU(cuEventElapsedTime(&ms, start_, stop_));
        return ms * 1e-3;
    }

private:
    // A destructor does not throw: a failure is said on stderr (the run's numbers are suspect then),
    // but for a driver already shut down at exit.
    static void destroyed(CUresult rc) {
        if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_DEINITIALIZED)
            std::fprintf(stderr, "GpuTimer: cuEventDestroy failed: CUresult %d\n", static_cast<int>(rc));
    }

    detail::ScopedContext current_;  // events belong to a context: the device's primary one
    CUstream stream_;
    CUevent start_ = nullptr, stop_ = nullptr;
};

// Without a usable GPU, marks the benchmark skipped with the reason and returns false.
inline bool gpu_available(benchmark::State& state) {
    try {
        CudaContext::for_device(0);
        return true;
    } catch (const Error& e) {
        state.SkipWithError(e.what());
        for (auto _ : state) {
        }
        return false;
    }
}

// The end of every suite's main(): runs the benchmarks, or, where no GPU is usable (so that nothing
// here can be measured), says why and returns TROPICAL_SKIP_EXIT_CODE, which CTest reports as a
// skipped test. Listing the benchmarks needs no GPU.
inline int run_or_skip(int& argc, char** argv) {
    bool listing = false;
    for (int i = 1; i < argc; ++i) listing = listing || std::string_view(argv[i]).starts_with("--benchmark_list_tests");
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    if (const std::string why = detail::gpu_unavailable_reason(); !listing && !why.empty()) {
        std::fprintf(stderr, "Skipped: needs a CUDA GPU: %s\n", why.c_str());
        return TROPICAL_SKIP_EXIT_CODE;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

}  // namespace tropical::bench
