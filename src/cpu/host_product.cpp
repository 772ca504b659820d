// Products on the CPU: a validated request cut into tasks (rectangles of one product's C) that the
// thread pool hands to the SIMD kernels of cpu/product_<type>.cpp.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include <tropical/error.hpp>

#include "cpu/host.hpp"
#include "cpu/product.hpp"
#include "cpu/thread_pool.hpp"
#include "cpu/workspace.hpp"

namespace tropical::cpu {
namespace {

// A thread is worth waking for this many terms (about 0.1 ms of one core's work); for LogPlus,
// whose every term costs a 2^x, for fewer.
constexpr double kTermsPerThread = double(1 << 20);
constexpr double kLogTermsPerThread = double(1 << 16);

Strided strided(const detail::OperandRef& r) { return {const_cast<void*>(r.data), row_stride(r), col_stride(r)}; }

// A thread takes this many bands of a product that is cut, so that a faster thread can take the
// bands of a slower one (a core shared with other work) instead of waiting for it.
constexpr std::int64_t kBandsPerThread = 4;

// The most scratch that B packed once for all bands may take (PackedBLayout); beyond it each band
// packs its own blocks of B, and a thread takes one band.
constexpr std::size_t kSharedBBytes = std::size_t{256} << 20;

// How the tasks cover the batch: `bands` per product, each of `tile`-aligned rows (or columns) of C.
struct Cut {
    std::int64_t bands = 1;
    bool by_rows = true;
    std::int64_t tile = 1, tiles = 1;  // the band unit, and how many of them the cut dimension holds
};

// Products are not cut where there are enough of them for every thread to take several. Else into
// bands of rows, `per_thread` for every thread (or as many as the tiles allow), unless C has too
// few rows of tiles for them and more columns: then into bands of columns, each of which packs the
// rows of A again (few of them, there).
Cut cut_for(std::int64_t count, std::int64_t m, std::int64_t n, TileShape tile, int threads, std::int64_t per_thread) {
    Cut cut;
    if (threads <= 1 || count >= 4 * threads) return cut;
    const std::int64_t wanted = per_thread * threads / std::gcd<std::int64_t>(count, threads);
    const std::int64_t row_tiles = (m + tile.rows - 1) / tile.rows, col_tiles = (n + tile.cols - 1) / tile.cols;
    cut.by_rows = row_tiles >= wanted || row_tiles >= col_tiles;
    cut.tile = cut.by_rows ? tile.rows : tile.cols;
    cut.tiles = cut.by_rows ? row_tiles : col_tiles;
    cut.bands = std::min(wanted, cut.tiles);
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
    if (!kernel)  // the 16-bit types: on the GPU only, so far (issue 35)
        throw Unsupported(fmt::format("the CPU path does not take {} yet: use a GPU, or convert the operands to {}",
                                      to_string(q.dtype), is_floating(q.dtype) ? "f32" : "i32"));
    const double terms = double(q.batch) * double(s.m) * double(s.n) * double(std::max<std::int64_t>(s.k, 1));
    // LogPlus's kernel packs its own panels of B (cpu/logplus-inl.h), a small cost beside its 2^x per
    // term: its bands never share a packed B, and a thread takes several of them.
    const bool own_packing = q.semiring == Semiring::LogPlus;
    const int used = threads_for(terms, own_packing ? kLogTermsPerThread : kTermsPerThread, threads);
    const TileShape tile = tile_function(q.dtype)(q.semiring, argmax);
    const auto at = [](const Strided& x, std::int64_t batch_stride, std::int64_t index, std::size_t bytes) {
        Strided moved = x;
        moved.data = static_cast<char*>(x.data) + index * batch_stride * static_cast<std::int64_t>(bytes);
        return moved;
    };
    const auto task_of = [&](std::int64_t product) {
        ProductTask t = base;
        t.a = at(base.a, batch_a, product, size);
        t.b = at(base.b, batch_b, product, size);
        t.c = at(base.c, q.c.batch_stride, product, size);
        if (argmax) t.idx = at(base.idx, q.argmax.batch_stride, product, sizeof(std::int32_t));
        return t;
    };
    const auto band_of = [](const Cut& cut, ProductTask& t, std::int64_t band) {
        const std::int64_t first = cut.tiles * band / cut.bands * cut.tile;
        const std::int64_t last = std::min(cut.tiles * (band + 1) / cut.bands * cut.tile, cut.by_rows ? t.m : t.n);
        (cut.by_rows ? t.row0 : t.col0) = first;
        (cut.by_rows ? t.row1 : t.col1) = last;
    };

    // Bands of rows share one packing of B where it fits the scratch limit: all of it first, block
    // by block on every thread, into the calling thread's scratch; then the bands, which read it.
    const Cut cut = cut_for(q.batch, base.m, base.n, tile, used, kBandsPerThread);
    const PackedBLayout layout{base.k, base.n, tile.cols, blocks_for(size, tile.rows, tile.cols)};
    const std::size_t per_product = layout.bytes(size);
    if (!own_packing && cut.bands > 1 && cut.by_rows && base.k > 0 &&
        per_product * static_cast<std::size_t>(q.batch) <= kSharedBBytes) {
        auto* packed = static_cast<char*>(scratch(Scratch::SharedB, per_product * static_cast<std::size_t>(q.batch)));
        parallel_for(used, q.batch * layout.count(), [&](std::int64_t task) {
            ProductTask t = task_of(task / layout.count());
            t.packed_b = packed + per_product * static_cast<std::size_t>(task / layout.count());
            t.pack_block = task % layout.count();
            kernel(t);
        });
        parallel_for(used, q.batch * cut.bands, [&](std::int64_t task) {
            ProductTask t = task_of(task / cut.bands);
            t.packed_b = packed + per_product * static_cast<std::size_t>(task / cut.bands);
            band_of(cut, t, task % cut.bands);
            kernel(t);
        });
        return;
    }
    // Else every band packs what it reads: a band of columns its B, a band of rows all of B, so
    // then a thread takes one band.
    const Cut own = cut.by_rows && !own_packing ? cut_for(q.batch, base.m, base.n, tile, used, 1) : cut;
    parallel_for(used, q.batch * own.bands, [&](std::int64_t task) {
        ProductTask t = task_of(task / own.bands);
        if (own.bands > 1) band_of(own, t, task % own.bands);
        kernel(t);
    });
}

}  // namespace tropical::cpu
