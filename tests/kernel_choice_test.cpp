// Which kernel a request gets (src/gemm/plan.cpp), without a GPU: the big-tile gemm kernel
// where its tiles fill the GPU, the split-K kernels for a long K over too few tiles (32-bit types,
// no accumulate, C in one piece), the batched, small and tiny kernels for the rest.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <tropical/error.hpp>
#include "catalogue/catalogue.hpp"
#include "gemm/plan.hpp"

using namespace tropical;
using namespace tropical::detail;

namespace {

constexpr std::int64_t kH200 = 132;          // multiprocessors
constexpr std::size_t kH200Shared = 232448;  // shared memory per block, opted in

struct Product {
    std::int64_t m, n, k, batch = 1;
    DType dtype = DType::F32;
    Semiring semiring = Semiring::MaxPlus;
    bool accumulate = false;
    std::int64_t c_gap = 0;  // elements between C's matrices in a batch
    Layout c_layout = Layout::RowMajor;
};

Request request_of(const Product& p, Operation operation = Operation::Gemm) {
    Request q;
    q.operation = operation;
    q.dtype = p.dtype;
    q.semiring = p.semiring;
    q.a = {nullptr, p.m, p.k, p.k, Layout::RowMajor, p.batch > 1 ? p.m * p.k : 0};
    q.b = {nullptr, p.k, p.n, p.n, Layout::RowMajor, p.batch > 1 ? p.k * p.n : 0};
    const std::int64_t ld = p.c_layout == Layout::RowMajor ? p.n : p.m;
    q.c = {nullptr, p.m, p.n, ld, p.c_layout, p.batch > 1 ? p.m * p.n + p.c_gap : 0};
    q.batch = p.batch;
    q.options.accumulate = p.accumulate;
    return q;
}

Choice choose(const Product& p, std::int64_t multiprocessors = kH200, Operation operation = Operation::Gemm) {
    return choose_kernel(request_of(p, operation), Shape{p.m, p.n, p.k}, {multiprocessors, kH200Shared});
}

std::string name_of(const Choice& c) { return std::string(c.kernel->name); }

TEST(KernelChoice, BigProductsTakeTheGemmKernelWhole) {
    for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64}) {
        const Choice c = choose({8192, 8192, 8192, 1, t});
        EXPECT_EQ(name_of(c), "tropical_gemm_" + std::string(to_string(t)) + "_maxplus");
        EXPECT_EQ(c.k_splits, 1);
    }
}

TEST(KernelChoice, LongKOverFewTilesSplitsK) {
    // 1024^3: 64 tiles of 128 x 128 for 264 block slots: K in 4 chunks of 256.
    Choice c = choose({1024, 1024, 1024});
    EXPECT_EQ(name_of(c), "tropical_splitk_f32_maxplus");
    EXPECT_EQ(c.k_splits, 4);
    // 4 tiles, K = 65536: as many chunks as fill the slots.
    c = choose({256, 256, 65536, 1, DType::I32, Semiring::MinPlus});
    EXPECT_EQ(name_of(c), "tropical_splitk_i32_minplus");
    EXPECT_EQ(c.k_splits, 66);
    // Chunks of at least 128: K = 8192 over 4 tiles gives 64 of them.
    EXPECT_EQ(choose({256, 256, 8192, 1, DType::F32, Semiring::MaxMul}).k_splits, 64);
    // A batch counts its tiles: 3 x 1 tile.
    c = choose({128, 128, 12800, 3});
    EXPECT_EQ(name_of(c), "tropical_splitk_f32_maxplus");
    EXPECT_EQ(c.k_splits, 88);
    // A column-major C is filled as well as a row-major one.
    EXPECT_GT(choose({1024, 1024, 1024, 1, DType::F32, Semiring::MaxPlus, false, 0, Layout::ColMajor}).k_splits, 1);
    // A smaller GPU needs fewer chunks.
    EXPECT_EQ(choose({1024, 1024, 1024}, 16).k_splits, 1);  // 64 tiles already fill 32 slots
    EXPECT_EQ(choose({256, 256, 8192}, 16).k_splits, 8);
}

