#pragma once
// Scratch memory for the packed panels of the CPU kernels: per thread, kept from call to call, so
// that a product allocates only when a thread first needs more than it has held so far.
#include <cstddef>

namespace tropical::cpu {

// PackedA and PackedB: a task's blocks; SharedB: a product's whole B, packed by the calling thread's
// tasks for all of them (cpu/host_product.cpp).
enum class Scratch { PackedA, PackedB, SharedB };

// `bytes` of 64-byte-aligned memory owned by the calling thread, valid until the same thread asks
// for the same scratch again. Throws std::bad_alloc when memory runs out.
void* scratch(Scratch which, std::size_t bytes);

}  // namespace tropical::cpu
