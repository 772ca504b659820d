// The registry, derived from the catalogue: each row's name and index, and the lookups.
#include "catalogue/catalogue.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace tropical::detail {
namespace {

// A row's semiring word as its value: kMaxPlus, ... (one per row of the semiring table), and kAny.
#define TROPICAL_ROW_SEMIRING(c_suffix, name, ...) constexpr std::optional<Semiring> k##name = Semiring::name;
TROPICAL_SEMIRING_LIST(TROPICAL_ROW_SEMIRING)
#undef TROPICAL_ROW_SEMIRING
constexpr std::optional<Semiring> kAny = std::nullopt;

constexpr CatalogueRow kWrittenRows[] = {
#define TG_KERNEL(operation, variant, type, semiring, bm, bn, bk, tm, tn, sk, threads, min_blocks) \
    {KernelOperation::operation,                                                                   \
     KernelVariant::variant,                                                                       \
     DType::type,                                                                                  \
     k##semiring,                                                                                  \
     {bm, bn, bk, tm, tn, sk},                                                                     \
     threads,                                                                                      \
     min_blocks,                                                                                   \
     #variant,                                                                                     \
     #semiring},
#include "catalogue.def"
#undef TG_KERNEL
};

// The kernels: the rows as written but those of a family for a semiring that does not take the
// family's type (int16's MaxMul).
constexpr bool is_kernel(const CatalogueRow& row) { return !row.semiring || supports(*row.semiring, row.dtype); }
constexpr std::size_t kKernelCount = [] {
    std::size_t n = 0;
    for (const auto& row : kWrittenRows) n += is_kernel(row) ? 1 : 0;
    return n;
}();
constexpr std::array<CatalogueRow, kKernelCount> kRows = [] {
    std::array<CatalogueRow, kKernelCount> out{};
    std::size_t i = 0;
    for (const auto& row : kWrittenRows)
        if (is_kernel(row)) out[i++] = row;
    return out;
}();

// Checked when the library is built: a kind of kernel has one row, and a tiled row's threads are
// its tile's, once or bk / sk times (whether its variant splits K so, kernels/entry.cuh checks when
// the kernel compiles).
// (The kinds as sorted integer keys, so that the check's steps grow as n log n: Clang's constant
// evaluation stops at a million steps, which comparing every pair of some 400 rows nearly takes.)
constexpr std::uint32_t kind_key(const CatalogueRow& row) {
    return static_cast<std::uint32_t>(row.operation) << 24 | static_cast<std::uint32_t>(row.variant) << 16 |
           static_cast<std::uint32_t>(row.dtype) << 8 |
           (row.semiring ? static_cast<std::uint32_t>(*row.semiring) : 0xffu);
}
constexpr bool one_row_per_kind() {
    std::array<std::uint32_t, std::size(kRows)> keys{};
    for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = kind_key(kRows[i]);
    std::sort(keys.begin(), keys.end());
    // Two rows of one kind: the same key, or a row of any semiring (0xff, last of its kernel's keys)
    // beside a row of one.
    for (std::size_t i = 1; i < keys.size(); ++i)
        if (keys[i] == keys[i - 1] || ((keys[i] & 0xffu) == 0xffu && (keys[i] >> 8) == (keys[i - 1] >> 8)))
            return false;
    return true;
}
static_assert(one_row_per_kind(), "kernels/catalogue.def has two rows for one kind of kernel");
constexpr bool threads_fit_tiles() {
    for (const auto& row : kRows) {
        if (row.tile.bm == 0) continue;
        const int tile = tile_threads(row);
        if (tile <= 0 || row.threads % tile != 0) return false;
        const int groups = k_groups(row);
        if (groups != 1 && (row.tile.sk <= 0 || row.tile.bk % row.tile.sk != 0 || groups != row.tile.bk / row.tile.sk))
            return false;
    }
    return true;
}
static_assert(threads_fit_tiles(),
              "kernels/catalogue.def: a tiled row's threads must be (bm / tm) * (bn / tn), "
              "times bk / sk if its kernel splits K among groups of threads");

// A family (TG_FAMILY) is a row for each scalar semiring (the semirings that take every 32- and
// 64-bit number type) that takes the row's type, one after the other in the semiring table's order. Checked: every row of a scalar semiring
// is in such a run of rows that differ in their semiring alone, so that a row written for one of
// them alone, or a scalar semiring new to the table that TG_FAMILY does not name, fails the build
// rather than leave a kind of kernel missing for a semiring.
constexpr bool scalar(Semiring semiring) {
    for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64})
        if (!supports(semiring, t)) return false;
    return true;
}
constexpr bool same_but_semiring(const CatalogueRow& x, const CatalogueRow& y) {
    return x.operation == y.operation && x.variant == y.variant && x.dtype == y.dtype && x.tile.bm == y.tile.bm &&
           x.tile.bn == y.tile.bn && x.tile.bk == y.tile.bk && x.tile.tm == y.tile.tm && x.tile.tn == y.tile.tn &&
           x.tile.sk == y.tile.sk && x.threads == y.threads && x.min_blocks == y.min_blocks;
}
constexpr bool families_cover_the_scalar_semirings() {
    std::size_t i = 0;
    while (i < std::size(kRows)) {
        if (!kRows[i].semiring || !scalar(*kRows[i].semiring)) {
            ++i;
            continue;
        }
        const CatalogueRow& first = kRows[i];
        for (Semiring s : all_semirings) {
            if (!scalar(s) || !supports(s, first.dtype)) continue;  // (int16 has no MaxMul)
            if (i == std::size(kRows) || kRows[i].semiring != s || !same_but_semiring(first, kRows[i])) return false;
            ++i;
        }
    }
    return true;
}
static_assert(families_cover_the_scalar_semirings(),
              "kernels/catalogue.def: a row of a scalar semiring (one that takes every number type) must come "
              "from a TG_FAMILY, and TG_FAMILY must name every scalar semiring of the semiring table");

