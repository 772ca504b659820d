#include "cpu/workspace.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>

namespace tropical::cpu {
namespace {

// 64 bytes: a cache line, and the widest vector (AVX-512), so that packed panels load aligned.
constexpr std::size_t kAlignment = 64;

struct FreeAligned {
    void operator()(void* p) const noexcept { std::free(p); }
};

struct Buffer {
    std::unique_ptr<void, FreeAligned> memory;
    std::size_t size = 0;
};

thread_local Buffer t_buffers[3];

}  // namespace

void* scratch(Scratch which, std::size_t bytes) {
    Buffer& b = t_buffers[static_cast<int>(which)];
    if (bytes > b.size) {
        // Grow by half again at least, so that a slowly growing sequence of calls reallocates rarely.
        const std::size_t wanted = std::max(bytes, b.size + b.size / 2);
        const std::size_t rounded = (wanted + kAlignment - 1) / kAlignment * kAlignment;
        b.memory.reset();  // free first: the old contents are not needed
        b.size = 0;
        void* p = std::aligned_alloc(kAlignment, rounded);
        if (!p) throw std::bad_alloc();
        b.memory.reset(p);
        b.size = rounded;
    }
    return b.memory.get();
}

}  // namespace tropical::cpu