TEST(KernelChoice, SplitKOnlyWhereItsAtomicsAndFillWork) {
    // f64 and i64 have no split-K kernels: the batched kernel's smaller tiles instead.
    for (DType t : {DType::F64, DType::I64}) {
        const Choice c = choose({1024, 1024, 1024, 1, t});
        EXPECT_EQ(name_of(c), "tropical_batched_" + std::string(to_string(t)) + "_maxplus");
        EXPECT_EQ(c.k_splits, 1);
    }
    // Accumulating: C holds old values, not the zero the chunks combine into.
    EXPECT_EQ(choose({1024, 1024, 1024, 1, DType::F32, Semiring::MaxPlus, true}).k_splits, 1);
    // A batched C with gaps between its matrices would need a fill per matrix.
    EXPECT_EQ(choose({128, 128, 12800, 3, DType::F32, Semiring::MaxPlus, false, 7}).k_splits, 1);
    // Too short a K for chunks of 128 to fill 3/4 of the slots: 512^3 makes 16 tiles x 4 chunks.
    EXPECT_EQ(choose({512, 512, 512}).k_splits, 1);
    // The tiles must be filled: 130 x 130 covers a quarter of 4 tiles.
    EXPECT_EQ(choose({130, 130, 65536}).k_splits, 1);
    // Argmax splits K across blocks only in the Serial kernels (32-bit types; the SplitK argmax
    // kernels split it among a block's threads), and the backward kernels never do.
    EXPECT_EQ(name_of(choose({1024, 1024, 1024}, kH200, Operation::GemmArgmax)), "tropical_serial_argmax_f32_maxplus");
    EXPECT_EQ(choose({1024, 1024, 1024, 1, DType::F64}, kH200, Operation::GemmArgmax).k_splits, 1);
    EXPECT_EQ(choose({64, 256, 256}, kH200, Operation::GemmArgmax).k_splits, 1);
    EXPECT_EQ(choose({1024, 1024, 1024}, kH200, Operation::BackwardA).k_splits, 1);
}

// Argmax with fewer 64 x 64 tiles than the GPU's block slots (3 per multiprocessor) and a K of at
// least two chunks of 128: the Serial kernels, with the chunks that give the fewest waves per k of a
// chunk; C and argmax are filled with the zero and -1 first, and the panel holds a chunk's slices.
TEST(KernelChoice, SerialArgmaxSplitsALongKOverFewTiles) {
    const auto serial = [](const Product& p, std::int64_t sms = kH200, std::size_t shared = kH200Shared) {
        const LaunchPlan planned = plan(request_of(p, Operation::GemmArgmax), Shape{p.m, p.n, p.k}, {sms, shared});
        return name_of(planned.choice) + " x" + std::to_string(planned.choice.k_splits) + " " +
               std::to_string(planned.shared_bytes) + " z" + std::to_string(planned.grid[2]) +
               (planned.fill == LaunchPlan::Fill::ResultWithZeroArgmaxWithNone ? " filled" : "");
    };
    // 1024^3: 256 tiles over 396 slots; 3 chunks of 344 make two waves of a third of K.
    EXPECT_EQ(serial({1024, 1024, 1024}), "tropical_serial_argmax_f32_maxplus x3 69888 z3 filled");
    EXPECT_EQ(serial({1024, 1024, 1024, 1, DType::I32, Semiring::MinMax}),
              "tropical_serial_argmax_i32_minmax x3 69888 z3 filled");
    // 192 tiles: 2 chunks make one wave.
    EXPECT_EQ(serial({1024, 768, 1024}), "tropical_serial_argmax_f32_maxplus x2 69888 z2 filled");
    // Chunks of at least 128: K = 384 gives 3 of 128 (16 slices); K = 256 would give 2, no fewer
    // waves per k than 1, so the Batched kernel takes it whole.
    EXPECT_EQ(serial({1024, 1024, 384}), "tropical_serial_argmax_f32_maxplus x3 69888 z3 filled");
    EXPECT_EQ(serial({1024, 1024, 256}), "tropical_batched_argmax_f32_maxplus x1 69888 z1");
    // A batch counts its tiles, and its z runs over products x chunks.
    EXPECT_EQ(serial({512, 512, 1024, 4}), "tropical_serial_argmax_f32_maxplus x3 69888 z12 filled");
    // Tiles that fill the slots once, 64-bit types and a device whose blocks cannot hold the panel:
    // no split.
    EXPECT_EQ(serial({2048, 2048, 2048}), "tropical_gemm_argmax_f32_maxplus x1 0 z1");
    EXPECT_EQ(serial({1024, 1024, 1024, 1, DType::F64}), "tropical_gemm_argmax_f64_maxplus x1 0 z1");
    EXPECT_EQ(serial({1024, 1024, 1024}, kH200, 65536), "tropical_gemm_argmax_f32_maxplus x1 0 z1");
    // At most 8 chunks, and a long K keeps the best of them.
    EXPECT_EQ(serial({1024, 1024, 100000}), "tropical_serial_argmax_f32_maxplus x3 69888 z3 filled");
    // A smaller GPU: 16 tiles over 48 slots.
    EXPECT_EQ(serial({256, 256, 1024}, 16), "tropical_serial_argmax_f32_maxplus x3 69888 z3 filled");
}

