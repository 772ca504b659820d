#pragma once
// The CPU product kernels' interface: one task is a rectangle of one product's C, computed by the
// SIMD code of the best target this CPU runs (cpu/product_<type>.cpp, chosen at run time by
// Highway). cpu/host_product.cpp cuts requests into tasks and runs them on the thread pool.
#include <cstdint>

#include <tropical/types.hpp>

namespace tropical::cpu {

// A matrix in host memory: element (i, j) is at data + i * rs + j * cs (in elements).
struct Strided {
    void* data = nullptr;
    std::int64_t rs = 0, cs = 0;
};

struct ProductTask {
    Semiring semiring = Semiring::MaxPlus;
    bool accumulate = false;  // C = C (+) A(x)B
    bool argmax = false;      // idx (int32) gets the argmax
    std::int64_t m = 0, n = 0, k = 0;
    Strided a, b, c, idx;
    // The rectangle of C this task writes: rows [row0, row1), columns [col0, col1).
    std::int64_t row0 = 0, row1 = 0, col0 = 0, col1 = 0;
};

// A kernel's register tile: tasks are best cut at multiples of it.
struct TileShape {
    std::int64_t rows = 1, cols = 1;
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
    }
    return nullptr;
}

}  // namespace tropical::cpu
