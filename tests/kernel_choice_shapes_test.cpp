// Which kernel a request gets (src/gemm/plan.cpp), without a GPU, where the shape or layout of a
// product picks a kernel of its own: the Dense and Wide kernels for small contiguous products, the
// Vector kernels for row vectors, the Column kernels for column vectors, and OrAnd's kernels by the
// format of its operands. The other kernels: kernel_choice_test.cpp.
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
