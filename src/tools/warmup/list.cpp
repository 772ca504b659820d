// --list: the registry's kernels (those selected), for which architectures the cache holds each,
// and the cache's entries.
#include "cache_folder.hpp"
#include "commands.hpp"

namespace warmup {
namespace {

// Whether an entry is what a process on a device of its architecture would load.
bool usable(const tropical::CacheEntry& e) {
    return e.valid && e.current != false && e.kind != tropical::CacheEntryKind::Ptx;
}

}  // namespace

ListReport list(const Options& o) {
    ListReport report;
    report.settings = cache_to_use(o);
    report.listing = tropical::list_cache(report.settings);
    report.entries = selected_entries(o.selection, o.archs, report.listing);
    report.kernels = select_kernels(o.selection);
    for (const auto& e : report.entries) {
        report.bytes += e.bytes;
        report.archs.insert(e.arch);
        if (!e.valid) ++report.invalid;
        else if (e.current == false) ++report.stale;
        if (usable(e) && e.info) report.cached[e.info->index].insert(e.arch);
    }
    return report;
}

}  // namespace warmup