// The name of a row's entry point: tropical_<what>_<type>[_<semiring>], where <what> is gemm,
// splitk, batched, small, tiny, dense, wide, serial, vector, column or packed for the product variants (plus _argmax with the argmax),
// backward_a, backward_b (then _small for LogPlus's Small gradient kernels), pack_bits or backtrack.
std::string name_of(const CatalogueRow& row) {
    std::string name = "tropical_";
    if (row.operation == KernelOperation::BackwardA || row.operation == KernelOperation::BackwardB ||
        row.operation == KernelOperation::PackBits || row.operation == KernelOperation::Backtrack) {
        name += to_string(row.operation);
        if (row.variant == KernelVariant::Small) name += "_small";
    } else {
        name += row.variant == KernelVariant::Tiled ? std::string_view("gemm") : to_string(row.variant);
        if (row.operation == KernelOperation::GemmArgmax) name += "_argmax";
    }
    name += '_';
    name += to_string(row.dtype);
    if (row.semiring) {
        name += '_';
        name += to_string(*row.semiring);
    }
    return name;
}

KernelGroup group_of(const CatalogueRow& row) {
    switch (row.operation) {
    case KernelOperation::Gemm:
        return row.variant == KernelVariant::Batched || row.variant == KernelVariant::Small ||
                       row.variant == KernelVariant::Tiny || row.variant == KernelVariant::Dense ||
                       row.variant == KernelVariant::Wide || row.variant == KernelVariant::Vector ||
                       row.variant == KernelVariant::Column
                   ? KernelGroup::Batched
                   : KernelGroup::Gemm;
    case KernelOperation::GemmArgmax: return KernelGroup::GemmArgmax;
    case KernelOperation::BackwardA: return KernelGroup::BackwardA;
    case KernelOperation::BackwardB: return KernelGroup::BackwardB;
    case KernelOperation::PackBits: return KernelGroup::PackBits;
    case KernelOperation::Backtrack: return KernelGroup::Backtrack;
    }
    return KernelGroup::Gemm;
}

// The words of the kinds of kernels (to_string's). Each switch names every enumerator of its enum: a
// missing one fails the build (the pragma makes -Wswitch's warning an error), so that a new
// operation or variant cannot go without a word, nor be left out of the counts below.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
constexpr std::string_view word_of(KernelOperation operation) {
    switch (operation) {
    case KernelOperation::Gemm: return "gemm";
    case KernelOperation::GemmArgmax: return "gemm_argmax";
    case KernelOperation::BackwardA: return "backward_a";
    case KernelOperation::BackwardB: return "backward_b";
    case KernelOperation::PackBits: return "pack_bits";
    case KernelOperation::Backtrack: return "backtrack";
    }
    return {};
}

constexpr std::string_view word_of(KernelVariant variant) {
    switch (variant) {
    case KernelVariant::Tiled: return "tiled";
    case KernelVariant::SplitK: return "splitk";
    case KernelVariant::Batched: return "batched";
    case KernelVariant::Small: return "small";
    case KernelVariant::Scatter: return "scatter";
    case KernelVariant::Packed: return "packed";
    case KernelVariant::Tiny: return "tiny";
    case KernelVariant::Dense: return "dense";
    case KernelVariant::Walk: return "walk";
    case KernelVariant::Serial: return "serial";
    case KernelVariant::Wide: return "wide";
    case KernelVariant::Vector: return "vector";
    case KernelVariant::Column: return "column";
    }
    return {};
}

