#include "cache_folder.hpp"

#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace warmup {
namespace {

// Why the environment gives no cache folder to use; empty where it gives one.
std::string why_no_cache_folder(const tropical::CacheSettings& settings) {
    std::string reason = tropical::cache_disabled_reason();
    if (!reason.empty()) return reason;
    // The library reports a set but empty TROPICAL_GEMM_CACHE_DIR itself; a library from before it
    // did took the next folder in line instead. Checked here too, since for this tool that fallback
    // means clearing or trimming a cache nobody named.
    if (const char* dir = std::getenv("TROPICAL_GEMM_CACHE_DIR"); dir && *dir == '\0')
        return "TROPICAL_GEMM_CACHE_DIR is set but empty";
    if (!settings.enabled || settings.root.empty()) return "the library's settings leave the disk cache off";
    return {};
}

}  // namespace

tropical::CacheSettings cache_to_use(const Options& o) {
    if (o.cache_dir) return tropical::CacheSettings{true, *o.cache_dir};
    const tropical::CacheSettings settings = tropical::cache_settings_from_environment();
    if (const std::string why = why_no_cache_folder(settings); !why.empty())
        throw Fatal{kEnvironment, fmt::format("the environment leaves the kernel cache off ({}): there is no cache "
                                              "folder to {}. Name one with --cache-dir DIR, or change that setting.",
                                              why, command_name(o.command))};
    return settings;
}

}  // namespace warmup
