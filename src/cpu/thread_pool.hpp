#pragma once
// The CPU path's threads: a small pool on std::thread rather than OpenMP. The library is loaded into
// processes that bring their own OpenMP runtime (PyTorch ships one): a second runtime in the same
// process oversubscribes the cores and is known to hang after fork(); a pool of our own depends on
// nothing, takes the thread count per call, and survives fork() (a child starts a fresh pool).
#include <cstdint>
#include <functional>

namespace tropical::cpu {

// The cores this process may run on (its affinity mask), at least 1.
int available_cores();

// Calls body(i) for every i in [0, count), on at most `threads` threads, the calling one included,
// and returns when every call has returned; rethrows the first exception a call threw (the other
// calls still run). Helper threads are created on first need and kept. A call made while another
// caller's work occupies the pool (or from inside a body) runs on the calling thread alone.
void parallel_for(int threads, std::int64_t count, const std::function<void(std::int64_t)>& body);

}  // namespace tropical::cpu
