#pragma once
// The ways the GPU suites time launches, shared by throughput_bench and workloads_bench: events
// around each launch (median of the benchmark's iterations), and the kernel time of a small
// launch, queued back to back behind a long product so that the GPU never waits for the host.
#include <benchmark/benchmark.h>
#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <tropical/device_buffer.hpp>
#include <tropical/gemm.hpp>
#include "driver/cuda_driver.hpp"
#include "support/gpu_timer.hpp"

namespace tropical::bench {

// Bytes of L2 of device 0 (inputs are rotated through more than that).
inline std::size_t l2_bytes() {
    CUdevice device = 0;
    int bytes = 0;
    TROPICAL_CU(cuDeviceGet(&device, 0));
    TROPICAL_CU(cuDeviceGetAttribute(&bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device));
    return static_cast<std::size_t>(bytes);
}

// The median of `samples` (which it reorders); 0 for none.
inline double median_of(std::vector<double>& samples) {
    if (samples.empty()) return 0;
    const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
    std::nth_element(samples.begin(), middle, samples.end());
    return *middle;
}

// Runs `launch(i)` once untimed (the kernel is compiled or loaded then), then once per benchmark
// iteration between two events; returns the median seconds.
inline double time_launches(benchmark::State& state, const std::function<void(std::size_t)>& launch) {
    launch(0);
    GpuTimer timer;
    std::vector<double> seconds;
    std::size_t i = 1;
    for (auto _ : state) {
        timer.start();
        launch(i++);
        const double s = timer.stop();
        state.SetIterationTime(s);
        seconds.push_back(s);
    }
    return median_of(seconds);
}

// Kernel time per launch on the legacy default stream: a long product first, so that the `reps`
// launches timed after it are all queued before the GPU reaches them and run back to back; events
// around the `reps` launches, so the long product is not counted. Per launch this is the kernel's
// duration plus the gap between two kernels on a stream.
class BackToBack {
public:
    static constexpr int reps = 50;

    BackToBack() : a_(kLongN * kLongN), b_(kLongN * kLongN), c_(kLongN * kLongN) {
        a_.fill_bytes(0);
        b_.fill_bytes(0);
        long_product();
    }
    // Seconds per launch of one measurement; `i` numbers the launches (for rotated inputs).
    double seconds_per_launch(const std::function<void(std::size_t)>& launch, std::size_t& i) {
        long_product();
        timer_.start();
        for (int r = 0; r < reps; ++r) launch(i++);
        return timer_.stop() / reps;
    }

private:
    static constexpr std::int64_t kLongN = 2048;
    void long_product() {
        gemm<MaxPlus>(a_.row_major(kLongN, kLongN), b_.row_major(kLongN, kLongN), c_.row_major(kLongN, kLongN));
    }
    DeviceBuffer<float> a_, b_, c_;
    GpuTimer timer_;
};

// The back-to-back kernel time, median over the benchmark's iterations (each one measurement), and
// in one_launch_us events around a single launch (what a caller waiting for one product sees).
inline double time_back_to_back(benchmark::State& state, const std::function<void(std::size_t)>& launch) {
    BackToBack queue;
    launch(0);
    GpuTimer timer;
    std::vector<double> single;
    for (int i = 0; i < 21; ++i) {
        timer.start();
        launch(static_cast<std::size_t>(i));
        single.push_back(timer.stop());
    }
    state.counters["one_launch_us"] = median_of(single) * 1e6;
    std::vector<double> seconds;
    std::size_t i = 1;
    for (auto _ : state) {
        const double s = queue.seconds_per_launch(launch, i);
        state.SetIterationTime(s);
        seconds.push_back(s);
    }
    return median_of(seconds);
}

}  // namespace tropical::bench
