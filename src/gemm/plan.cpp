#include "gemm/plan.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include <tropical/error.hpp>
#include "catalogue/catalogue.hpp"

namespace tropical::detail {
namespace {

constexpr std::int64_t kMaxGridY = 65535;
constexpr std::int64_t kMaxGridZ = 65535;

// Grid caps of the kernels that stride over their work (not measured; enough blocks to fill the GPU
// several times over): the Scatter kernels with a block per row or slab in shared memory, and with
// global atomics; the packing kernel; the backtrack.
constexpr std::int64_t kScatterSharedBlocksPerSm = 64;
constexpr std::int64_t kScatterAtomicBlocksPerSm = 32;
constexpr std::int64_t kPackBlocksPerSm = 16;
constexpr std::int64_t kWalkBlocksPerSm = 16;

TgOperand kernel_operand(const OperandRef& r) {
    return {const_cast<void*>(r.data), r.layout == Layout::RowMajor ? r.ld : 1, r.layout == Layout::RowMajor ? 1 : r.ld,
            r.batch_stride};
}

// The z extent of a Tiny, Dense or Wide launch of grid x and y: one wave of the blocks the
// multiprocessors hold (the row's min_blocks each), looping over the batch, rather than a block per
// product, so that a block's setup (staging map, tile counts, first addresses) is paid once for many
// products; the Dense and Wide kernels also load a product while they compute the one before. Other
// kernels, and a batch smaller than the wave, keep grid[2] (a block per product and chunk).
// bench/NOTES.md, "Kernel choice: the thresholds and their measurements".
unsigned one_wave_grid(const CatalogueRow& row, const unsigned grid[3], const DeviceLimits& device) {
    const bool loops_over_batch =
        row.variant == KernelVariant::Tiny || row.variant == KernelVariant::Dense || row.variant == KernelVariant::Wide;
    if (!loops_over_batch || row.min_blocks <= 0 || device.multiprocessors <= 0) return grid[2];
    const std::int64_t resident = device.multiprocessors * row.min_blocks;
    const std::int64_t tiles = std::int64_t{grid[0]} * grid[1];
    return static_cast<unsigned>(std::min<std::int64_t>(grid[2], std::max<std::int64_t>(1, resident / tiles)));
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
    p.grid[2] = one_wave_grid(row, p.grid, device);
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
    case GradientRoute::Softmax:  // LogPlus: its own backward kernels, not the Scatter ones
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
        blocks = std::min<std::int64_t>(units, device.multiprocessors * kScatterSharedBlocksPerSm);
        p.shared_bytes = static_cast<unsigned>(shared);
    } else {
        const std::int64_t work = s.m * s.n * q.batch;
        blocks = std::clamp<std::int64_t>((work + p.block - 1) / p.block, 1,
                                          device.multiprocessors * kScatterAtomicBlocksPerSm);
    }
    p.grid[0] = static_cast<unsigned>(blocks);
}

// A LogPlus gradient as the product kernels/logplus_backward.cuh computes: P x Q from a P x R and an
// R x Q operand, grad_A (M x K over N) as it is and grad_B (K x N over M) as its transpose.
Shape log_gradient_shape(const Request& q, const Shape& s) {
    return q.operation == Operation::BackwardA ? Shape{s.m, s.k, s.n} : Shape{s.n, s.k, s.m};
}

TgOperand transposed(const OperandRef& r) {
    TgOperand t = kernel_operand(r);
    std::swap(t.row_stride, t.col_stride);
    return t;
}

void plan_log_backward(LaunchPlan& p, const Request& q, const Shape& s) {
    const CatalogueRow& row = row_of(*p.choice.kernel);
    const bool for_a = q.operation == Operation::BackwardA;
    const Shape g = log_gradient_shape(q, s);
    TgLogBackwardParams& params = p.log_backward;
    // (q.c is grad_C and q.argmax the forward's C: request.hpp's backward_request.)
    params.g = for_a ? kernel_operand(q.c) : transposed(q.c);
    params.c = for_a ? kernel_operand(q.argmax) : transposed(q.argmax);
    params.other = for_a ? transposed(q.b) : kernel_operand(q.a);
    params.self = for_a ? kernel_operand(q.a) : transposed(q.b);
    params.out = for_a ? kernel_operand(q.grad) : transposed(q.grad);
    params.p = g.m, params.q = g.n, params.r = g.k, params.batch = q.batch;
    params.accumulate = q.options.accumulate ? 1 : 0;
    const std::int64_t grid_x = (g.n + row.tile.bn - 1) / row.tile.bn;
    if (grid_x > 0x7fffffff)
        throw InvalidArgument(fmt::format("the gradient has too many columns ({}) for one launch", g.n));
    p.grid[0] = static_cast<unsigned>(grid_x);
    p.grid[1] = static_cast<unsigned>(std::min((g.m + row.tile.bm - 1) / row.tile.bm, kMaxGridY));
    p.grid[2] = static_cast<unsigned>(std::min(q.batch, kMaxGridZ));
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
    p.grid[0] = static_cast<unsigned>(std::clamp<std::int64_t>(
        (units + warps - 1) / warps, 1, std::max<std::int64_t>(device.multiprocessors, 1) * kPackBlocksPerSm));
}

// A thread per row (kernels/backtrack.cuh), as many blocks as the rows need up to 16 per
// multiprocessor (the rows are strided over beyond).
void plan_backtrack(LaunchPlan& p, const Request& q, const Shape& s, const DeviceLimits& device) {
    TgBacktrackParams& params = p.backtrack;
    params.back = kernel_operand(q.argmax);
    params.last = kernel_operand(q.a);
    params.path = kernel_operand(q.c);
    params.rows = s.m, params.states = s.n, params.steps = s.k;
    p.grid[0] = static_cast<unsigned>(std::clamp<std::int64_t>(
        (s.m + p.block - 1) / p.block, 1, std::max<std::int64_t>(device.multiprocessors, 1) * kWalkBlocksPerSm));
}

}  // namespace

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
    const bool backward = q.operation == Operation::BackwardA || q.operation == Operation::BackwardB;
    const bool log_gradient = backward && gradient_reads_result(q.semiring);
    p.choice = choose_kernel(q, log_gradient ? log_gradient_shape(q, s) : s, device);
    p.block = static_cast<unsigned>(row_of(*p.choice.kernel).threads);
    if (log_gradient) plan_log_backward(p, q, s);
    else if (backward) plan_backward(p, q, s, device);
    else if (q.operation == Operation::PackBits) plan_pack(p, q, s, device);
    else if (q.operation == Operation::Backtrack) plan_backtrack(p, q, s, device);
    else plan_product(p, q, s, device);
    return p;
}

}  // namespace tropical::detail
