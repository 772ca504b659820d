#pragma once
// The device code of kernels/ compiled as host C++ and run on the CPU, one block at a time, each of
// its threads a fiber (ucontext) that switches at the barriers and warp shuffles: a check of the
// kernels' indexing, staging, edges and barriers on machines without a GPU (CI has none). It runs
// the code as the CUDA programming model states it (every thread of a block to each barrier, every
// lane of a warp to each shuffle) but not the hardware: no memory model, no timing. Alignment of
// the vector loads is checked by UBSan where the tests run under it (a misaligned uint4 faults on a
// GPU). Under ASan the fiber switches are annotated (__sanitizer_start_switch_fiber); ASan still
// prints its one warning that it does not fully support swapcontext.
//
// Tests include support/emulated_device_code.hpp, which includes this header and then the device pieces;
// launch an entry with tg_emu::launch(grid, block_threads, [&] { tg::pack(params); }).
#include <ucontext.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <tropical/float16.hpp>

#if defined(__SANITIZE_ADDRESS__)
#define TG_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TG_EMU_ASAN 1
#endif
#endif
#ifdef TG_EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

// --- what CUDA C++ gives device code -----------------------------------------------------------

#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __shared__ static
// Dynamic shared memory (`extern __shared__`, which the kernels spell TG_DYNAMIC_SHARED): declared,
// never defined, as no kernel the emulation runs takes any.
#define TG_DYNAMIC_SHARED extern
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

struct alignas(16) uint4 {
    unsigned x, y, z, w;
};
struct alignas(8) uint2 {
    unsigned x, y;
};
struct alignas(8) int2 {
    int x, y;
};
struct alignas(16) int4 {
    int x, y, z, w;
};
inline int2 make_int2(int x, int y) { return {x, y}; }

