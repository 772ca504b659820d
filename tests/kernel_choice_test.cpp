// Which kernel a request gets (src/gemm/plan.cpp), without a GPU: the big-tile gemm kernel
// where its tiles fill the GPU, the split-K kernels for a long K over too few tiles (32-bit types,
// no accumulate, C in one piece), the Serial and Batched argmax kernels, the small and tiny kernels
// for the rest. The Dense, Wide, Vector, Column and OrAnd kernels: kernel_choice_shapes_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <tropical/error.hpp>
#include "catalogue/catalogue.hpp"
#include "gemm/plan.hpp"
#include "support/kernel_choice.hpp"

using namespace tropical;
using namespace tropical::detail;
using namespace tropical::testing;

namespace {

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

}  // namespace