TEST(KernelChoice, ArgmaxFollowsTheShapeToo) {
    const auto argmax = [](const Product& p) { return name_of(choose(p, kH200, Operation::GemmArgmax)); };
    // Fewer 64 x 64 tiles than multiprocessors: the Small argmax kernel, for every type,
    for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64})
        EXPECT_EQ(argmax({500, 450, 64, 1, t}), "tropical_small_argmax_" + std::string(to_string(t)) + "_maxplus");
    // or, where its 32 x 32 tiles too are fewer than the multiprocessors and K is at least two of its
    // slices, the SplitK argmax kernel.
    for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64})
        EXPECT_EQ(argmax({256, 256, 256, 1, t}), "tropical_splitk_argmax_" + std::string(to_string(t)) + "_maxplus");
    EXPECT_EQ(argmax({64, 256, 256, 1, DType::F32, Semiring::MinMax}), "tropical_splitk_argmax_f32_minmax");
    EXPECT_EQ(argmax({5, 1024, 1024}), "tropical_splitk_argmax_f32_maxplus");
    EXPECT_EQ(argmax({100, 5, 64}), "tropical_splitk_argmax_f32_maxplus");  // (up to 4 columns: Column)
    EXPECT_EQ(argmax({100, 5, 63}), "tropical_small_argmax_f32_maxplus");
    EXPECT_EQ(argmax({32, 32, 256, 131}), "tropical_splitk_argmax_f32_maxplus");
    EXPECT_EQ(argmax({32, 32, 256, 132}), "tropical_small_argmax_f32_maxplus");
    // Enough tiles and a short K: the Batched argmax kernel (32-bit types), else the Tiled one.
    EXPECT_EQ(argmax({128, 128, 128, 4096}), "tropical_batched_argmax_f32_maxplus");
    EXPECT_EQ(argmax({64, 64, 64, 16384, DType::I32, Semiring::MinMax}), "tropical_batched_argmax_i32_minmax");
    EXPECT_EQ(argmax({128, 128, 128, 4096, DType::F64}), "tropical_gemm_argmax_f64_maxplus");
    EXPECT_EQ(argmax({8192, 8192, 8192}), "tropical_gemm_argmax_f32_maxplus");
    EXPECT_EQ(argmax({4096, 4096, 512}), "tropical_batched_argmax_f32_maxplus");
    // A smaller GPU is filled by fewer tiles (with a K too short to split: Serial below).
    EXPECT_EQ(name_of(choose({256, 256, 200}, 16, Operation::GemmArgmax)), "tropical_batched_argmax_f32_maxplus");
}

// The Batched argmax kernel keeps up to 16 slices of 8 k of both 64 x 64 tiles resident (rows padded
// by 4 elements, each slice by 4 more: 1092 elements), as much as the launch's K needs; a device
// whose blocks cannot hold that panel takes the Tiled argmax kernel instead.
TEST(KernelChoice, BatchedArgmaxPanelSizesItsLaunchAndNeedsTheRoom) {
    const auto launch = [](const Product& p, std::size_t shared) {
        const LaunchPlan planned = plan(request_of(p, Operation::GemmArgmax), Shape{p.m, p.n, p.k}, {kH200, shared});
        return name_of(planned.choice) + " " + std::to_string(planned.shared_bytes);
    };
    EXPECT_EQ(launch({64, 64, 64, 16384}, kH200Shared), "tropical_batched_argmax_f32_maxplus 34944");
    EXPECT_EQ(launch({128, 128, 128, 4096}, kH200Shared), "tropical_batched_argmax_f32_maxplus 69888");
    EXPECT_EQ(launch({128, 128, 130, 4096, DType::I32}, kH200Shared), "tropical_batched_argmax_i32_maxplus 69888");
    EXPECT_EQ(launch({256, 256, 256, 1024}, kH200Shared), "tropical_batched_argmax_f32_maxplus 69888");
    EXPECT_EQ(launch({128, 128, 3, 4096}, kH200Shared), "tropical_batched_argmax_f32_maxplus 4368");
    EXPECT_EQ(launch({128, 128, 128, 4096}, 65536), "tropical_gemm_argmax_f32_maxplus 0");
    EXPECT_EQ(launch({128, 128, 64, 4096}, 65536), "tropical_batched_argmax_f32_maxplus 34944");
}

TEST(KernelChoice, SmallProductsTakeTheSmallKernels) {
    EXPECT_EQ(name_of(choose({64, 64, 64})), "tropical_small_f32_maxplus");
    EXPECT_EQ(name_of(choose({64, 64, 64, 4096})), "tropical_batched_f32_maxplus");
    EXPECT_EQ(choose({64, 64, 64}).k_splits, 1);
}

