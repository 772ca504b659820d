#pragma once
// The CPU product kernels' interface: one task is a rectangle of one product's C, computed by the
// SIMD code of the best target this CPU runs (cpu/product_<type>.cpp, chosen at run time by
// Highway). cpu/host_product.cpp cuts requests into tasks and runs them on the thread pool.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <tropical/types.hpp>

namespace tropical::cpu {

// A matrix in host memory: element (i, j) is at data + i * rs + j * cs (in elements).
struct Strided {
    void* data = nullptr;
    std::int64_t rs = 0, cs = 0;
};

// A kernel's register tile: tasks are best cut at multiples of it.
struct TileShape {
    std::int64_t rows = 1, cols = 1;
};

// Block sizes in elements, from cache budgets: a B micro-panel (KC x NR) of 48 KiB, an A block
// (MC x KC) of 256 KiB (half of a small L2), a B block (KC x NC) of 2 MiB of L3. The B micro-panel
// is meant for L1 but may spill to L2: on the AVX2 machine of bench/RESULTS.md a KC of 512 beat 256
// (which fits L1) by 3 to 5%, since every KC terms a tile goes through C once more.
struct Blocks {
    std::int64_t kc, mc, nc;
};

constexpr Blocks blocks_for(std::size_t element_size, std::int64_t mr, std::int64_t nr) {
    const auto size = static_cast<std::int64_t>(element_size);
    const std::int64_t kc = std::clamp<std::int64_t>((48 << 10) / (nr * size) / 16 * 16, 128, 512);
    const std::int64_t mc = std::max<std::int64_t>((256 << 10) / (kc * size) / mr, 1) * mr;
    const std::int64_t nc = std::max<std::int64_t>((2 << 20) / (kc * size) / nr, 1) * nr;
    return {kc, mc, nc};
}

// All of one product's B packed once, block by block (KC x NC, in the micro-panels of NR columns
// the kernels read), for every band of rows that the threads compute: each band would otherwise
// pack the whole of B again, which cost a band of 128 rows of 2048^3 a fifth of its time
// (bench/RESULTS.md). Column blocks follow each other, and within one its blocks of K; every
// column block but the last is a whole NC wide (a multiple of NR), so a block's place follows from
// its first column and term. After the values, one flag per micro-panel and block: whether it holds
// a value that may make a NaN term.
struct PackedBLayout {
    std::int64_t k = 0, n = 0, nr = 1;
    Blocks blocks{1, 1, 1};

    static constexpr std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }
    std::int64_t k_blocks() const { return (k + blocks.kc - 1) / blocks.kc; }
    std::int64_t count() const { return (n + blocks.nc - 1) / blocks.nc * k_blocks(); }
    std::int64_t width(std::int64_t jc) const { return std::min(blocks.nc, n - jc); }
    std::int64_t values_at(std::int64_t jc, std::int64_t pc) const { return jc * k + pc * round_up(width(jc), nr); }
    std::int64_t flags_at(std::int64_t jc, std::int64_t pc) const {
        return jc / nr * k_blocks() + pc / blocks.kc * ((width(jc) + nr - 1) / nr);
    }
    // Bytes of the values, and in all: each a multiple of 64, so that the flags after the values and
    // the next product's packing after this one keep the kernels' aligned vector loads aligned.
    std::size_t values_bytes(std::size_t element_size) const {
        return static_cast<std::size_t>(round_up(static_cast<std::int64_t>(element_size) * round_up(n, nr) * k, 64));
    }
    std::size_t bytes(std::size_t element_size) const {
        return values_bytes(element_size) + static_cast<std::size_t>(round_up((n + nr - 1) / nr * k_blocks(), 64));
    }
};

struct ProductTask {
    Semiring semiring = Semiring::MaxPlus;
    bool accumulate = false;  // C = C (+) A(x)B
    bool argmax = false;      // idx (int32) gets the argmax
    std::int64_t m = 0, n = 0, k = 0;
    Strided a, b, c, idx;
    // The rectangle of C this task writes: rows [row0, row1), columns [col0, col1).
    std::int64_t row0 = 0, row1 = 0, col0 = 0, col1 = 0;
    // Where set, B packed as PackedBLayout says, shared by the product's tasks (which then span
    // every column): a task with pack_block >= 0 packs that block of it and computes nothing; the
    // others read it and pack only their rows of A.
    void* packed_b = nullptr;
    std::int64_t pack_block = -1;
};

// The kernels of one element type, on this CPU's best target.
using ProductFunction = void (*)(const ProductTask&);
using TileFunction = TileShape (*)(Semiring, bool argmax);

void product_f32(const ProductTask& task);
void product_f64(const ProductTask& task);
void product_i32(const ProductTask& task);
void product_i64(const ProductTask& task);
TileShape tile_f32(Semiring semiring, bool argmax);
TileShape tile_f64(Semiring semiring, bool argmax);
TileShape tile_i32(Semiring semiring, bool argmax);
TileShape tile_i64(Semiring semiring, bool argmax);

inline ProductFunction product_function(DType t) {
    switch (t) {
    case DType::F32: return product_f32;
    case DType::F64: return product_f64;
    case DType::I32: return product_i32;
    case DType::I64: return product_i64;
    case DType::U8: break;  // OrAnd's booleans: cpu/orand.cpp
    case DType::BF16:
    case DType::F16:
    case DType::I16: break;  // no semiring takes them yet (issue 35): validation refuses them first
    }
    return nullptr;
}

inline TileFunction tile_function(DType t) {
    switch (t) {
    case DType::F32: return tile_f32;
    case DType::F64: return tile_f64;
    case DType::I32: return tile_i32;
    case DType::I64: return tile_i64;
    case DType::U8: break;  // OrAnd's booleans: cpu/orand.cpp
    case DType::BF16:
    case DType::F16:
    case DType::I16: break;  // no semiring takes them yet (issue 35): validation refuses them first
    }
    return nullptr;
}

}  // namespace tropical::cpu
