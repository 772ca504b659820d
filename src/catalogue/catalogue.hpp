#pragma once
// The kernel catalogue (kernels/catalogue.def) as the host reads it: one row per kernel, in the
// registry's order (kernel_registry()[i] is row i).
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <tropical/kernels.hpp>
#include <tropical/types.hpp>

namespace tropical::detail {

// A tile of the main loop (kernels/staging.cuh's Tile): all zero for a kernel without tiles.
struct TileShape {
    int bm = 0, bn = 0, bk = 0, tm = 0, tn = 0, sk = 0;
};

struct CatalogueRow {
    KernelOperation operation;
    KernelVariant variant;
    DType dtype;
    std::optional<Semiring> semiring;  // empty: taken at launch
    TileShape tile;
    int threads;     // block size
    int min_blocks;  // __launch_bounds__'s blocks per multiprocessor; 0: none asked
    // The row's words for its variant and semiring, which are the device code's names for them
    // (kernels/entry.cuh's tg::Tiled, kernels/semiring.cuh's tg::MaxPlus).
    std::string_view variant_word;
    std::string_view semiring_word;
};

std::span<const CatalogueRow> catalogue_rows() noexcept;

// The threads of a row's tile: (bm / tm) * (bn / tn), each with tm x tn results; 0 for a row
// without a tile.
constexpr int tile_threads(const CatalogueRow& row) {
    return row.tile.bm > 0 && row.tile.tm > 0 && row.tile.tn > 0
               ? (row.tile.bm / row.tile.tm) * (row.tile.bn / row.tile.tn)
               : 0;
}

// The groups of threads a row's block splits each slice of K among: its threads over its tile's
// (1 for a row without a tile). Which variants split K, and into how many groups, is said once, by
// the device code that does it (kernels/entry.cuh's K_GROUPS), which checks each row's threads
// against it when the kernel compiles; the host reads the groups off the row.
constexpr int k_groups(const CatalogueRow& row) {
    const int tile = tile_threads(row);
    return tile > 0 ? row.threads / tile : 1;
}

// The row of a registry kernel.
const CatalogueRow& row_of(const KernelInfo& kernel);

// Whether a kernel stages its slices into a panel in dynamic shared memory, sized by its launch
// (the Batched and Serial argmax kernels: kernels/main_loop.cuh's PANEL; src/gemm/plan.cpp sizes it).
inline bool stages_a_panel(KernelOperation operation, KernelVariant variant) {
    return operation == KernelOperation::GemmArgmax &&
           (variant == KernelVariant::Batched || variant == KernelVariant::Serial);
}

// Whether a kernel's block takes dynamic shared memory (as much as the launch gives: the Scatter
// kernels, and the argmax kernels with a panel), so that its loader opts it in to the device's limit.
inline bool takes_dynamic_shared_memory(const KernelInfo& kernel) {
    return kernel.variant == KernelVariant::Scatter || stages_a_panel(kernel.operation, kernel.variant);
}

}  // namespace tropical::detail
