// --clear: remove every entry of the cache (the library's files only).
#include "cache_folder.hpp"
#include "commands.hpp"

namespace warmup {

ClearReport clear(const Options& o) {
    ClearReport report;
    report.settings = cache_to_use(o);
    try {
        report.removed = tropical::clear_cache(report.settings);
    } catch (const tropical::CacheNotWritable& e) {
        throw Fatal{kEnvironment, e.what()};
    }
    return report;
}

}  // namespace warmup