constexpr std::string_view word_of(KernelGroup group) {
    switch (group) {
    case KernelGroup::Gemm: return "gemm";
    case KernelGroup::GemmArgmax: return "gemm_argmax";
    case KernelGroup::Batched: return "batched";
    case KernelGroup::BackwardA: return "backward_a";
    case KernelGroup::BackwardB: return "backward_b";
    case KernelGroup::PackBits: return "pack_bits";
    case KernelGroup::Backtrack: return "backtrack";
    }
    return {};
}
#pragma GCC diagnostic pop

// How many enumerators an enum has: its values are 0, 1, 2, ... (none is given one), so the first
// value without a word is one past the last.
template <class Enum>
constexpr std::size_t enumerators() {
    std::size_t n = 0;
    while (n < 256 && !word_of(static_cast<Enum>(n)).empty()) ++n;
    return n;
}

constexpr std::size_t kOperations = enumerators<KernelOperation>(), kVariants = enumerators<KernelVariant>(),
                      kTypes = std::size(all_dtypes), kSemirings = std::size(all_semirings);

// The registry's table has a slot per (operation, variant, type, semiring): a row past the counts
// above (an enumerator given a value out of turn) would share another kind's slots.
constexpr bool rows_fit_the_table() {
    for (const auto& row : kRows)
        if (static_cast<std::size_t>(row.operation) >= kOperations ||
            static_cast<std::size_t>(row.variant) >= kVariants || static_cast<std::size_t>(row.dtype) >= kTypes ||
            (row.semiring && static_cast<std::size_t>(*row.semiring) >= kSemirings))
            return false;
    return true;
}
static_assert(rows_fit_the_table(),
              "a row of kernels/catalogue.def has an operation or variant past kOperations or "
              "kVariants: the enumerators must be 0, 1, 2, ... with a word each (word_of)");

struct Registry {
    std::vector<std::string> names;  // owns the strings the KernelInfo views point at
    std::vector<KernelInfo> kernels;
    // [operation][variant][type][semiring] -> the kernel, or null.
    std::array<const KernelInfo*, kOperations * kVariants * kTypes * kSemirings> by_kind{};

    static std::size_t slot(KernelOperation o, KernelVariant v, DType t, Semiring s) {
        return ((static_cast<std::size_t>(o) * kVariants + static_cast<std::size_t>(v)) * kTypes +
                static_cast<std::size_t>(t)) *
                   kSemirings +
               static_cast<std::size_t>(s);
    }

    Registry() {
        for (const auto& row : kRows) names.push_back(name_of(row));
        for (std::size_t i = 0; i < names.size(); ++i) {
            const auto& row = kRows[i];
            kernels.push_back({i, names[i], row.operation, row.variant, group_of(row), row.dtype, row.semiring});
        }
        for (const auto& kernel : kernels)
            for (Semiring s : all_semirings)
                if (!kernel.semiring || kernel.semiring == s)
                    by_kind[slot(kernel.operation, kernel.variant, kernel.dtype, s)] = &kernel;
    }
};

const Registry& registry() {
    static const Registry instance;
    return instance;
}

}  // namespace

std::span<const CatalogueRow> catalogue_rows() noexcept { return kRows; }

const CatalogueRow& row_of(const KernelInfo& kernel) { return kRows[kernel.index]; }

}  // namespace tropical::detail

namespace tropical {

// "?" for a value past the enum's enumerators.
std::string_view to_string(KernelOperation operation) noexcept {
    const std::string_view word = detail::word_of(operation);
    return word.empty() ? "?" : word;
}

std::string_view to_string(KernelVariant variant) noexcept {
    const std::string_view word = detail::word_of(variant);
    return word.empty() ? "?" : word;
}

std::string_view to_string(KernelGroup group) noexcept {
    const std::string_view word = detail::word_of(group);
    return word.empty() ? "?" : word;
}

std::span<const KernelInfo> kernel_registry() noexcept { return detail::registry().kernels; }

const KernelInfo* find_kernel(std::string_view name) noexcept {
    for (const auto& kernel : detail::registry().kernels)
        if (kernel.name == name) return &kernel;
    return nullptr;
}

const KernelInfo* find_kernel(KernelOperation operation, KernelVariant variant, DType dtype,
                              Semiring semiring) noexcept {
    if (static_cast<std::size_t>(operation) >= detail::kOperations ||
        static_cast<std::size_t>(variant) >= detail::kVariants || static_cast<std::size_t>(dtype) >= detail::kTypes ||
        static_cast<std::size_t>(semiring) >= detail::kSemirings)
        return nullptr;
    return detail::registry().by_kind[detail::Registry::slot(operation, variant, dtype, semiring)];
}

}  // namespace tropical
