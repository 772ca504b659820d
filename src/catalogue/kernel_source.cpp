#include "catalogue/kernel_source.hpp"

#include <fmt/format.h>

// Generated at build time from kernels/ (cmake/EmbedKernels.cmake).
extern "C" const char tropical_gemm_device_source[];
extern "C" const unsigned long long tropical_gemm_device_source_size;

namespace tropical::detail {
namespace {

std::string launch_bounds(const CatalogueRow& row) {
    return row.min_blocks > 0 ? fmt::format("__launch_bounds__({}, {})", row.threads, row.min_blocks)
                              : fmt::format("__launch_bounds__({})", row.threads);
}

}  // namespace

std::string_view device_source() noexcept {
    return {tropical_gemm_device_source, static_cast<std::size_t>(tropical_gemm_device_source_size)};
}

std::string entry_point(const CatalogueRow& row, std::string_view name) {
    const std::string head = fmt::format("#line 1 \"kernels/catalogue.def: {}\"\nextern \"C\" __global__ void {} {}",
                                         name, launch_bounds(row), name);
    if (row.variant == KernelVariant::Scatter)
        return fmt::format("{}(const TgBackwardParams p) {{\n    tg::scatter<{}, {}, {}>(p);\n}}\n", head,
                           info(row.dtype).device_type, row.operation == KernelOperation::BackwardA, row.threads);
    if (row.operation == KernelOperation::PackBits)
        return fmt::format("{}(const TgPackParams p) {{\n    tg::pack<{}>(p);\n}}\n", head, row.threads);
    if (row.operation == KernelOperation::Backtrack)
        return fmt::format("{}(const TgBacktrackParams p) {{\n    tg::walk<{}>(p);\n}}\n", head, row.threads);
    const TileShape& t = row.tile;
    if (row.operation == KernelOperation::BackwardA || row.operation == KernelOperation::BackwardB)
        return fmt::format(
            "{}(const TgLogBackwardParams p) {{\n    tg::log_gradient<tg::{}, {}, tg::Tile<{}, {}, {}, {}, {}, {}>, "
            "{}>(p);\n}}\n",
            head, row.variant_word, info(row.dtype).device_type, t.bm, t.bn, t.bk, t.tm, t.tn, t.sk, row.threads);
    if (row.semiring == Semiring::Counting)
        return fmt::format(
            "{}(const TgCountingParams p) {{\n    tg::counting_product<tg::{}, {}, tg::Tile<{}, {}, {}, {}, {}, {}>, "
            "{}>(p);\n}}\n",
            head, row.variant_word, info(row.dtype).device_type, t.bm, t.bn, t.bk, t.tm, t.tn, t.sk, row.threads);
    return fmt::format(
        "{}(const TgGemmParams p) {{\n    tg::product<tg::{}, {}, tg::{}, {}, tg::Tile<{}, {}, {}, {}, {}, {}>, "
        "{}>(p);\n}}\n",
        head, row.variant_word, row.operation == KernelOperation::GemmArgmax, row.semiring_word,
        info(row.dtype).device_type, t.bm, t.bn, t.bk, t.tm, t.tn, t.sk, row.threads);
}

std::string kernel_source(const KernelInfo& kernel) {
    std::string unit(device_source());
    unit += '\n';
    unit += entry_point(row_of(kernel), kernel.name);
    return unit;
}

}  // namespace tropical::detail