namespace tg_emu {

struct Index {
    unsigned x = 0, y = 0, z = 0;
};

// One emulated thread.
struct Fiber {
    ucontext_t context{};
    char* stack = nullptr;  // kStackBytes, kept from block to block (stack_for)
    Index thread;
    bool done = false;
    int waiting = 0;  // 0: runnable; 1: at the block barrier; 2: at its warp's barrier
};

inline constexpr std::size_t kStackBytes = 256 * 1024;

// The stack of thread t, allocated once and reused by every block after.
inline char* stack_for(std::size_t t) {
    static std::vector<std::unique_ptr<char[]>> stacks;
    while (stacks.size() <= t) stacks.emplace_back(new char[kStackBytes]);
    return stacks[t].get();
}

struct Block {
    Index block, grid, dim;
    std::vector<Fiber> fibers;
    std::size_t current = 0;
    ucontext_t scheduler{};
    std::function<void()> body;
    // The block barrier: arrivals, and the AND / OR of their values; the result of the last one.
    int arrived = 0, all = 1, any = 0, result_all = 1, result_any = 0;
    // Warp barriers and the shuffle slots.
    std::vector<int> warp_arrived;
    std::vector<unsigned long long> slots;
    // ASan: the scheduler's own stack, for the fiber-switch annotations.
    const void* main_bottom = nullptr;
    std::size_t main_size = 0;
};

inline Block*& current_block() {
    static Block* block = nullptr;
    return block;
}
inline Fiber& me() { return current_block()->fibers[current_block()->current]; }

inline void to_scheduler() {
    Block& b = *current_block();
#ifdef TG_EMU_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, b.main_bottom, b.main_size);
#endif
    swapcontext(&b.fibers[b.current].context, &b.scheduler);
#ifdef TG_EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

inline void fiber_main() {
#ifdef TG_EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &current_block()->main_bottom, &current_block()->main_size);
#endif
    current_block()->body();
    me().done = true;
    Block& b = *current_block();
#ifdef TG_EMU_ASAN
    __sanitizer_start_switch_fiber(nullptr, b.main_bottom, b.main_size);
#endif
    setcontext(&b.scheduler);
}

// All threads of the block to the barrier; returns after every one of them has arrived.
inline void block_barrier(int value) {
    Block& b = *current_block();
    ++b.arrived;
    b.all = b.all && value;
    b.any = b.any || value;
    me().waiting = 1;
    to_scheduler();
}

// All 32 lanes of this thread's warp to the barrier.
inline void warp_barrier() {
    Block& b = *current_block();
    ++b.warp_arrived[me().thread.x / 32];
    me().waiting = 2;
    to_scheduler();
}

inline unsigned lane() { return me().thread.x % 32; }

// Runs `body` as every thread of one block; throws on a deadlock (threads waiting at different
// barriers, or a barrier that some threads never reach).
inline void run_block(Block& b) {
    current_block() = &b;
    const auto n = static_cast<std::size_t>(b.dim.x);
    if (n % 32 != 0) throw std::logic_error("emulated blocks are whole warps");
    b.fibers.resize(n);
    b.warp_arrived.assign(n / 32, 0);
    b.slots.assign(n, 0);
    for (std::size_t t = 0; t < n; ++t) {
        Fiber& f = b.fibers[t];
        f.stack = stack_for(t);
        f.thread.x = static_cast<unsigned>(t);
        getcontext(&f.context);
        f.context.uc_stack.ss_sp = f.stack;
        f.context.uc_stack.ss_size = kStackBytes;
        f.context.uc_link = nullptr;
        makecontext(&f.context, fiber_main, 0);
    }
    for (;;) {
        bool ran = false, live = false;
        for (std::size_t t = 0; t < n; ++t) {
            Fiber& f = b.fibers[t];
            if (f.done) continue;
            live = true;
            if (f.waiting != 0) continue;
            b.current = t;
            ran = true;
#ifdef TG_EMU_ASAN
            void* fake = nullptr;
            __sanitizer_start_switch_fiber(&fake, f.stack, kStackBytes);
#endif
            swapcontext(&b.scheduler, &f.context);
#ifdef TG_EMU_ASAN
            __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
        }
        if (!live) break;
        bool released = false;
        std::size_t alive = 0;
        for (const Fiber& f : b.fibers) alive += f.done ? 0 : 1;
        if (b.arrived > 0 && static_cast<std::size_t>(b.arrived) == alive) {
            b.result_all = b.all, b.result_any = b.any;
            b.arrived = 0, b.all = 1, b.any = 0;
            for (Fiber& f : b.fibers) f.waiting = 0;
            released = true;
        }
        for (std::size_t w = 0; w < n / 32; ++w) {
            if (b.warp_arrived[w] == 32) {
                b.warp_arrived[w] = 0;
                for (std::size_t t = w * 32; t < w * 32 + 32; ++t) b.fibers[t].waiting = 0;
                released = true;
            }
        }
        if (!ran && !released) throw std::logic_error("emulated block deadlocked: threads wait at different barriers");
    }
    current_block() = nullptr;
}

// Runs a kernel's body on a grid of blocks of `threads` threads (1-D blocks, as every kernel here).
inline void launch(Index grid, unsigned threads, const std::function<void()>& body) {
    for (unsigned z = 0; z < grid.z; ++z)
        for (unsigned y = 0; y < grid.y; ++y)
            for (unsigned x = 0; x < grid.x; ++x) {
                Block b;
                b.block = {x, y, z};
                b.grid = grid;
                b.dim = {threads, 1, 1};
                b.body = body;
                run_block(b);
            }
}

}  // namespace tg_emu

#define threadIdx (::tg_emu::me().thread)
#define blockIdx (::tg_emu::current_block()->block)
#define blockDim (::tg_emu::current_block()->dim)
#define gridDim (::tg_emu::current_block()->grid)

inline void __syncthreads() { tg_emu::block_barrier(1); }
inline int __syncthreads_and(int p) {
    tg_emu::block_barrier(p);
    return tg_emu::current_block()->result_all;
}
inline int __syncthreads_or(int p) {
    tg_emu::block_barrier(p);
    return tg_emu::current_block()->result_any;
}

template <class T>
T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int = 32) {
    static_assert(sizeof(T) <= 8);
    if (mask != 0xffffffffu) throw std::logic_error("the emulation shuffles whole warps only");
    auto& b = *tg_emu::current_block();
    const unsigned t = threadIdx.x, base = t - t % 32;
    unsigned long long slot = 0;
    std::memcpy(&slot, &value, sizeof(T));
    b.slots[t] = slot;
    tg_emu::warp_barrier();  // every lane has written
    slot = b.slots[base + ((t % 32) ^ static_cast<unsigned>(lane_mask))];
    tg_emu::warp_barrier();  // every lane has read
    T out;
    std::memcpy(&out, &slot, sizeof(T));
    return out;
}

