#include "cache_folder.hpp"

#include <string>

#include <fmt/format.h>

namespace warmup {
namespace {

// Why the environment gives no cache folder to use; empty where it gives one.
std::string why_no_cache_folder(const tropical::CacheSettings& settings) {
    // The library says why (TROPICAL_GEMM_CACHE=off, an empty TROPICAL_GEMM_CACHE_DIR, no HOME).
    if (std::string reason = tropical::cache_disabled_reason(); !reason.empty()) return reason;
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
