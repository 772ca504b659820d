#pragma once
// The per-core SIMD ceiling of the CPU kernels, two ways, on the SIMD target the kernels run on: the
// micro-kernel's own term (the ring's Times, then its Pick) in a loop that touches no memory, over
// enough independent accumulators to hide every latency; and the micro-kernel itself on panels that
// stay in L1. A product does all of either's work per term and more, so neither can be beaten by
// one; bench/cpu_bench.cpp takes the faster as the ceiling.
#include <cstdint>

#include <tropical/types.hpp>

namespace tropical::bench {

// Runs `iterations` rounds of the register-only loop of `semiring` on `dtype`; returns the terms done.
// MinPlus costs what MaxPlus does (a min for a max); MaxMul multiplies, which some CPUs do on fewer
// ports than they add.
std::int64_t register_loop_terms(DType dtype, Semiring semiring, std::int64_t iterations);

// Runs the products' micro-kernel (cpu/kernel-inl.h, the tile of this target) `iterations` times
// over one pair of packed panels of 256 terms that stay in L1: everything a product does per term
// but packing, the cache misses of the blocks and writing the tiles to C. Returns the terms done.
std::int64_t micro_kernel_terms(DType dtype, Semiring semiring, std::int64_t iterations);

}  // namespace tropical::bench
