// Products on the CPU: a validated request cut into tasks (rectangles of one product's C) that the
// thread pool hands to the SIMD kernels of cpu/product_<type>.cpp.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>

#include "cpu/host.hpp"
#include "cpu/product.hpp"
#include "cpu/thread_pool.hpp"

namespace tropical::cpu {
namespace {

// A thread is worth waking for this many terms (about 0.1 ms of one core's work).
constexpr double kTermsPerThread = double(1 << 20);

Strided strided(const detail::OperandRef& r) { return {const_cast<void*>(r.data), row_stride(r), col_stride(r)}; }

// How the tasks cover the batch: `pieces` per product, each a band of `tile`-aligned rows (or
// columns) of C.
struct Cut {
    std::int64_t pieces = 1;
    bool by_rows = true;
    std::int64_t tile = 1, tiles = 1;  // the band unit, and how many of them the cut dimension holds
};

// Enough pieces that every thread gets the same number of tasks; a band of columns repeats the
// packing of A, one of rows that of B, so the cut goes through the longer side of C.
Cut cut_for(std::int64_t count, std::int64_t m, std::int64_t n, TileShape tile, int threads) {
    Cut cut;
    if (threads <= 1 || count >= 4 * threads) return cut;
    cut.pieces = threads / std::gcd<std::int64_t>(count, threads);
    const std::int64_t row_tiles = (m + tile.rows - 1) / tile.rows, col_tiles = (n + tile.cols - 1) / tile.cols;
    cut.by_rows = m >= n;
    // Unless the longer side has too few tiles for the pieces and the other has more.
    const std::int64_t along = cut.by_rows ? row_tiles : col_tiles, across = cut.by_rows ? col_tiles : row_tiles;
    if (along < cut.pieces && across > along) cut.by_rows = !cut.by_rows;
    cut.tile = cut.by_rows ? tile.rows : tile.cols;
    cut.tiles = cut.by_rows ? row_tiles : col_tiles;
    cut.pieces = std::min(cut.pieces, cut.tiles);
    return cut;
}

}  // namespace

void run_product(const detail::Request& q, const detail::Shape& s, int threads) {
    if (q.batch == 0 || s.empty()) return;
    const bool argmax = q.operation == detail::Operation::GemmArgmax;
    ProductTask base;
    base.semiring = q.semiring;
    base.accumulate = q.options.accumulate;
    base.argmax = argmax;
    base.m = s.m, base.n = s.n, base.k = s.k;
    base.a = strided(q.a), base.b = strided(q.b), base.c = strided(q.c);
    if (argmax) base.idx = strided(q.argmax);
    std::int64_t batch_a = q.a.batch_stride, batch_b = q.b.batch_stride;
    // The kernels store rows of C as vectors: a column-major C is computed as its transpose,
    // C^T = B^T (x) A^T (both (x) of the semirings commute, and argmax's k is the same).
    if (base.c.cs != 1 && base.c.rs == 1) {
        std::swap(base.a, base.b);
        std::swap(base.a.rs, base.a.cs);
        std::swap(base.b.rs, base.b.cs);
        std::swap(base.c.rs, base.c.cs);
        std::swap(base.idx.rs, base.idx.cs);
        std::swap(base.m, base.n);
        std::swap(batch_a, batch_b);
    }
    base.row1 = base.m, base.col1 = base.n;

    const std::size_t size = size_of(q.dtype);
    const ProductFunction kernel = product_function(q.dtype);
    const double terms = double(q.batch) * double(s.m) * double(s.n) * double(std::max<std::int64_t>(s.k, 1));
    const int used = threads_for(terms, kTermsPerThread, threads);
    const Cut cut = cut_for(q.batch, base.m, base.n, tile_function(q.dtype)(q.semiring, argmax), used);
    const auto at = [](const Strided& x, std::int64_t batch_stride, std::int64_t index, std::size_t bytes) {
        Strided moved = x;
        moved.data = static_cast<char*>(x.data) + index * batch_stride * static_cast<std::int64_t>(bytes);
        return moved;
    };
    parallel_for(used, q.batch * cut.pieces, [&](std::int64_t task) {
        const std::int64_t product = task / cut.pieces, piece = task % cut.pieces;
        ProductTask t = base;
        t.a = at(base.a, batch_a, product, size);
        t.b = at(base.b, batch_b, product, size);
        t.c = at(base.c, q.c.batch_stride, product, size);
        if (argmax) t.idx = at(base.idx, q.argmax.batch_stride, product, sizeof(std::int32_t));
        if (cut.pieces > 1) {
            const std::int64_t first = cut.tiles * piece / cut.pieces * cut.tile;
            const std::int64_t last =
                std::min(cut.tiles * (piece + 1) / cut.pieces * cut.tile, cut.by_rows ? t.m : t.n);
            (cut.by_rows ? t.row0 : t.col0) = first;
            (cut.by_rows ? t.row1 : t.col1) = last;
        }
        kernel(t);
    });
}

}  // namespace tropical::cpu