// Many tiny products, and a K of at most 16, take the Tiny kernels (16 x 16 tiles, slices of 8),
// plain and with argmax; a single product with a longer K stays on the Small ones.
TEST(KernelChoice, TinyProductsTakeTheTinyKernels) {
    const auto both = [](const Product& p, std::int64_t sms = kH200) {
        return name_of(choose(p, sms)) + " " + name_of(choose(p, sms, Operation::GemmArgmax));
    };
    // (16^3 with a gap of one element between C's matrices: not the Dense kernel's, whose matrices
    // start on 16-byte boundaries.)
    EXPECT_EQ(both({16, 16, 16, 65536, DType::F32, Semiring::MaxPlus, false, 1}),
              "tropical_tiny_f32_maxplus tropical_tiny_argmax_f32_maxplus");
    EXPECT_EQ(both({32, 32, 8, 16384, DType::I64, Semiring::MinMax, false, 1}),
              "tropical_tiny_i64_minmax tropical_tiny_argmax_i64_minmax");
    // K within half a Small slice: Tiny, whatever the batch.
    EXPECT_EQ(both({256, 256, 8}), "tropical_tiny_f32_maxplus tropical_tiny_argmax_f32_maxplus");
    EXPECT_EQ(both({1, 1, 1, 1, DType::F64}), "tropical_tiny_f64_maxplus tropical_tiny_argmax_f64_maxplus");
    // A longer K over sides that leave the Small tile mostly empty: Tiny for a batch of at least one
    // product per multiprocessor, Small below that.
    EXPECT_EQ(both({20, 12, 30, kH200}), "tropical_tiny_f32_maxplus tropical_tiny_argmax_f32_maxplus");
    EXPECT_EQ(both({20, 12, 30, kH200 - 1}), "tropical_small_f32_maxplus tropical_small_argmax_f32_maxplus");
    EXPECT_EQ(both({40, 36, 20}), "tropical_small_f32_maxplus tropical_small_argmax_f32_maxplus");
    EXPECT_EQ(both({16, 16, 17}), "tropical_small_f32_maxplus tropical_small_argmax_f32_maxplus");
    // Sides that fill the Small tile with a K beyond 16 stay there; tiles of 64 that fill the GPU
    // take the Batched kernels first (a K of 16 laid out for vectors: the Wide ones, below).
    EXPECT_EQ(name_of(choose({32, 32, 17, 100000})), "tropical_small_f32_maxplus");
    EXPECT_EQ(name_of(choose({64, 64, 17, 4096})), "tropical_batched_f32_maxplus");
}

// A Tiny launch is one wave of the blocks the multiprocessors hold, looping over the batch; a batch
// smaller than that keeps a block per product.
TEST(KernelChoice, TinyLaunchesOneWaveOfResidentBlocks) {
    const auto grid_of = [](const Product& p) {
        const LaunchPlan launch = plan(request_of(p), Shape{p.m, p.n, p.k}, {kH200, 0});
        EXPECT_EQ(launch.choice.kernel->variant, KernelVariant::Tiny);
        return std::to_string(launch.grid[0]) + "x" + std::to_string(launch.grid[1]) + "x" +
               std::to_string(launch.grid[2]);
    };
    const int per_sm =
        row_of(*find_kernel(KernelOperation::Gemm, KernelVariant::Tiny, DType::F32, Semiring::MaxPlus)).min_blocks;
    EXPECT_EQ(grid_of({16, 16, 15, 65536}), "1x1x" + std::to_string(kH200 * per_sm));
    EXPECT_EQ(grid_of({32, 32, 7, 16384}), "2x2x" + std::to_string(kH200 * per_sm / 4));
    EXPECT_EQ(grid_of({16, 16, 15, 100}), "1x1x100");
}

