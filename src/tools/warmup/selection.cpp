#include "selection.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

#include <fmt/format.h>

#include "tool.hpp"
#include "words.hpp"

namespace warmup {
namespace {

using tropical::KernelGroup;
using tropical::KernelInfo;

bool wanted(const std::vector<std::string>& values, std::string_view value) {
    return values.empty() || std::find(values.begin(), values.end(), value) != values.end();
}

// Whether a kernel that takes its semiring at launch (the backward ones) serves a semiring asked
// for: every semiring with a gradient (not counting, not OrAnd).
bool serves_launch_semiring(const std::vector<std::string>& semirings) {
    if (semirings.empty()) return true;
    for (const tropical::Semiring s : tropical::all_semirings)
        if (tropical::has_gradient(s) && wanted(semirings, tropical::to_string(s))) return true;
    return false;
}

// The distinct values of a registry field, in the order of its enumeration, as names.
template <class Field>
std::vector<std::string> names_of(Field field) {
    std::set<decltype(field(tropical::kernel_registry().front()))> seen;
    for (const auto& k : tropical::kernel_registry()) seen.insert(field(k));
    std::vector<std::string> out;
    for (const auto value : seen) out.emplace_back(tropical::to_string(value));
    return out;
}

// Edit distance, for "did you mean".
std::size_t distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

}  // namespace

bool Selection::everything() const {
    return kernels.empty() && groups.empty() && variants.empty() && types.empty() && semirings.empty();
}

std::vector<std::string> group_choices() {
    std::vector<std::string> out = names_of([](const KernelInfo& k) { return k.group; });
    out.emplace_back("backward");
    return out;
}

std::vector<std::string> variant_choices() {
    return names_of([](const KernelInfo& k) { return k.variant; });
}

std::vector<std::string> type_choices() {
    return names_of([](const KernelInfo& k) { return k.dtype; });
}

std::vector<std::string> semiring_choices() {
    std::set<tropical::Semiring> seen;
    for (const auto& k : tropical::kernel_registry())
        if (k.semiring) seen.insert(*k.semiring);
    std::vector<std::string> out;
    for (const auto s : seen) out.emplace_back(tropical::to_string(s));
    return out;
}

std::vector<const KernelInfo*> select_kernels(const Selection& s) {
    const bool both_backward = std::find(s.groups.begin(), s.groups.end(), "backward") != s.groups.end();
    std::vector<const KernelInfo*> out;
    for (const auto& k : tropical::kernel_registry()) {
        const bool backward = k.group == KernelGroup::BackwardA || k.group == KernelGroup::BackwardB;
        const bool group_ok =
            s.groups.empty() || wanted(s.groups, tropical::to_string(k.group)) || (backward && both_backward);
        const bool semiring_ok =
            k.semiring ? wanted(s.semirings, tropical::to_string(*k.semiring)) : serves_launch_semiring(s.semirings);
        if (group_ok && semiring_ok && wanted(s.variants, tropical::to_string(k.variant)) &&
            wanted(s.types, tropical::to_string(k.dtype)) && wanted(s.kernels, k.name))
            out.push_back(&k);
    }
    return out;
}

std::string check_kernel_name(std::string_view name) {
    if (tropical::find_kernel(name)) return {};
    constexpr std::size_t kClose = 4;  // edits
    std::string_view best;
    std::size_t best_distance = SIZE_MAX;
    for (const auto& k : tropical::kernel_registry()) {
        // Lengths further apart than kClose cannot be close; skipping them keeps a huge name cheap.
        const std::size_t longer = std::max(name.size(), k.name.size()), shorter = std::min(name.size(), k.name.size());
        if (longer - shorter > kClose) continue;
        if (const auto d = distance(name, k.name); d < best_distance) best = k.name, best_distance = d;
    }
    return fmt::format("unknown kernel {}{}; `{} --list` shows every kernel", in_quotes(name),
                       best_distance <= kClose ? fmt::format(" (did you mean {}?)", best) : "", kProgram);
}

std::vector<tropical::CacheEntry> selected_entries(const Selection& selection, const std::vector<int>& archs,
                                                   const tropical::CacheListing& listing) {
    std::set<std::size_t> kernels;
    for (const KernelInfo* k : select_kernels(selection)) kernels.insert(k->index);
    const std::set<int> arch_set(archs.begin(), archs.end());
    std::vector<tropical::CacheEntry> out;
    for (const auto& e : listing.entries) {
        if (!selection.everything() && (!e.info || !kernels.count(e.info->index))) continue;
        if (!arch_set.empty() && !arch_set.count(e.arch)) continue;
        out.push_back(e);
    }
    return out;
}

}  // namespace warmup
