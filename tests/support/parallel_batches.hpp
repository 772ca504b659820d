// Runs fn(n) for every n in [0, count) on the machine's hardware threads: the long-double oracles of
// the GPU tests take minutes on one core for the batches that make the Tiled kernels the choice.
// Each call must touch only what belongs to its own n.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace tropical::testing {

template <class F>
void for_each_batch_in_parallel(std::int64_t count, const F& fn) {
    std::atomic<std::int64_t> next{0};
    auto work = [&] {
        for (std::int64_t n = next++; n < count; n = next++) fn(n);
    };
    const auto threads = std::min<std::int64_t>(count, std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::jthread> pool;
    for (std::int64_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
}

}  // namespace tropical::testing
