// --verify: check every selected entry's header, length and checksum; with a GPU, have the driver
// load each CUBIN of a local device's architecture, which proves the device accepts it.
#include <map>

#include <tropical/error.hpp>

#include "cache_folder.hpp"
#include "commands.hpp"
#include "words.hpp"

namespace warmup {

VerifyReport verify(const Options& o) {
    VerifyReport report;
    report.settings = cache_to_use(o);
    report.listing = tropical::list_cache(report.settings);
    report.entries = selected_entries(o.selection, o.archs, report.listing);

    std::map<int, int> device_of_arch;  // the first device of each architecture
    try {
        const auto archs = tropical::device_architectures();
        for (int ordinal = static_cast<int>(archs.size()) - 1; ordinal >= 0; --ordinal)
            device_of_arch[archs[static_cast<std::size_t>(ordinal)]] = ordinal;
        if (archs.empty()) report.no_gpu = "this machine has no CUDA GPU";
    } catch (const tropical::Error& e) {
        report.no_gpu = first_line(e.what());
    }

    report.loads.resize(report.entries.size());
    for (std::size_t i = 0; i < report.entries.size(); ++i) {
        const auto& e = report.entries[i];
        if (!e.valid) {
            ++report.invalid;
            continue;
        }
        const auto device = device_of_arch.find(e.arch);
        if (e.kind != tropical::CacheEntryKind::Cubin || device == device_of_arch.end()) continue;
        try {
            if (!tropical::load_cache_entry(e, device->second)) continue;  // removed meanwhile: nothing to check
            ++report.loaded;
            report.loads[i].ok = true;
        } catch (const tropical::Error& error) {
            report.loads[i] = {false, error.what()};
            ++report.loaded;
            ++report.load_failures;
        }
    }
    report.exit_code = report.invalid + report.load_failures ? kFailed : kSuccess;
    return report;
}

}  // namespace warmup