// Products of at most 32 x 32 x 32 whose A and B are contiguous row-major arrays, C row-major with
// rows of whole 16-byte vectors, K and N whole vectors, and every matrix 16-byte aligned take the
// Dense kernels, plain and with argmax; a product that misses any of it takes the Tiny kernel.
TEST(KernelChoice, DenseProductsTakeTheDenseKernels) {
    const auto both = [](const Product& p) {
        return name_of(choose(p)) + " " + name_of(choose(p, kH200, Operation::GemmArgmax));
    };
    EXPECT_EQ(both({16, 16, 16, 65536}), "tropical_dense_f32_maxplus tropical_dense_argmax_f32_maxplus");
    EXPECT_EQ(name_of(choose({16, 16, 16, 65536, DType::F64})), "tropical_dense_f64_maxplus");
    EXPECT_EQ(name_of(choose({4, 8, 12, 1000, DType::I32, Semiring::MaxMul})), "tropical_dense_i32_maxmul");
    EXPECT_EQ(name_of(choose({5, 6, 2, 300, DType::I64, Semiring::MinMax})), "tropical_dense_i64_minmax");
    EXPECT_EQ(name_of(choose({1, 4, 4})), "tropical_dense_f32_maxplus");
    EXPECT_EQ(both({32, 32, 8, 16384}), "tropical_dense_f32_maxplus tropical_dense_argmax_f32_maxplus");
    EXPECT_EQ(name_of(choose({5, 6, 2, 300, DType::I64, Semiring::MinMax}, kH200, Operation::GemmArgmax)),
              "tropical_dense_argmax_i64_minmax");
    EXPECT_EQ(name_of(choose({1, 4, 4}, kH200, Operation::GemmArgmax)), "tropical_dense_argmax_f32_maxplus");
    EXPECT_EQ(name_of(choose({32, 32, 32, 100, DType::F64})), "tropical_dense_f64_maxplus");
    // A gap between C's matrices that keeps them aligned, and accumulation.
    EXPECT_EQ(name_of(choose({16, 16, 16, 65536, DType::F32, Semiring::MaxPlus, true, 4})),
              "tropical_dense_f32_maxplus");
    // Not the Dense kernel's: a side past 32, N or K not whole vectors, C column-major or unaligned.
    for (const Product& p :
         {Product{33, 16, 16, 65536}, Product{16, 16, 36, 65536}, Product{16, 14, 16, 65536}, Product{16, 16, 6, 65536},
          Product{16, 16, 16, 65536, DType::F64, Semiring::MaxPlus, false, 1},
          Product{16, 16, 16, 65536, DType::F32, Semiring::MaxPlus, false, 0, Layout::ColMajor}})
        for (const Operation operation : {Operation::Gemm, Operation::GemmArgmax})
            EXPECT_NE(choose(p, kH200, operation).kernel->variant, KernelVariant::Dense)
                << p.m << " x " << p.n << " x " << p.k;
    // A or B not one contiguous array, or an operand's start off a 16-byte boundary.
    const Product p{16, 16, 16, 65536};
    const Shape s{p.m, p.n, p.k};
    Request padded = request_of(p);
    padded.a.ld = 20;
    padded.a.batch_stride = 16 * 20;
    EXPECT_EQ(choose_kernel(padded, s, {kH200, kH200Shared}).kernel->variant, KernelVariant::Tiny);
    Request column_major_b = request_of(p);
    column_major_b.b.layout = Layout::ColMajor;
    EXPECT_EQ(choose_kernel(column_major_b, s, {kH200, kH200Shared}).kernel->variant, KernelVariant::Tiny);
    Request offset = request_of(p);
    alignas(16) static const float storage[8] = {};
    offset.b.data = storage + 1;  // 4 bytes past an aligned start
    EXPECT_NE(choose_kernel(offset, s, {kH200, kH200Shared}).kernel->variant, KernelVariant::Dense);
    // One wave of resident blocks, as the Tiny kernels.
    const int per_sm =
        row_of(*find_kernel(KernelOperation::Gemm, KernelVariant::Dense, DType::F32, Semiring::MaxPlus)).min_blocks;
    const LaunchPlan launch = plan(request_of(p), s, {kH200, 0});
    EXPECT_EQ(launch.grid[2], static_cast<unsigned>(kH200 * per_sm));
}

