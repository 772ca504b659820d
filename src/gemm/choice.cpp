#include "gemm/choice.hpp"

#include <algorithm>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <tropical/error.hpp>
#include "gemm/plan.hpp"  // follows_on
#include "kernel_params.h"

namespace tropical::detail {
namespace {

// ---------------------------------------------------------------------------------------------
// The thresholds. Each says its rule and where it was measured (bench/NOTES.md, by section; the
// section "Kernel choice: the thresholds and their measurements" gathers them).

// A part of a whole, compared in integers.
struct Fraction {
    std::int64_t num, den;
};
constexpr bool at_least(std::int64_t part, Fraction f, std::int64_t whole) { return f.den * part >= f.num * whole; }
constexpr bool at_most(std::int64_t part, Fraction f, std::int64_t whole) { return f.den * part <= f.num * whole; }

// A tiled kernel takes a shape only where it fills the tiles: at least this share of the tiles' area
// lies inside C; emptier tiles would spend most of their terms on padding. bench/NOTES.md, "Small
// products and start-up".
constexpr double kMinTileCoverage = 0.75;

// The blocks per multiprocessor that a kernel's filled tiles must give before it takes a product, so
// that the GPU is full: two for the big Tiled tiles (the row's two resident blocks), one for the
// Batched tiles and for the argmax kernels' 64 x 64 tiles. bench/NOTES.md, "Small products and
// start-up".
constexpr std::int64_t kTiledTilesPerSm = 2;
constexpr std::int64_t kBatchedTilesPerSm = 1;
constexpr std::int64_t kArgmaxTilesPerSm = 1;
constexpr std::int64_t kLogPlusTilesPerSm = 1;

// Split-K across blocks (SplitKAtomic, SplitKSerial): chunks of at least this many k (16 slices of
// 8), so that a block's prologue and its combining epilogue stay a few percent of its work.
// bench/NOTES.md, "Split-K (f32, i32; `6db2c61`)".
constexpr std::int64_t kMinSplitChunk = 128;
// SplitKAtomic: at most this many chunks, and taken only where its chunks fill at least this share
// of the Tiled kernel's block slots in one wave (fewer leave most multiprocessors idle anyway).
// bench/NOTES.md, "Split-K (f32, i32; `6db2c61`)".
constexpr std::int64_t kMaxAtomicSplits = 1024;
constexpr Fraction kMinAtomicSlotFill{3, 4};
// SplitKSerial: at most this many chunks; each adds a merge per tile, one block at a time.
// bench/NOTES.md, "Serial argmax: split-K across blocks, merged under a per-tile lock".
constexpr std::int64_t kMaxSerialSplits = 8;

// PanelRescan (the Batched argmax kernels) takes a K below this; a longer K keeps the Tiled argmax
// kernel, whose slices of 16 halve the tracking where the rescan is a small share of the work.
// bench/NOTES.md, "Argmax variants (issue 14): Small and Batched argmax, the rescan by variant".
constexpr std::int64_t kShortArgmaxK = 1024;

// SplitKInBlock takes a K of at least this many of the Small argmax kernel's slices: each result's
// chain of dependent terms is then long enough for the split among groups of threads to shorten it.
// bench/NOTES.md, "SplitK argmax: K split among a block's threads".
constexpr std::int64_t kInBlockMinSmallSlices = 2;

// Tiny takes a K of at most this share of the Small kernel's slice, where most of a Small block's
// terms would be padding. bench/NOTES.md, "Kernel choice: the thresholds and their measurements".
constexpr Fraction kTinyShortK{1, 2};

// Wide takes a product that covers at least this share of its tile (its threads past M and N idle,
// which still beats the Tiny kernel's general staging; less is unmeasured). bench/NOTES.md, "Wide
// kernels: whole products of up to 64 × 64 with a short K".
constexpr Fraction kWideMinTileFill{1, 4};

// Column takes a batch of a product per multiprocessor or more only with a K of at least this: a
// shorter K leaves a block's fixed cost (barriers, staging, shuffles) most of its life.
// bench/NOTES.md, "Column kernels: a matrix times a column vector".
constexpr std::int64_t kColumnBatchK = 256;

// ---------------------------------------------------------------------------------------------
// What the predicates measure.

// What an entry's predicate is asked about: the request, its shape, the device, and the entry's own
// kernel (the catalogue's, for the table's operation and the request's type and semiring).
struct Candidate {
    const Request& q;
    const Shape& s;
    const DeviceLimits& device;
    KernelOperation operation;
    const KernelInfo* kernel;  // never null
    std::int64_t multiprocessors() const { return device.multiprocessors; }
    // The catalogue's kernel of another variant, of the table's operation or another (null: none).
    const KernelInfo* sibling(KernelVariant variant) const { return other(operation, variant); }
    const KernelInfo* other(KernelOperation op, KernelVariant variant) const {
        return find_kernel(op, variant, q.dtype, q.semiring);
    }
};

// The tiles of a kernel's row that the request's products make, or 0 where the shape does not fill
// them (kMinTileCoverage).
std::int64_t filled_tiles(const KernelInfo* kernel, const Request& q, const Shape& s) {
    const TileShape& t = row_of(*kernel).tile;
    const std::int64_t tiles_m = (s.m + t.bm - 1) / t.bm, tiles_n = (s.n + t.bn - 1) / t.bn;
    const double covered = static_cast<double>(s.m) * static_cast<double>(s.n) /
                           (static_cast<double>(tiles_m * t.bm) * static_cast<double>(tiles_n * t.bn));
    return covered >= kMinTileCoverage ? q.batch * tiles_m * tiles_n : 0;
}

// Whether a kernel's filled tiles give `per_sm` blocks per multiprocessor (false for a null kernel).
bool tiles_fill(const KernelInfo* kernel, const Candidate& c, std::int64_t per_sm) {
    return kernel && filled_tiles(kernel, c.q, c.s) >= per_sm * c.multiprocessors();
}

// The blocks a kernel's row gives the request: one per tile of every product.
std::int64_t blocks_of(const KernelInfo* kernel, const Request& q, const Shape& s) {
    const TileShape& t = row_of(*kernel).tile;
    return q.batch * ((s.m + t.bm - 1) / t.bm) * ((s.n + t.bn - 1) / t.bn);
}

// A batch of at least a product per multiprocessor fills the GPU by its products alone.
bool many_products(const Candidate& c) { return c.q.batch >= c.multiprocessors(); }

bool panel_fits(const CatalogueRow& row, std::int64_t k, const DeviceLimits& device) {
    return argmax_panel_bytes(row, k) <= device.shared_memory_per_block;
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

// ---------------------------------------------------------------------------------------------
// The predicates, one per rule; the tables below put them in order.

bool always(const Candidate&) { return true; }

// OrAnd, at every shape: a word is 32 terms, so even a small product is mostly the launch and the
// first global loads, which smaller tiles would not shorten. Packed operands take the OrAndWords
// kernels, bytes the OrAndBytes ones (which pack them as they stage them).
bool orand_words(const Candidate& c) { return c.q.semiring == Semiring::OrAnd && c.q.packed_k >= 0; }
bool orand_bytes(const Candidate& c) { return c.q.semiring == Semiring::OrAnd && c.q.packed_k < 0; }

// Tiled: the largest tiles, where the shape fills them and they fill kTiledTilesPerSm blocks per
// multiprocessor. (A GPU of no multiprocessors: plain products only where the shape fills a tile.)
bool tiled_fills_gpu(const Candidate& c) { return tiles_fill(c.kernel, c, kTiledTilesPerSm); }
bool tiled_fits(const Candidate& c) { return filled_tiles(c.kernel, c.q, c.s) > 0 && tiled_fills_gpu(c); }

// SplitKAtomic: the Tiled kernel's filled tiles, fewer than its block slots, each given a block per
// chunk of K (a long K over few tiles), as many chunks as fill the slots.
std::int64_t atomic_splits(const Candidate& c) {
    const KernelInfo* tiled = c.sibling(KernelVariant::Tiled);
    const std::int64_t tiles = tiled ? filled_tiles(tiled, c.q, c.s) : 0;
    if (tiles == 0) return 1;
    const std::int64_t slots = kTiledTilesPerSm * c.multiprocessors();
    return std::min({slots / tiles, c.s.k / kMinSplitChunk, kMaxAtomicSplits});
}

// The chunks combine with 32-bit atomics into a C that starts at the semiring's zero, which one 2-D
// memset writes where C's matrices follow each other (and which holds no earlier values to keep).
bool atomic_split_fits(const Candidate& c) {
    if (c.q.options.accumulate || !follows_on(c.q.c, c.q.batch)) return false;
    const KernelInfo* tiled = c.sibling(KernelVariant::Tiled);
    const std::int64_t tiles = tiled ? filled_tiles(tiled, c.q, c.s) : 0;
    const std::int64_t splits = atomic_splits(c);
    return tiles > 0 && splits > 1 &&
           at_least(tiles * splits, kMinAtomicSlotFill, kTiledTilesPerSm * c.multiprocessors());
}

// Wide: at least a product per multiprocessor laid out for it (vectors_fit) and past the Dense
// kernel's sides, covering kWideMinTileFill of its tile or more: whole products per block, where the
// Batched kernels' first loads of a short K are most of their blocks' lives.
bool wide_fits(const Candidate& c) {
    const TileShape& t = row_of(*c.kernel).tile;
    return many_products(c) && !vectors_fit(c.sibling(KernelVariant::Dense), c.q, c.s) &&
           vectors_fit(c.kernel, c.q, c.s) && at_least(c.s.m * c.s.n, kWideMinTileFill, std::int64_t{t.bm} * t.bn);
}

// The Wide argmax kernel by the same rule, except where the plain Tiled kernel's tiles fill its
// block slots: plain products take that ahead of Wide (the 64-bit types' 64 x 64 products), and
// their argmax keeps the argmax tiles.
bool wide_argmax_fits(const Candidate& c) {
    return wide_fits(c) && !tiles_fill(c.other(KernelOperation::Gemm, KernelVariant::Tiled), c, kTiledTilesPerSm);
}

// Vector (kernels/vector.cuh): an A of at most bm rows (a row vector times a matrix) times a B whose
// columns are contiguous, a K of at least a k for each group of threads, in batches of fewer products
// than multiprocessors: tiles would spend 16 or 32 rows on it, most of them padding, and a batch
// that fills the GPU by itself leaves a Vector block's fixed cost over too few terms.
bool vector_fits(const Candidate& c) {
    const TileShape& t = row_of(*c.kernel).tile;
    return c.s.m <= t.bm && c.s.k >= t.bk && c.q.b.layout == Layout::RowMajor && !many_products(c);
}

// Column (kernels/column.cuh), Vector's mirror image: a B of at most bn columns (a matrix times a
// column vector) times an A whose rows are contiguous, a K of at least a k per lane of a warp; a
// batch of a product per multiprocessor or more only with a K of at least kColumnBatchK.
bool column_fits(const Candidate& c) {
    const TileShape& t = row_of(*c.kernel).tile;
    return c.s.n <= t.bn && c.s.k >= t.bk && c.q.a.layout == Layout::RowMajor &&
           (!many_products(c) || c.s.k >= kColumnBatchK);
}

// Batched: its tiles, filled, one block per multiprocessor.
bool batched_fits(const Candidate& c) { return tiles_fill(c.kernel, c, kBatchedTilesPerSm); }

// Dense: a product laid out for its vectors (vectors_fit).
bool dense_fits(const Candidate& c) { return vectors_fit(c.kernel, c.q, c.s); }

// Tiny (16 x 16 tiles, slices of 8) rather than Small (32 x 32, slices of 32), where most of a Small
// block's terms would be padding and the products are many enough to be bound by memory: a K of at
// most kTinyShortK of a Small slice, or a batch of at least a product per multiprocessor that does
// not fill the Small tile. The Small kernel's deeper slices take a single product with a longer K
// through fewer trips to memory. (Without a Small kernel, Tiny.)
bool tiny_fits(const Candidate& c) {
    const KernelInfo* small = c.sibling(KernelVariant::Small);
    if (!small) return true;
    return at_most(c.s.k, kTinyShortK, row_of(*small).tile.bk) ||
           (many_products(c) && filled_tiles(small, c.q, c.s) == 0);
}

// The argmax kernels' 64 x 64 tiles, filled, one block per multiprocessor: the shapes SplitKSerial,
// PanelRescan and Tiled argmax share among them.
bool argmax_tiles_fill(const Candidate& c) { return tiles_fill(c.sibling(KernelVariant::Tiled), c, kArgmaxTilesPerSm); }

// SplitKSerial (kernels/argmax_rescan.cuh's merge_serial): for tiles fewer than the block slots the
// GPU holds at once, the number of chunks of K that gives the fewest waves per k of a chunk,
// ceil(tiles * S / slots) / S, the fewest chunks on a tie (each adds a merge per tile), chunks of at
// least kMinSplitChunk. Tiles that fill the slots once are not split: a split there only trims the
// last wave.
std::int64_t serial_splits(const Candidate& c) {
    const std::int64_t tiles = filled_tiles(c.kernel, c.q, c.s);
    const std::int64_t slots = row_of(*c.kernel).min_blocks * c.multiprocessors();
    if (tiles >= slots) return 1;
    const auto waves = [&](std::int64_t splits) { return (tiles * splits + slots - 1) / slots; };
    std::int64_t best = 1;
    for (std::int64_t splits = 2; splits <= std::min(c.s.k / kMinSplitChunk, kMaxSerialSplits); ++splits)
        if (waves(splits) * best < waves(best) * splits) best = splits;
    return best;
}

// ... where it splits K at all and the device gives a block the panel of a chunk's slices.
bool serial_fits(const Candidate& c) {
    if (!argmax_tiles_fill(c)) return false;
    const CatalogueRow& row = row_of(*c.kernel);
    const std::int64_t splits = serial_splits(c);
    return splits > 1 && panel_fits(row, chunk_of(row, c.s, splits), c.device);
}

// PanelRescan: a short K (below kShortArgmaxK), whose rescan from global memory would be a large
// share of the work, rescanned instead from the operands kept resident in shared memory, where the
// device gives a block that panel.
bool panel_rescan_fits(const Candidate& c) {
    return argmax_tiles_fill(c) && panel_fits(row_of(*c.kernel), c.s.k, c.device) && c.s.k < kShortArgmaxK;
}

// SplitKInBlock: where even the Small argmax kernel's blocks leave multiprocessors idle and K is at
// least kInBlockMinSmallSlices of its slices (a step of a Viterbi chain): 16 x 16 tiles give 4 times
// the blocks, and the groups of threads that split K make each result's chain of dependent terms
// shorter.
bool in_block_split_fits(const Candidate& c) {
    const KernelInfo* small = c.sibling(KernelVariant::Small);
    return small && c.s.k >= kInBlockMinSmallSlices * row_of(*small).tile.bk &&
           blocks_of(small, c.q, c.s) < c.multiprocessors();
}

// ---------------------------------------------------------------------------------------------
// The tables. `algorithm` is the table's own name for what the entry's kernel does: the catalogue's
// variant names say less (SplitK is SplitKAtomic for plain products and SplitKInBlock for argmax,
// Batched is 64 x 64 tiles for plain products and PanelRescan for argmax).

struct Entry {
    std::string_view algorithm;
    KernelVariant variant;
    bool (*fits)(const Candidate&);
    std::int64_t (*k_splits)(const Candidate&) = nullptr;  // chunks of K; null: 1
};

// Plain products: the largest tile that the shape fills and that still gives the GPU enough blocks
// (Tiled, else SplitKAtomic for a long K over its few tiles); then the kernels of special layouts and
// shapes (Wide, Vector, Column) ahead of the 64 x 64 Batched tiles; then the smaller kernels: Dense
// where its layout fits, Tiny where tiny_fits says, else Small.
constexpr Entry kProductTable[] = {
    {"OrAndWords", KernelVariant::Packed, orand_words},
    {"OrAndBytes", KernelVariant::Tiled, orand_bytes},
    {"Tiled", KernelVariant::Tiled, tiled_fits},                                // 128 x 128 (64-bit: 64 x 64)
    {"SplitKAtomic", KernelVariant::SplitK, atomic_split_fits, atomic_splits},  // 32-bit types
    {"Wide", KernelVariant::Wide, wide_fits},                                   // whole products to 64 x 64
    {"Vector", KernelVariant::Vector, vector_fits},                             // A of a few rows
    {"Column", KernelVariant::Column, column_fits},                             // B of a few columns
    {"Batched", KernelVariant::Batched, batched_fits},                          // 64 x 64
    {"Dense", KernelVariant::Dense, dense_fits},                                // whole products to 32^3
    {"Tiny", KernelVariant::Tiny, tiny_fits},                                   // 16 x 16
    {"Small", KernelVariant::Small, always},                                    // 32 x 32: 4 to 16 x the blocks
    {"Batched", KernelVariant::Batched, always},                                // without a Small kernel
    {"Tiled", KernelVariant::Tiled, always},  // the 16-bit types' one product kernel so far (issue 35)
};

// Products with argmax, by the same rule over the argmax rows, with two differences: Wide comes
// ahead of the argmax tiles (its whole products per block beat them), and where the 64 x 64 argmax
// tiles fill a block per multiprocessor one of SplitKSerial, PanelRescan or Tiled takes the product
// (Tiled's predicate is the gate the three share, so the search ends there). A smaller shape takes
// SplitKInBlock where even the Small kernel's blocks leave multiprocessors idle and K is long.
constexpr Entry kArgmaxTable[] = {
    {"OrAndWords", KernelVariant::Packed, orand_words},
    {"OrAndBytes", KernelVariant::Tiled, orand_bytes},
    {"Wide", KernelVariant::Wide, wide_argmax_fits},
    {"SplitKSerial", KernelVariant::Serial, serial_fits, serial_splits},  // 32-bit types
    {"PanelRescan", KernelVariant::Batched, panel_rescan_fits},           // 32-bit types
    {"Tiled", KernelVariant::Tiled, argmax_tiles_fill},                   // 64 x 64, rescan from global memory
    {"Vector", KernelVariant::Vector, vector_fits},
    {"Column", KernelVariant::Column, column_fits},
    {"Dense", KernelVariant::Dense, dense_fits},
    {"SplitKInBlock", KernelVariant::SplitK, in_block_split_fits},
    {"Tiny", KernelVariant::Tiny, tiny_fits},
    {"Small", KernelVariant::Small, always},
    {"Tiled", KernelVariant::Tiled, always},  // without a Small kernel
};

// Counting products (kernels/counting.cuh, one loop over 64 x 64, 32 x 32 and 16 x 16 tiles; no
// split-K, kernels/catalogue.def says why): the largest tile that gives the GPU enough blocks, else
// the smallest, whose many blocks suit the tiny products of an einsum's steps.
constexpr Entry kCountingTable[] = {
    {"Tiled", KernelVariant::Tiled, tiled_fills_gpu},
    {"Batched", KernelVariant::Batched, batched_fits},
    {"Small", KernelVariant::Small, always},
};

// LogPlus's Tiled kernels take a product whose filled 64 x 64 tiles give a block per multiprocessor:
// bound by the SFU rather than by latency, they need no second block to hide it. bench/NOTES.md,
// "LogPlus".
bool log_tiles_fill(const Candidate& c) { return tiles_fill(c.kernel, c, kLogPlusTilesPerSm); }

// LogPlus products (kernels/logplus.cuh) and gradients (kernels/logplus_backward.cuh, the shape the
// request's Shape gives them: plan.cpp's log_gradient_shape): the 64 x 64 tiles where they fill the
// GPU, else the Small kernel's small tiles with K split among groups of a block's threads.
constexpr Entry kLogPlusTable[] = {
    {"Tiled", KernelVariant::Tiled, log_tiles_fill},
    {"Small", KernelVariant::Small, always},
};

// The operations of a single kernel.
constexpr Entry kScatterTable[] = {{"Scatter", KernelVariant::Scatter, always}};
constexpr Entry kPackTable[] = {{"Pack", KernelVariant::Packed, always}};
constexpr Entry kWalkTable[] = {{"Walk", KernelVariant::Walk, always}};

struct Table {
    KernelOperation operation;
    std::span<const Entry> entries;
};

Table table_of(const Request& q) {
    switch (q.operation) {
    case Operation::Gemm:
        if (q.with_counts) return {KernelOperation::Gemm, kCountingTable};
        if (info(q.semiring).plus == PlusKind::LogSumExp) return {KernelOperation::Gemm, kLogPlusTable};
        return {KernelOperation::Gemm, kProductTable};
    case Operation::GemmArgmax: return {KernelOperation::GemmArgmax, kArgmaxTable};
    case Operation::BackwardA:
    case Operation::BackwardB: {
        // LogPlus's gradients are products of their own; the others route grad_C through the argmax.
        const auto op = q.operation == Operation::BackwardA ? KernelOperation::BackwardA : KernelOperation::BackwardB;
        if (gradient_reads_result(q.semiring)) return {op, kLogPlusTable};
        return {op, kScatterTable};
    }
    case Operation::PackBits: return {KernelOperation::PackBits, kPackTable};
    case Operation::Backtrack: return {KernelOperation::Backtrack, kWalkTable};
    }
    throw Unsupported("unknown operation");
}

}  // namespace

Choice choose_kernel(const Request& q, const Shape& s, const DeviceLimits& device) {
    const Table table = table_of(q);
    for (const Entry& e : table.entries) {
        const KernelInfo* kernel = find_kernel(table.operation, e.variant, q.dtype, q.semiring);
        if (!kernel) continue;
        const Candidate c{q, s, device, table.operation, kernel};
        if (e.fits(c)) return {kernel, e.k_splits ? e.k_splits(c) : 1};
    }
    std::string variants;  // the table's variants, each once
    for (auto e = table.entries.begin(); e != table.entries.end(); ++e)
        if (std::none_of(table.entries.begin(), e, [&](const Entry& d) { return d.variant == e->variant; }))
            variants += (variants.empty() ? "" : " or ") + std::string(to_string(e->variant));
    throw Unsupported(fmt::format("no {} kernel of the {} variant for {} {}", to_string(table.operation), variants,
                                  to_string(q.dtype), to_string(q.semiring)));
}

std::int64_t chunk_of(const CatalogueRow& row, const Shape& s, std::int64_t splits) {
    return splits > 1 ? tg_split_chunk(s.k, splits, row.tile.bk) : s.k;
}

std::size_t argmax_panel_bytes(const CatalogueRow& row, std::int64_t k) {
    const TileShape& t = row.tile;
    const int element = static_cast<int>(size_of(row.dtype));
    const std::int64_t slices = std::clamp<std::int64_t>((k + t.bk - 1) / t.bk, 1, kTgPanelSlices);
    return static_cast<std::size_t>(slices * tg_panel_slice_elements(t.bm, t.bn, t.bk, element) * element);
}

}  // namespace tropical::detail