// Whether pred holds in any lane of the warp (every lane must vote, as __shfl_xor_sync's).
inline int __any_sync(unsigned mask, int pred) {
    if (mask != 0xffffffffu) throw std::logic_error("the emulation votes over whole warps only");
    auto& b = *tg_emu::current_block();
    const unsigned t = threadIdx.x, base = t - t % 32;
    b.slots[t] = pred != 0 ? 1 : 0;
    tg_emu::warp_barrier();  // every lane has voted
    int any = 0;
    for (unsigned l = 0; l < 32; ++l) any |= b.slots[base + l] != 0 ? 1 : 0;
    tg_emu::warp_barrier();  // every lane has read
    return any;
}

inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned>(x)) + 1; }
inline int __ffsll(long long x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned long long>(x)) + 1; }
inline int __popc(unsigned x) { return std::popcount(x); }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    const unsigned long long both = (static_cast<unsigned long long>(y) << 32) | x;
    unsigned out = 0;
    for (int n = 0; n < 4; ++n) out |= static_cast<unsigned>((both >> (8 * ((s >> (4 * n)) & 7))) & 0xff) << (8 * n);
    return out;
}
inline float __int_as_float(int x) { return std::bit_cast<float>(x); }
// The 16-bit floats' conversions that kernels/packed16.cuh makes with cvt on the GPU: the host types'
// (exact widening; rounding to nearest even).
namespace tg_emu {
inline float f16_to_float(unsigned short b) { return tropical::float16::from_bits(b); }
inline unsigned short f16_from_float(float f) { return tropical::float16(f).bits(); }
inline unsigned short bf16_from_float(float f) { return tropical::bfloat16(f).bits(); }
}  // namespace tg_emu
inline int __float_as_int(float x) { return std::bit_cast<int>(x); }
inline double __longlong_as_double(long long x) { return std::bit_cast<double>(x); }
inline long long __double_as_longlong(double x) { return std::bit_cast<long long>(x); }
inline int __viaddmax_s32(int a, int b, int c) { return std::max(a + b, c); }
inline int __viaddmin_s32(int a, int b, int c) { return std::min(a + b, c); }
// CUDA's integer min, which device code calls unqualified.
inline int min(int a, int b) { return std::min(a, b); }
inline long long min(long long a, long long b) { return std::min(a, b); }
// The kernels run here one thread at a time, so the atomics need no atomicity.
inline int atomicMax(int* p, int v) {
    const int old = *p;
    *p = std::max(old, v);
    return old;
}
inline int atomicMin(int* p, int v) {
    const int old = *p;
    *p = std::min(old, v);
    return old;
}
inline unsigned atomicMax(unsigned* p, unsigned v) {
    const unsigned old = *p;
    *p = std::max(old, v);
    return old;
}
inline unsigned atomicMin(unsigned* p, unsigned v) {
    const unsigned old = *p;
    *p = std::min(old, v);
    return old;
}
template <class T>
T atomicAdd(T* p, T v) {
    const T old = *p;
    *p = old + v;
    return old;
}
inline int atomicExch(int* p, int v) {
    const int old = *p;
    *p = v;
    return old;
}
// One block runs at a time and its threads in turn: memory is always coherent, and a lock another
// block holds cannot be met (the Serial kernels' merge_serial), so there is nothing to wait for.
inline void __threadfence() {}
inline void __nanosleep(unsigned) {}
template <class T>
T __ldcg(const T* p) {
    return *p;
}
// The math library's overloads for float, as CUDA's device code has them (the C library's are double).
using std::exp;
using std::exp2;
using std::fabs;
using std::floor;
using std::fma;
using std::log1p;
using std::log2;
