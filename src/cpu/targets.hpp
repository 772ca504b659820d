#pragma once
// Which SIMD target the CPU kernels run on, and (for tests and benchmarks) making them run on another.
#include <cstdint>
#include <vector>

namespace tropical::cpu {

// Opens Highway's run-time library unless it is open (src/cpu/highway_runtime.cpp says why not
// before); throws tropical::Unsupported, saying where it looked, where it cannot. The CPU kernels'
// entry calls it first, on the caller's thread, so that no worker thread meets that error.
void load_highway();

// The target the kernels run on now, as Highway names it ("AVX2").
const char* target_name();

// Highway's name for one target bit.
const char* target_name(std::int64_t target);

// Every target the kernels are compiled for that this CPU can run, best first (Highway's HWY_*
// bits), whatever force_target() chose.
std::vector<std::int64_t> runnable_targets();

// From the next call on, the kernels run on `target` (one of runnable_targets()), or again on the
// best one for 0. Not for use while another thread runs a product.
void force_target(std::int64_t target);

}  // namespace tropical::cpu
