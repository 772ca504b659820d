#pragma once
// Which kernels (and which of their cache entries) the selection options name. The values each
// option accepts come from the kernel registry, so that a kernel added to the catalogue is
// selectable, listed and counted without a change here.
#include <string>
#include <string_view>
#include <vector>

#include <tropical/cache.hpp>
#include <tropical/kernels.hpp>

namespace warmup {

// --kernel, --group, --variant, --type, --semiring: several options select the kernels that match
// all of them; several values of one option match any.
struct Selection {
    std::vector<std::string> kernels, groups, variants, types, semirings;

    // Nothing named: every kernel.
    bool everything() const;
};

// The values of --group (the registry's groups, then "backward" for both backward groups),
// --variant, --type and --semiring, in the registry's order of its enumerations.
std::vector<std::string> group_choices();
std::vector<std::string> variant_choices();
std::vector<std::string> type_choices();
std::vector<std::string> semiring_choices();

// The kernels of the registry that `selection` names, in registry order. Backward kernels take the
// semiring at launch, so --semiring never excludes them.
std::vector<const tropical::KernelInfo*> select_kernels(const Selection& selection);

// Empty where `name` is a kernel's; otherwise why not, with the nearest name when one is close.
std::string check_kernel_name(std::string_view name);

// The entries of `listing` that belong to the selected kernels (all entries, those of kernels this
// library lacks included, when nothing is selected) and to `archs` (all where empty).
std::vector<tropical::CacheEntry> selected_entries(const Selection& selection, const std::vector<int>& archs,
                                                   const tropical::CacheListing& listing);

}  // namespace warmup