// Products laid out as the Dense kernels' (contiguous row-major A and B, C row-major, whole vectors,
// 16-byte aligned) with a side past 32, sides of at most 64 that cover a quarter of the 64 x 64 tile or more
// and a K of at most 32 (16 for 64-bit types) take the Wide kernels where they are at least one per multiprocessor: ahead
// of the Batched kernels, whose tiles they fill. Fewer products, or narrower ones, keep the kernels
// they had. With argmax, the Wide argmax kernels by the same rule.
TEST(KernelChoice, WideProductsTakeTheWideKernels) {
    EXPECT_EQ(name_of(choose({64, 64, 16, 4096})), "tropical_wide_f32_maxplus");
    EXPECT_EQ(name_of(choose({64, 64, 32, kH200})), "tropical_wide_f32_maxplus");
    EXPECT_EQ(name_of(choose({64, 64, 16, kH200, DType::F64, Semiring::MinPlus})), "tropical_wide_f64_minplus");
    EXPECT_EQ(name_of(choose({48, 48, 16, 8192, DType::I32, Semiring::MaxMin})), "tropical_wide_i32_maxmin");
    EXPECT_EQ(name_of(choose({36, 60, 4, 1000, DType::I64, Semiring::MaxMul})), "tropical_wide_i64_maxmul");
    EXPECT_EQ(name_of(choose({40, 52, 8, 1000})), "tropical_wide_f32_maxplus");
    EXPECT_EQ(name_of(choose({64, 64, 16, 4096, DType::F32, Semiring::MaxPlus, true, 4})), "tropical_wide_f32_maxplus");
    EXPECT_EQ(name_of(choose({16, 64, 8, 4096})), "tropical_wide_f32_maxplus");
    // Within the Dense tile: the Dense kernels; fewer products than multiprocessors, or less than a
    // quarter of the tile: the Tiny ones (a K of at most 16).
    EXPECT_EQ(name_of(choose({32, 32, 16, 4096})), "tropical_dense_f32_maxplus");
    EXPECT_EQ(name_of(choose({64, 64, 16, kH200 - 1})), "tropical_tiny_f32_maxplus");
    EXPECT_EQ(name_of(choose({12, 64, 8, 4096})), "tropical_tiny_f32_maxplus");
    EXPECT_EQ(name_of(choose({33, 4, 4, 4096})), "tropical_tiny_f32_maxplus");
    // With argmax: the Wide argmax kernels, by the same rule (ahead of the Batched and Serial argmax
    // kernels, whose 64 x 64 tiles these products fill).
    EXPECT_EQ(name_of(choose({64, 64, 16, 4096}, kH200, Operation::GemmArgmax)), "tropical_wide_argmax_f32_maxplus");
    EXPECT_EQ(name_of(choose({48, 48, 16, 8192, DType::I32, Semiring::MaxMin}, kH200, Operation::GemmArgmax)),
              "tropical_wide_argmax_i32_maxmin");
    EXPECT_EQ(name_of(choose({32, 32, 16, 4096}, kH200, Operation::GemmArgmax)), "tropical_dense_argmax_f32_maxplus");
    EXPECT_NE(choose({64, 64, 16, kH200 - 1}, kH200, Operation::GemmArgmax).kernel->variant, KernelVariant::Wide);
    // The 64-bit types' Tiled kernels take 64 x 64 tiles where they fill two blocks per multiprocessor,
    // and so do their argmax twins.
    EXPECT_EQ(name_of(choose({64, 64, 16, 4096, DType::F64})), "tropical_gemm_f64_maxplus");
    EXPECT_EQ(name_of(choose({64, 64, 16, 4096, DType::F64}, kH200, Operation::GemmArgmax)),
              "tropical_gemm_argmax_f64_maxplus");
    EXPECT_EQ(name_of(choose({44, 64, 16, 4096, DType::F64})), "tropical_wide_f64_maxplus");
    EXPECT_EQ(name_of(choose({44, 64, 16, 4096, DType::F64}, kH200, Operation::GemmArgmax)),
              "tropical_wide_argmax_f64_maxplus");
    // Not the Wide kernel's: a side past 64, K past 32, N or K not whole vectors, C column-major or
    // unaligned.
    for (const Product& p :
         {Product{65, 64, 16, 4096}, Product{64, 68, 16, 4096}, Product{64, 64, 36, 4096}, Product{64, 62, 16, 4096},
          Product{64, 64, 14, 4096}, Product{44, 64, 18, 4096, DType::I64},
          Product{64, 64, 16, 4096, DType::F64, Semiring::MaxPlus, false, 1},
          Product{64, 64, 16, 4096, DType::F32, Semiring::MaxPlus, false, 0, Layout::ColMajor}})
        for (const Operation operation : {Operation::Gemm, Operation::GemmArgmax})
            EXPECT_NE(choose(p, kH200, operation).kernel->variant, KernelVariant::Wide)
                << p.m << " x " << p.n << " x " << p.k;
    // One wave of resident blocks, looping over the batch.
    const int per_sm =
        row_of(*find_kernel(KernelOperation::Gemm, KernelVariant::Wide, DType::F32, Semiring::MaxPlus)).min_blocks;
    const Product p{64, 64, 16, 4096};
    const LaunchPlan launch = plan(request_of(p), Shape{p.m, p.n, p.k}, {kH200, 0});
    EXPECT_EQ(launch.choice.kernel->variant, KernelVariant::Wide);
    EXPECT_EQ(
        std::to_string(launch.grid[0]) + "x" + std::to_string(launch.grid[1]) + "x" + std::to_string(launch.grid[2]),
        "1x1x" + std::to_string(kH200 * per_sm));
}

