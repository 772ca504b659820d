#include "gemm/plan.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include <tropical/error.hpp>
#include "catalogue/catalogue.hpp"

namespace tropical::detail {
namespace {

// The dynamic shared memory an argmax kernel with a panel (stages_a_panel) takes for a K of k per
// block: min(slices of k, kTgPanelSlices) slices, at least one (kernel_params.h).
std::size_t argmax_panel_bytes(const CatalogueRow& row, std::int64_t k) {
    const TileShape& t = row.tile;
    const int element = static_cast<int>(size_of(row.dtype));
    const std::int64_t slices = std::clamp<std::int64_t>((k + t.bk - 1) / t.bk, 1, kTgPanelSlices);
    return static_cast<std::size_t>(slices * tg_panel_slice_elements(t.bm, t.bn, t.bk, element) * element);
}

bool panel_fits(const CatalogueRow& row, std::int64_t k, const DeviceLimits& device) {
    return argmax_panel_bytes(row, k) <= device.shared_memory_per_block;
}

constexpr std::int64_t kMaxGridY = 65535;
constexpr std::int64_t kMaxGridZ = 65535;

// Split-K: the fewest k per chunk (16 slices of 8: the block's prologue and its atomic epilogue
// stay a few percent of its work), and the most chunks.
constexpr std::int64_t kMinSplitChunk = 128;
constexpr std::int64_t kMaxSplits = 1024;

const KernelInfo* required(const KernelInfo* kernel, KernelOperation operation, KernelVariant variant,
                           const Request& q) {
    if (!kernel)
        throw Unsupported(fmt::format("no {} kernel of the {} variant for {} {}", to_string(operation),
                                      to_string(variant), to_string(q.dtype), to_string(q.semiring)));
    return kernel;
}

const KernelInfo* product_kernel(KernelVariant variant, const Request& q) {
    return find_kernel(KernelOperation::Gemm, variant, q.dtype, q.semiring);
}

const KernelInfo* argmax_kernel(KernelVariant variant, const Request& q) {
    return find_kernel(KernelOperation::GemmArgmax, variant, q.dtype, q.semiring);
}

// The tiles of a kernel's row that the request's products make, or 0 where the shape does not fill
// them (less than 3/4 of the tiles' area inside C).
std::int64_t filled_tiles(const KernelInfo* kernel, const Request& q, const Shape& s) {
    const TileShape& t = row_of(*kernel).tile;
    const std::int64_t tiles_m = (s.m + t.bm - 1) / t.bm, tiles_n = (s.n + t.bn - 1) / t.bn;
    const double covered = static_cast<double>(s.m) * static_cast<double>(s.n) /
                           (static_cast<double>(tiles_m * t.bm) * static_cast<double>(tiles_n * t.bn));
    return covered >= 0.75 ? q.batch * tiles_m * tiles_n : 0;
}

// For shapes the larger tiles do not fill: the Tiny kernel (16 x 16 tiles, slices of 8) where
// most of a Small block's terms (32 x 32, slices of 32) would be padding and the products are many
// enough to be bound by memory: K of at most half a Small slice, or a batch of at least one product
// per multiprocessor that fills less than 3/4 of the Small tile; else the Small kernel, whose deeper
// slices take a single product with a longer K through fewer trips to memory. Either may be missing
// (null: the other, or null if both are).
const KernelInfo* small_or_tiny(const KernelInfo* small, const KernelInfo* tiny, const Request& q, const Shape& s,
                                std::int64_t multiprocessors) {
    if (!small || !tiny) return small ? small : tiny;
    const bool short_k = 2 * s.k <= row_of(*small).tile.bk;
    const bool many_sparse = q.batch >= multiprocessors && filled_tiles(small, q, s) == 0;
    return short_k || many_sparse ? tiny : small;
}

// The Dense and Wide kernels (kernels/dense.cuh, kernels/wide.cuh) read each product's A and B as
// one array of 16-byte vectors and write C's rows as vectors: they take products within their row's
// sides (bm x bn x bk) whose A and B are contiguous row-major arrays, C row-major with rows of whole
// vectors, K and N whole vectors, every matrix 16-byte aligned (its start and the batch stride).
bool vectors_fit(const KernelInfo* kernel, const Request& q, const Shape& s) {
    if (!kernel) return false;
    const TileShape& t = row_of(*kernel).tile;
    const auto element = static_cast<std::int64_t>(size_of(q.dtype));
    const std::int64_t vec = 16 / element;
    const auto aligned = [&](const OperandRef& r) {
        return reinterpret_cast<std::uintptr_t>(r.data) % 16 == 0 && r.batch_stride * element % 16 == 0;
    };
    const auto contiguous = [&](const OperandRef& r, std::int64_t cols) {
        return r.layout == Layout::RowMajor && r.ld == cols && aligned(r);
    };
    return s.m > 0 && s.m <= t.bm && s.n > 0 && s.n <= t.bn && s.k > 0 && s.k <= t.bk && s.k % vec == 0 &&
           s.n % vec == 0 && contiguous(q.a, s.k) && contiguous(q.b, s.n) && q.c.layout == Layout::RowMajor &&
           q.c.ld % vec == 0 && aligned(q.c);
}

// Whether a product covers at least a quarter of a (whole-product) kernel's tile: the Wide kernel's
// threads past M and N idle, yet on the H200 8192 x 24 x 64 x 16 (37.5% of its tile) took 40 us
// there against 105 on the Tiny kernel, and 40 x 40 x 16 59 against 117 (bench/RESULTS.md); less
// than a quarter is unmeasured.
bool quarter_filled(const KernelInfo* kernel, const Shape& s) {
    const TileShape& t = row_of(*kernel).tile;
    return 4 * s.m * s.n >= t.bm * t.bn;
}

// The Wide kernel takes at least a product per multiprocessor laid out for it (vectors_fit) and past
// the Dense kernel's sides, that covers a quarter of its tile or more (whole products per block,
// where the Batched kernels' first loads of a short K are most of their blocks' lives).
bool wide_fits(const KernelInfo* wide, const KernelInfo* dense, const Request& q, const Shape& s,
               std::int64_t multiprocessors) {
    return q.batch >= multiprocessors && !vectors_fit(dense, q, s) && vectors_fit(wide, q, s) &&
           quarter_filled(wide, s);
}

// The Vector kernels (kernels/vector.cuh) take an A of at most their bm rows (a row vector times a
// matrix: a Viterbi step over one sequence) times a B whose columns are contiguous, with a K of at
// least one k for each of their groups of threads, in batches of fewer products than
// multiprocessors. The tiled kernels would spend 16 or 32 rows of a tile on such a product, most of
// them padding, with one block per 16 or 32 columns: on the H200 1 x 1024 x 1024 took 9.5 us
// against 34 (bench/RESULTS.md). A batch of 1024 products of 1 x 256 x 256, whose products fill the
// GPU by themselves, ran 1.26 times slower on them than on the Tiny kernels (a K of 256 leaves a
// block's fixed cost, two barriers, the shuffles and the merge, over only 2048 terms).
bool vector_fits(const KernelInfo* kernel, const Request& q, const Shape& s, std::int64_t multiprocessors) {
    if (!kernel) return false;
    const TileShape& t = row_of(*kernel).tile;
    return s.m <= t.bm && s.k >= t.bk && q.b.layout == Layout::RowMajor && q.batch < multiprocessors;
}

// The Column kernels (kernels/column.cuh), the Vector kernels' mirror image, take a B of at most
// their bn columns (a matrix times a column vector: a Bellman-Ford relaxation) times an A whose rows
// are contiguous, with a K of at least one k for each lane of a warp. The tiled kernels would spend a
// 16- or 32-column tile on each strip of rows, all but a column of it padding: on the H200 4096 x 1
// x 4096 (M x N x K) took 26.9 us against 115 (bench/RESULTS.md). A batch of a product per multiprocessor or more
// takes them only with a K of at least kColumnBatchK: 1024 products of 256 x 1 x 256 ran 1.5 times
// faster on them than on the Tiny kernels, but 16384 of 32 x 1 x 64 2.2 times slower, and 65536 of
// 16 x 4 x 32 with argmax 5.3 times slower (a warp's few terms then leave the block's two barriers
// per pass and its shuffles most of its life).
constexpr std::int64_t kColumnBatchK = 256;

bool column_fits(const KernelInfo* kernel, const Request& q, const Shape& s, std::int64_t multiprocessors) {
    if (!kernel) return false;
    const TileShape& t = row_of(*kernel).tile;
    return s.n <= t.bn && s.k >= t.bk && q.a.layout == Layout::RowMajor &&
           (q.batch < multiprocessors || s.k >= kColumnBatchK);
}

// Products go to the kernel with the largest tile that the shape fills (at least 3/4 of the tiles'
// area is inside C) and that still gives the GPU enough blocks: the Tiled kernel with two blocks per
// multiprocessor; failing that, its split-K twin, with K cut into chunks of at least kMinSplitChunk
// where that fills at least 3/4 of those block slots in one wave (a long K over few tiles: 1024^3,
// or 256 x 256 x 65536, which would otherwise leave most multiprocessors idle); the Wide kernel where
// wide_fits says; the Vector kernel for a few products of an A of a few rows (vector_fits), the
// Column kernel for a B of a few columns (column_fits); the 64 x 64 Batched kernel with one block per
// multiprocessor; else the Dense kernel where its layout fits (vectors_fit); else the 32 x 32 Small
// kernel, which gives a single small product 4 to 16 times more blocks than the others, or for tiny
// products the 16 x 16 Tiny one (small_or_tiny).
Choice choose_product(const Request& q, const Shape& s, std::int64_t multiprocessors) {
    auto tiles = [&](const KernelInfo* kernel) { return filled_tiles(kernel, q, s); };
    const KernelInfo* tiled =
        required(product_kernel(KernelVariant::Tiled, q), KernelOperation::Gemm, KernelVariant::Tiled, q);
    const std::int64_t slots = 2 * multiprocessors, tiled_tiles = tiles(tiled);
    if (tiled_tiles > 0 && tiled_tiles >= slots) return {tiled};
    // Split-K combines its chunks with 32-bit atomics into a C that starts at the zero, which one 2-D
    // memset writes where C's matrices follow each other.
    const KernelInfo* splitk = product_kernel(KernelVariant::SplitK, q);
    if (splitk && tiled_tiles > 0 && !q.options.accumulate && follows_on(q.c, q.batch)) {
        const std::int64_t splits = std::min({slots / tiled_tiles, s.k / kMinSplitChunk, kMaxSplits});
        if (splits > 1 && 4 * tiled_tiles * splits >= 3 * slots) return {splitk, splits};
    }
    const KernelInfo* batched =
        required(product_kernel(KernelVariant::Batched, q), KernelOperation::Gemm, KernelVariant::Batched, q);
    const KernelInfo* dense = product_kernel(KernelVariant::Dense, q);
    if (const KernelInfo* wide = product_kernel(KernelVariant::Wide, q); wide_fits(wide, dense, q, s, multiprocessors))
        return {wide};
    if (const KernelInfo* vector = product_kernel(KernelVariant::Vector, q); vector_fits(vector, q, s, multiprocessors))
        return {vector};
    if (const KernelInfo* column = product_kernel(KernelVariant::Column, q); column_fits(column, q, s, multiprocessors))
        return {column};
    if (tiles(batched) >= multiprocessors) return {batched};
    if (vectors_fit(dense, q, s)) return {dense};
    const KernelInfo* small = small_or_tiny(product_kernel(KernelVariant::Small, q),
                                            product_kernel(KernelVariant::Tiny, q), q, s, multiprocessors);
    return {small ? small : batched};
}

// Counting products by the same rule over the counting rows (kernels/catalogue.def says why they
// have no split-K): Tiled where its 64 x 64 tiles fill two blocks per multiprocessor, Batched (32 x
// 32) where its tiles fill one, else Small (16 x 16), whose many blocks suit the tiny products of an
// einsum's steps.
Choice choose_counting(const Request& q, const Shape& s, std::int64_t multiprocessors) {
    const KernelInfo* tiled =
        required(product_kernel(KernelVariant::Tiled, q), KernelOperation::Gemm, KernelVariant::Tiled, q);
    if (filled_tiles(tiled, q, s) >= 2 * multiprocessors) return {tiled};
    const KernelInfo* batched =
        required(product_kernel(KernelVariant::Batched, q), KernelOperation::Gemm, KernelVariant::Batched, q);
    if (filled_tiles(batched, q, s) >= multiprocessors) return {batched};
    return {required(product_kernel(KernelVariant::Small, q), KernelOperation::Gemm, KernelVariant::Small, q)};
}

// The blocks a kernel's row gives the request: one per tile of every product.
std::int64_t blocks_of(const KernelInfo* kernel, const Request& q, const Shape& s) {
    const TileShape& t = row_of(*kernel).tile;
    return q.batch * ((s.m + t.bm - 1) / t.bm) * ((s.n + t.bn - 1) / t.bn);
}

// The k of each chunk where `splits` chunks share K (kernels/kernel_params.h's tg_split_chunk), or
// K where the kernel does not split it.
std::int64_t chunk_of(const CatalogueRow& row, const Shape& s, std::int64_t splits) {
    return splits > 1 ? tg_split_chunk(s.k, splits, row.tile.bk) : s.k;
}

// Serial argmax (kernels/argmax_rescan.cuh's merge_serial): for `tiles` 64 x 64 tiles, fewer than
// the `slots` the GPU holds at once, the number of chunks of K that gives the blocks the fewest waves
// per k of a chunk, ceil(tiles * S / slots) / S, the fewest chunks on a tie (each chunk adds a merge
// per tile, one block at a time), with chunks of at least kMinSplitChunk: 1024^3 on 132
// multiprocessors, 256 tiles over 396 slots, takes 3 (two waves of a third of K each, against one
// wave of all of it). Tiles that fill the slots once are not split: a split there only trims the
// last wave.
constexpr std::int64_t kMaxSerialSplits = 8;

std::int64_t serial_splits(std::int64_t tiles, std::int64_t slots, std::int64_t k) {
    if (tiles >= slots) return 1;
    const auto waves = [&](std::int64_t splits) { return (tiles * splits + slots - 1) / slots; };
    std::int64_t best = 1;
    for (std::int64_t splits = 2; splits <= std::min(k / kMinSplitChunk, kMaxSerialSplits); ++splits)
        if (waves(splits) * best < waves(best) * splits) best = splits;
    return best;
}

// Products with argmax by the same rule, over the argmax rows. The Wide kernel takes what wide_fits
// says (a product per multiprocessor of sides past 32 and a short K: its whole products per block
// beat the Batched argmax kernel's 64 x 64 tiles there, bench/RESULTS.md). A shape that fills at
// least one 64 x 64 tile per multiprocessor but fewer than the block slots, with a K long enough to split, takes the
// Serial argmax kernel (the Batched argmax loop over chunks of K in separate blocks, merged into C
// and argmax one block at a time per tile), as plain products take split-K there; one with more tiles
// takes the Tiled argmax kernel, or, where K is short (below kShortArgmaxK), its Batched twin with
// half the slice, which rescans each result's slice from the operands it keeps resident in shared
// memory (a rescan from global memory is then a large share of the work), where the device gives a
// block that panel (argmax_panel_bytes; the Serial kernel's panel holds a chunk's slices).
// An A of a few rows takes the Vector argmax kernel (vector_fits), a B of a few columns the Column one
// (column_fits), a product laid out for the Dense kernel that one (vectors_fit), as plain products
// do. Another smaller shape takes the Small argmax kernel, which gives it 4 times the blocks, or the
// Tiny one where small_or_tiny says; and where even the Small kernel leaves multiprocessors idle and
// K is at least two of its slices (a step of a Viterbi chain, (64 x 256) x (256 x 256)), the SplitK
// argmax kernel, whose 16 x 16 tiles give 4 times the blocks and whose groups of threads split K, so
// that each result's chain of dependent terms is 4 times shorter.
constexpr std::int64_t kShortArgmaxK = 1024;

Choice choose_argmax(const Request& q, const Shape& s, const DeviceLimits& device) {
    const std::int64_t multiprocessors = device.multiprocessors;
    const KernelInfo* dense = argmax_kernel(KernelVariant::Dense, q);
    // (Where the plain Tiled kernel's tiles fill two blocks per multiprocessor, plain products take it
    // before the Wide kernel: the 64-bit types' 64 x 64 products; their argmax keeps the Tiled rows.)
    const KernelInfo* plain_tiled = product_kernel(KernelVariant::Tiled, q);
    if (const KernelInfo* wide = argmax_kernel(KernelVariant::Wide, q);
        wide_fits(wide, dense, q, s, multiprocessors) &&
        !(plain_tiled && filled_tiles(plain_tiled, q, s) >= 2 * multiprocessors))
        return {wide};
    const KernelInfo* tiled =
        required(argmax_kernel(KernelVariant::Tiled, q), KernelOperation::GemmArgmax, KernelVariant::Tiled, q);
    if (filled_tiles(tiled, q, s) >= multiprocessors) {
        if (const KernelInfo* serial = argmax_kernel(KernelVariant::Serial, q)) {
            const CatalogueRow& row = row_of(*serial);
            const std::int64_t splits =
                serial_splits(filled_tiles(serial, q, s), row.min_blocks * multiprocessors, s.k);
            if (splits > 1 && panel_fits(row, chunk_of(row, s, splits), device)) return {serial, splits};
        }
        const KernelInfo* batched = argmax_kernel(KernelVariant::Batched, q);
        return {batched && panel_fits(row_of(*batched), s.k, device) && s.k < kShortArgmaxK ? batched : tiled};
    }
    if (const KernelInfo* vector = argmax_kernel(KernelVariant::Vector, q); vector_fits(vector, q, s, multiprocessors))
        return {vector};
    if (const KernelInfo* column = argmax_kernel(KernelVariant::Column, q); column_fits(column, q, s, multiprocessors))
        return {column};
    if (vectors_fit(dense, q, s)) return {dense};
    const KernelInfo* small_kernel = argmax_kernel(KernelVariant::Small, q);
    const KernelInfo* split = argmax_kernel(KernelVariant::SplitK, q);
    if (small_kernel && split && s.k >= 2 * row_of(*small_kernel).tile.bk &&
        blocks_of(small_kernel, q, s) < multiprocessors)
        return {split};
    const KernelInfo* small = small_or_tiny(small_kernel, argmax_kernel(KernelVariant::Tiny, q), q, s, multiprocessors);
    return {small ? small : tiled};
}

TgOperand kernel_operand(const OperandRef& r) {
    return {const_cast<void*>(r.data), r.layout == Layout::RowMajor ? r.ld : 1, r.layout == Layout::RowMajor ? 1 : r.ld,
            r.batch_stride};
}

void plan_product(LaunchPlan& p, const Request& q, const Shape& s, const DeviceLimits& device) {
    const CatalogueRow& row = row_of(*p.choice.kernel);
    TgGemmParams& params = p.product;
    params.a = kernel_operand(q.a);
    params.b = kernel_operand(q.b);
    params.c = kernel_operand(q.c);
    if (q.operation == Operation::GemmArgmax) params.argmax = kernel_operand(q.argmax);
    params.m = s.m, params.n = s.n, params.k = s.k, params.batch = q.batch;
    params.accumulate = q.options.accumulate ? 1 : 0;
    params.k_splits = static_cast<int>(p.choice.k_splits);
    if (p.choice.k_splits > 1)
        p.fill = q.operation == Operation::GemmArgmax ? LaunchPlan::Fill::ResultWithZeroArgmaxWithNone
                                                      : LaunchPlan::Fill::ResultWithZero;
    if (stages_a_panel(row.operation, row.variant))
        p.shared_bytes = static_cast<unsigned>(argmax_panel_bytes(row, chunk_of(row, s, p.choice.k_splits)));
    // Kernels loop over M-tiles, N-tiles and batches, so any grid within the limits is correct.
    const std::int64_t grid_x = (s.n + row.tile.bn - 1) / row.tile.bn;
    if (grid_x > 0x7fffffff)
        throw InvalidArgument(fmt::format("N = {} is too large for one launch (at most {} columns)", s.n,
                                          std::int64_t{0x7fffffff} * row.tile.bn));
    p.grid[0] = static_cast<unsigned>(grid_x);
    p.grid[1] = static_cast<unsigned>(std::min((s.m + row.tile.bm - 1) / row.tile.bm, kMaxGridY));
    p.grid[2] = static_cast<unsigned>(std::min(q.batch * p.choice.k_splits, kMaxGridZ));
    // Tiny, Dense and Wide: one wave of the blocks the multiprocessors hold (the row's min_blocks each),
    // looping over the batch, rather than a block per product, so that a block's setup (staging map,
    // tile counts, first addresses) is paid once for many products. Measured for Tiny on an H100:
    // 16384 x 32 x 32 x 8 6.7% faster, 65536 x 16^3 the same (bench/RESULTS.md). The Dense and Wide
    // kernels also load a product while they compute the one before.
    if ((row.variant == KernelVariant::Tiny || row.variant == KernelVariant::Dense ||
         row.variant == KernelVariant::Wide) &&
        row.min_blocks > 0 && device.multiprocessors > 0) {
        const std::int64_t resident = device.multiprocessors * row.min_blocks;
        const std::int64_t tiles = std::int64_t{p.grid[0]} * p.grid[1];
        p.grid[2] =
            static_cast<unsigned>(std::min<std::int64_t>(p.grid[2], std::max<std::int64_t>(1, resident / tiles)));
    }
    if (q.with_counts) {
        p.counting.values = params;
        p.counting.a_count = kernel_operand(q.a_count);
        p.counting.b_count = kernel_operand(q.b_count);
        p.counting.c_count = kernel_operand(q.c_count);
    }
}

// The device's name for a semiring's gradient route (validation has refused the semirings without one).
TgRoute route_of(Semiring s) {
    switch (info(s).gradient) {
    case GradientRoute::Product: return kTgRouteProduct;
    case GradientRoute::ToMin: return kTgRouteToMin;
    case GradientRoute::ToMax: return kTgRouteToMax;
    case GradientRoute::AsIs:
    case GradientRoute::None: break;
    }
    return kTgRouteAsIs;
}

// The Scatter kernels route grad_C through the argmax in shared memory when a block's K values fit
// (grad_A: a row of K; grad_B: K rows of a slab of kTgBackwardBSlabBytes): that path writes every
// element of the gradient, so an overwriting pass needs no zeroing first. Otherwise they add with
// global atomics into a gradient zeroed first (unless accumulating).
void plan_backward(LaunchPlan& p, const Request& q, const Shape& s, const DeviceLimits& device) {
    const bool for_a = q.operation == Operation::BackwardA;
    const std::size_t element = size_of(q.dtype);
    const auto shared =
        static_cast<std::size_t>(s.k) * (for_a ? element : static_cast<std::size_t>(kTgBackwardBSlabBytes));
    // Not where products of a batch share gradient elements (a broadcast gradient): those must add up.
    const std::int64_t grad_lines = q.grad.layout == Layout::RowMajor ? q.grad.rows : q.grad.cols;
    const bool disjoint = q.batch == 1 || q.grad.batch_stride >= grad_lines * q.grad.ld;
    const bool in_shared = disjoint && s.k > 0 && shared <= device.shared_memory_per_block;
    const bool routes = s.m > 0 && s.n > 0;
    if (!q.options.accumulate && !(in_shared && routes)) p.fill = LaunchPlan::Fill::GradientWithZero;
    p.launch = routes;
    if (!routes) return;

    TgBackwardParams& params = p.backward;
    params.grad_c = kernel_operand(q.c);
    params.argmax = kernel_operand(q.argmax);
    params.a = kernel_operand(q.a);
    params.b = kernel_operand(q.b);
    params.grad = kernel_operand(q.grad);
    params.m = s.m, params.n = s.n, params.k = s.k, params.batch = q.batch;
    params.route = route_of(q.semiring);
    params.overwrite = in_shared && !q.options.accumulate ? 1 : 0;
    std::int64_t blocks = 0;
    if (in_shared) {
        const auto slab = static_cast<std::int64_t>(static_cast<std::size_t>(kTgBackwardBSlabBytes) / element);
        const std::int64_t units = q.batch * (for_a ? s.m : (s.n + slab - 1) / slab);
        blocks = std::min<std::int64_t>(units, device.multiprocessors * 64);
        p.shared_bytes = static_cast<unsigned>(shared);
    } else {
        const std::int64_t work = s.m * s.n * q.batch;
        blocks = std::clamp<std::int64_t>((work + p.block - 1) / p.block, 1, device.multiprocessors * 32);
    }
    p.grid[0] = static_cast<unsigned>(blocks);
}

// The packing kernel: grid-strided over units of 32 words, a warp per unit; enough blocks to fill
// the GPU several times over, fewer where there are fewer units.
void plan_pack(LaunchPlan& p, const Request& q, const Shape& s, const DeviceLimits& device) {
    TgPackParams& params = p.pack;
    params.bytes = kernel_operand(q.a);
    params.words = kernel_operand(q.c);
    if (q.pack == PackAs::B) {  // the kernel packs along the operands' columns: a B's are its rows
        std::swap(params.bytes.row_stride, params.bytes.col_stride);
        std::swap(params.words.row_stride, params.words.col_stride);
    }
    params.outer = s.m, params.k = s.k, params.batch = q.batch;
    const std::int64_t words = (s.k + 31) / 32;
    const bool along_k = params.bytes.col_stride == 1 || params.bytes.row_stride != 1;
    const std::int64_t units = q.batch * (along_k ? s.m * ((words + 31) / 32) : ((s.m + 31) / 32) * words);
    const std::int64_t warps = p.block / 32;
    p.grid[0] = static_cast<unsigned>(std::clamp<std::int64_t>((units + warps - 1) / warps, 1,
                                                               std::max<std::int64_t>(device.multiprocessors, 1) * 16));
}

// A thread per row (kernels/backtrack.cuh), as many blocks as the rows need up to 16 per
// multiprocessor (the rows are strided over beyond).
void plan_backtrack(LaunchPlan& p, const Request& q, const Shape& s, const DeviceLimits& device) {
    TgBacktrackParams& params = p.backtrack;
    params.back = kernel_operand(q.argmax);
    params.last = kernel_operand(q.a);
    params.path = kernel_operand(q.c);
    params.rows = s.m, params.states = s.n, params.steps = s.k;
    p.grid[0] = static_cast<unsigned>(std::clamp<std::int64_t>((s.m + p.block - 1) / p.block, 1,
                                                               std::max<std::int64_t>(device.multiprocessors, 1) * 16));
}

}  // namespace

Choice choose_kernel(const Request& q, const Shape& s, const DeviceLimits& device) {
    const std::int64_t multiprocessors = device.multiprocessors;
    auto only = [&](KernelOperation operation, KernelVariant variant) -> Choice {
        return {required(find_kernel(operation, variant, q.dtype, q.semiring), operation, variant, q)};
    };
    // OrAnd: the Packed kernels for packed operands, the Tiled ones (which pack bytes as they stage
    // them) for bytes, at every shape: a word is 32 terms, so even a small product is mostly the
    // launch and the first global loads, which smaller tiles would not shorten.
    if (q.semiring == Semiring::OrAnd && (q.operation == Operation::Gemm || q.operation == Operation::GemmArgmax)) {
        const KernelOperation operation =
            q.operation == Operation::Gemm ? KernelOperation::Gemm : KernelOperation::GemmArgmax;
        return only(operation, q.packed_k >= 0 ? KernelVariant::Packed : KernelVariant::Tiled);
    }
    switch (q.operation) {
    case Operation::Gemm:
        return q.with_counts ? choose_counting(q, s, multiprocessors) : choose_product(q, s, multiprocessors);
    case Operation::GemmArgmax: return choose_argmax(q, s, device);
    case Operation::BackwardA: return only(KernelOperation::BackwardA, KernelVariant::Scatter);
    case Operation::BackwardB: return only(KernelOperation::BackwardB, KernelVariant::Scatter);
    case Operation::PackBits: return only(KernelOperation::PackBits, KernelVariant::Packed);
    case Operation::Backtrack: return only(KernelOperation::Backtrack, KernelVariant::Walk);
    }
    throw Unsupported("unknown operation");
}

bool has_work(const Request& q, const Shape& s) {
    // Every row's path has its last state, also with no steps (batch) to walk.
    if (q.operation == Operation::Backtrack) return s.m > 0;
    if (q.batch == 0) return false;
    switch (q.operation) {
    case Operation::Gemm:
    case Operation::GemmArgmax: return !s.empty();
    // A gradient of size zero has nothing to write; one with K > 0 is written (zeroed) even when
    // grad_C is empty.
    case Operation::BackwardA: return s.k > 0 && s.m > 0;
    case Operation::BackwardB: return s.k > 0 && s.n > 0;
    case Operation::PackBits: return s.m > 0 && s.k > 0;  // the outer dimension and K
    case Operation::Backtrack: break;
    }
    return false;
}

LaunchPlan plan(const Request& q, const Shape& s, const DeviceLimits& device) {
    LaunchPlan p;
    p.choice = choose_kernel(q, s, device);
    p.block = static_cast<unsigned>(row_of(*p.choice.kernel).threads);
    if (q.operation == Operation::BackwardA || q.operation == Operation::BackwardB) plan_backward(p, q, s, device);
    else if (q.operation == Operation::PackBits) plan_pack(p, q, s, device);
    else if (q.operation == Operation::Backtrack) plan_backtrack(p, q, s, device);
    else plan_product(p, q, s, device);
    return p;
}

}  // namespace tropical::detail
