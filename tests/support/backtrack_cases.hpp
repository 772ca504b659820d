#pragma once
// Chains of back-pointer tables whose best paths are known by construction, for the backtrack tests
// (tests/backtrack_test.cpp on the CPU, tests/backtrack_gpu_test.cpp on the GPU): each row's path is
// drawn at random and planted in the tables, every other entry is noise (in range, or -1 and other
// out-of-range values, which the walk must never read); some rows' walks are cut by an index outside
// [0, S) planted at a random step (or as the last state), so that they must end in -1 there.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tropical/matrix.hpp>
#include "support/random_inputs.hpp"

namespace tropical::testing {

// Where the T tables, the last states and the paths lie in their buffers.
struct ChainGeometry {
    Layout back_layout = Layout::RowMajor;
    std::int64_t back_pad = 0;  // elements past each line of a table
    std::int64_t back_gap = 0;  // elements between tables
    Layout path_layout = Layout::RowMajor;
    std::int64_t path_pad = 0;
    std::int64_t last_ld = 1;  // last is rows x 1, row-major: a stride between rows' entries
};

inline std::string describe(const ChainGeometry& g) {
    return fmt::format("back {} pad {} gap {}, path {} pad {}, last ld {}", to_string(g.back_layout), g.back_pad,
                       g.back_gap, to_string(g.path_layout), g.path_pad, g.last_ld);
}

// Written where a test's output must not be: the paths start as this, and their padding must stay.
inline constexpr std::int32_t kPathPoison = 0x5eadbeef;

struct Chain {
    std::int64_t rows, states, steps;
    ChainGeometry g;
    std::int64_t back_ld, back_stride, path_ld;
    std::vector<std::int32_t> back, last, path;  // buffers in the geometry; path poisoned
    std::vector<std::int32_t> expected;          // the path buffer as the walk must leave it

    std::int32_t& back_at(std::int64_t t, std::int64_t b, std::int64_t s) {
        const bool row_major = g.back_layout == Layout::RowMajor;
        return back[static_cast<std::size_t>(t * back_stride + (row_major ? b * back_ld + s : s * back_ld + b))];
    }
    std::size_t path_index(std::int64_t b, std::int64_t t) const {
        const bool row_major = g.path_layout == Layout::RowMajor;
        return static_cast<std::size_t>(row_major ? b * path_ld + t : t * path_ld + b);
    }
    // Views of the buffers at `back_data`, `last_data` and `path_data` (host or device copies).
    BatchedView<const std::int32_t> back_view(const std::int32_t* back_data) const {
        return {{back_data, rows, states, back_ld, g.back_layout}, back_stride};
    }
    MatrixView<const std::int32_t> last_view(const std::int32_t* last_data) const {
        return {last_data, rows, 1, g.last_ld, Layout::RowMajor};
    }
    MatrixView<std::int32_t> path_view(std::int32_t* path_data) const {
        return {path_data, rows, steps + 1, path_ld, g.path_layout};
    }
};

// Indices the walk must stop at: outside [0, S).
inline std::int32_t out_of_range(Rng& rng, std::int64_t states) {
    const std::int32_t choices[] = {-1, static_cast<std::int32_t>(states), std::numeric_limits<std::int32_t>::max(),
                                    std::numeric_limits<std::int32_t>::min(), -7};
    return choices[rng.integer(0, 4)];
}

// A chain of `steps` tables of rows x states with a planted path per row; `cut` of the rows (a
// fraction) have their walk ended by an out-of-range index at a random step or as the last state.
inline Chain planted_chain(Rng& rng, std::int64_t rows, std::int64_t states, std::int64_t steps,
                           const ChainGeometry& g = {}, double cut = 0.2) {
    Chain c{rows, states, steps, g, 0, 0, 0, {}, {}, {}, {}};
    const bool back_rows = g.back_layout == Layout::RowMajor;
    c.back_ld = (back_rows ? states : rows) + g.back_pad;
    if (c.back_ld == 0) c.back_ld = 1;
    c.back_stride = (back_rows ? rows : states) * c.back_ld + g.back_gap;
    c.path_ld = (g.path_layout == Layout::RowMajor ? steps + 1 : rows) + g.path_pad;
    if (c.path_ld == 0) c.path_ld = 1;
    // Noise everywhere, padding included: in range mostly, out of range sometimes.
    c.back.resize(static_cast<std::size_t>(std::max<std::int64_t>(steps * c.back_stride, 1)));
    for (auto& x : c.back)
        x = states > 0 && rng.chance(0.9) ? static_cast<std::int32_t>(rng.integer(0, states - 1))
                                          : out_of_range(rng, states);
    c.last.assign(static_cast<std::size_t>(std::max<std::int64_t>(rows * g.last_ld, 1)), kPathPoison);
    const std::int64_t path_lines = g.path_layout == Layout::RowMajor ? rows : steps + 1;
    c.path.assign(static_cast<std::size_t>(std::max<std::int64_t>(path_lines * c.path_ld, 1)), kPathPoison);
    c.expected = c.path;
    for (std::int64_t b = 0; b < rows; ++b) {
        std::vector<std::int32_t> p(static_cast<std::size_t>(steps + 1), -1);
        if (states > 0)
            for (auto& s : p) s = static_cast<std::int32_t>(rng.integer(0, states - 1));
        // The step whose pointer (or, at steps, the last state) is cut: -1 for none.
        const std::int64_t cut_at = states == 0 || rng.chance(cut) ? rng.integer(0, steps) : -1;
        c.last[static_cast<std::size_t>(b * g.last_ld)] = cut_at == steps ? out_of_range(rng, states) : p[steps];
        if (states > 0)
            for (std::int64_t t = 0; t < steps; ++t)
                c.back_at(t, b, p[t + 1]) = t == cut_at ? out_of_range(rng, states) : p[t];
        for (std::int64_t t = 0; t <= steps; ++t) c.expected[c.path_index(b, t)] = t <= cut_at ? -1 : p[t];
    }
    return c;
}

// The geometries every test walks through: dense, padded, column-major tables, column-major paths.
inline std::vector<ChainGeometry> chain_geometries() {
    return {{},
            {Layout::RowMajor, 3, 5, Layout::RowMajor, 2, 3},
            {Layout::ColMajor, 1, 0, Layout::ColMajor, 1, 1},
            {Layout::ColMajor, 0, 7, Layout::RowMajor, 0, 2}};
}

}  // namespace tropical::testing