// An A of at most 4 rows (a row vector times a matrix: a Viterbi step over one sequence) with a K of
// at least 64 and a row-major B takes the Vector kernels, plain and with argmax, whatever the type,
// semiring, A's and C's layouts, in batches of fewer products than multiprocessors; a grid of
// 8-column strips by 4-row tiles by the batch.
TEST(KernelChoice, RowVectorsTakeTheVectorKernels) {
    const auto both = [](const Product& p) {
        return name_of(choose(p)) + " " + name_of(choose(p, kH200, Operation::GemmArgmax));
    };
    EXPECT_EQ(both({1, 1024, 1024}), "tropical_vector_f32_maxplus tropical_vector_argmax_f32_maxplus");
    EXPECT_EQ(both({4, 100, 64, 1, DType::I64, Semiring::MinMax}),
              "tropical_vector_i64_minmax tropical_vector_argmax_i64_minmax");
    EXPECT_EQ(both({2, 1, 100000, 7, DType::F64, Semiring::MaxMul}),
              "tropical_vector_f64_maxmul tropical_vector_argmax_f64_maxmul");
    EXPECT_EQ(both({3, 65536, 512, 1, DType::I32, Semiring::MaxMin, false, 0, Layout::ColMajor}),
              "tropical_vector_i32_maxmin tropical_vector_argmax_i32_maxmin");
    EXPECT_EQ(name_of(choose({1, 256, 256, 1, DType::F32, Semiring::MaxPlus, true})), "tropical_vector_f32_maxplus");
    EXPECT_EQ(both({1, 256, 256, kH200 - 1}), "tropical_vector_f32_maxplus tropical_vector_argmax_f32_maxplus");
    // Five rows, a K below 64, a product per multiprocessor or more, or B column-major: the tiled
    // kernels.
    EXPECT_EQ(both({1, 256, 256, kH200}), "tropical_tiny_f32_maxplus tropical_tiny_argmax_f32_maxplus");
    EXPECT_EQ(both({5, 1024, 1024}), "tropical_small_f32_maxplus tropical_splitk_argmax_f32_maxplus");
    EXPECT_EQ(both({1, 1024, 63}), "tropical_small_f32_maxplus tropical_small_argmax_f32_maxplus");
    Request q = request_of({1, 1024, 1024});
    q.b = {nullptr, 1024, 1024, 1024, Layout::ColMajor, 0};
    EXPECT_NE(choose_kernel(q, Shape{1, 1024, 1024}, {kH200, kH200Shared}).kernel->variant, KernelVariant::Vector);
    const Product p{3, 1001, 4096, 5};
    const LaunchPlan launch = plan(request_of(p, Operation::GemmArgmax), Shape{p.m, p.n, p.k}, {kH200, kH200Shared});
    EXPECT_EQ(name_of(launch.choice), "tropical_vector_argmax_f32_maxplus");
    EXPECT_EQ(
        std::to_string(launch.grid[0]) + "x" + std::to_string(launch.grid[1]) + "x" + std::to_string(launch.grid[2]),
        "126x1x5");
    EXPECT_EQ(launch.block, 512u);
    EXPECT_EQ(launch.shared_bytes, 0u);
    EXPECT_EQ(launch.fill, LaunchPlan::Fill::None);
}

// A B of at most 4 columns (a matrix times column vectors: a Bellman-Ford relaxation) times a row-major
// A takes the Column kernels, plain and with argmax, in batches of fewer products than multiprocessors
// or with a K of at least 256: a warp per row, 8 rows a block; a row-major B of at most 4 rows and
// columns is the Vector kernels' first.
TEST(KernelChoice, ColumnVectorsTakeTheColumnKernels) {
    const auto both = [](const Product& p) {
        return name_of(choose(p)) + " " + name_of(choose(p, kH200, Operation::GemmArgmax));
    };
    EXPECT_EQ(both({4096, 1, 4096}), "tropical_column_f32_maxplus tropical_column_argmax_f32_maxplus");
    EXPECT_EQ(both({100, 4, 32, 1, DType::I64, Semiring::MinMax}),
              "tropical_column_i64_minmax tropical_column_argmax_i64_minmax");
    EXPECT_EQ(both({5, 2, 100000, 7, DType::F64, Semiring::MaxMul}),
              "tropical_column_f64_maxmul tropical_column_argmax_f64_maxmul");
    EXPECT_EQ(both({65536, 3, 512, 1, DType::I32, Semiring::MaxMin, false, 0, Layout::ColMajor}),
              "tropical_column_i32_maxmin tropical_column_argmax_i32_maxmin");
    EXPECT_EQ(name_of(choose({256, 1, 256, 1, DType::F32, Semiring::MaxPlus, true})), "tropical_column_f32_maxplus");
    EXPECT_EQ(both({256, 1, 256, kH200 - 1}), "tropical_column_f32_maxplus tropical_column_argmax_f32_maxplus");
    EXPECT_EQ(both({4, 1, 1024}), "tropical_vector_f32_maxplus tropical_vector_argmax_f32_maxplus");
    // A batch of a product per multiprocessor or more, with a K of at least 256.
    EXPECT_EQ(both({256, 1, 256, kH200}), "tropical_column_f32_maxplus tropical_column_argmax_f32_maxplus");
    // Five columns, a K below 32, a batch of a product per multiprocessor or more with a shorter K, or
    // A column-major: other kernels.
    EXPECT_EQ(both({256, 1, 255, kH200}), "tropical_tiny_f32_maxplus tropical_tiny_argmax_f32_maxplus");
    EXPECT_EQ(both({32, 1, 64, 16384}), "tropical_tiny_f32_maxplus tropical_tiny_argmax_f32_maxplus");
    EXPECT_EQ(both({1024, 5, 1024}), "tropical_small_f32_maxplus tropical_splitk_argmax_f32_maxplus");
    EXPECT_EQ(both({1024, 1, 31}), "tropical_small_f32_maxplus tropical_small_argmax_f32_maxplus");
    Request q = request_of({1024, 1, 1024});
    q.a = {nullptr, 1024, 1024, 1024, Layout::ColMajor, 0};
    EXPECT_NE(choose_kernel(q, Shape{1024, 1, 1024}, {kH200, kH200Shared}).kernel->variant, KernelVariant::Column);
    const Product p{1000001, 3, 4096, 5};
    const LaunchPlan launch = plan(request_of(p, Operation::GemmArgmax), Shape{p.m, p.n, p.k}, {kH200, kH200Shared});
    EXPECT_EQ(name_of(launch.choice), "tropical_column_argmax_f32_maxplus");
    // 125001 strips of 8 rows, more than a grid's 65535 rows: the blocks loop over the rest.
    EXPECT_EQ(
        std::to_string(launch.grid[0]) + "x" + std::to_string(launch.grid[1]) + "x" + std::to_string(launch.grid[2]),
        "1x65535x5");
    EXPECT_EQ(launch.block, 256u);
    EXPECT_EQ(launch.shared_bytes, 0u);
    EXPECT_EQ(launch.fill, LaunchPlan::Fill::None);
}

