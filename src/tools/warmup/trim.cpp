// --max-size: remove entries, bad ones and then the least recently used, until the cache's entries
// fit the limit.
#include <algorithm>

#include "cache_folder.hpp"
#include "commands.hpp"

namespace warmup {

TrimReport trim(const Options& o) {
    TrimReport report;
    report.settings = cache_to_use(o);
    report.max_bytes = o.max_bytes;
    report.bytes_before = tropical::list_cache(report.settings).entry_bytes;
    try {
        report.removed = tropical::trim_cache(report.settings, o.max_bytes);
    } catch (const tropical::CacheNotWritable& e) {
        throw Fatal{kEnvironment, e.what()};
    }
    report.bytes_after = report.bytes_before - std::min(report.bytes_before, report.removed.bytes);
    return report;
}

}  // namespace warmup