// OrAnd: bytes go to the Tiled kernels (which pack them as they stage them) and packed operands to
// the Packed ones, at every shape and batch; the packing kernel's grid covers its units of 32 words.
TEST(KernelChoice, OrAndByOperandFormat) {
    for (const Product& p :
         {Product{8192, 8192, 8192}, Product{64, 64, 64}, Product{16, 16, 64, 70000}, Product{1, 1, 1}}) {
        for (const bool argmax : {false, true}) {
            Product q = p;
            q.dtype = DType::U8, q.semiring = Semiring::OrAnd;
            const Operation op = argmax ? Operation::GemmArgmax : Operation::Gemm;
            EXPECT_EQ(name_of(choose(q, kH200, op)),
                      argmax ? "tropical_gemm_argmax_u8_orand" : "tropical_gemm_u8_orand");
            Request r;
            r.operation = op;
            r.dtype = DType::U8, r.semiring = Semiring::OrAnd;
            r.packed_k = p.k;
            r.batch = p.batch;
            EXPECT_EQ(name_of(choose_kernel(r, Shape{p.m, p.n, p.k}, {kH200, kH200Shared})),
                      argmax ? "tropical_packed_argmax_u8_orand" : "tropical_packed_u8_orand");
        }
    }
    Request pack;
    pack.operation = Operation::PackBits;
    pack.dtype = DType::U8, pack.semiring = Semiring::OrAnd;
    pack.a = {nullptr, 8192, 8192, 8192, Layout::RowMajor, 0};  // along K: 8192 rows x 8 units of 32 words
    pack.c = {nullptr, 8192, 256, 256, Layout::RowMajor, 0};
    const LaunchPlan along = plan(pack, Shape{8192, 0, 8192}, {kH200, 0});
    EXPECT_EQ(along.choice.kernel->name, "tropical_pack_bits_u8_orand");
    EXPECT_EQ(along.grid[0], 132u * 16);  // 65536 units of a warp each: capped at 16 blocks per SM
    EXPECT_EQ(along.pack.outer, 8192);
    EXPECT_EQ(along.pack.k, 8192);
    pack.pack = PackAs::B;  // a B packed along its rows: the strides are swapped for the kernel
    pack.a = {nullptr, 100, 40, 40, Layout::RowMajor, 0};
    pack.c = {nullptr, 4, 40, 40, Layout::RowMajor, 0};
    const LaunchPlan rows = plan(pack, Shape{40, 0, 100}, {kH200, 0});
    EXPECT_EQ(rows.pack.bytes.row_stride, 1);
    EXPECT_EQ(rows.pack.bytes.col_stride, 40);
    EXPECT_EQ(rows.pack.words.row_stride, 1);
    EXPECT_EQ(rows.pack.words.col_stride, 40);
    EXPECT_EQ(rows.grid[0], 1u);  // 2 x 4 units (32 columns x a word each), a warp each: one block of 8
}

}  // namespace
