#include "cache/cache_settings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include "cache/cache_layout.hpp"

namespace tropical {
namespace detail {
namespace {

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

bool is_off(std::string value) {
    std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
    return value == "off" || value == "0" || value == "false" || value == "no" || value == "disabled";
}

}  // namespace

ResolvedCacheSettings resolve_cache_settings() {
    ResolvedCacheSettings out;
    CacheSettings& settings = out.settings;
    if (is_off(env("TROPICAL_GEMM_CACHE"))) {
        settings.enabled = false;
        out.disabled_reason = "TROPICAL_GEMM_CACHE=" + env("TROPICAL_GEMM_CACHE");
    }
    const char* dir = std::getenv("TROPICAL_GEMM_CACHE_DIR");
    if (dir && !*dir) {
        // Set but empty, as a script with an unset variable writes it: falling back to the default
        // would use (and a --clear would empty) the user's real cache. No folder at all instead.
        settings.enabled = false;
        if (out.disabled_reason.empty()) {
            out.disabled_reason =
                "TROPICAL_GEMM_CACHE_DIR is set but empty; set it to a cache folder, or unset it to use the default "
                "($XDG_CACHE_HOME/tropical-gemm or ~/.cache/tropical-gemm), or set TROPICAL_GEMM_CACHE=off to say "
                "that no disk cache is wanted";
            out.warn = true;
        }
    } else if (dir) {
        settings.root = dir;
    } else if (auto xdg = env("XDG_CACHE_HOME"); !xdg.empty()) {
        settings.root = std::filesystem::path(xdg) / "tropical-gemm";
    } else if (auto home = env("HOME"); !home.empty()) {
        settings.root = std::filesystem::path(home) / ".cache" / "tropical-gemm";
    } else {
        settings.enabled = false;  // nowhere sensible to write; memory only
        if (out.disabled_reason.empty())
            out.disabled_reason = "none of TROPICAL_GEMM_CACHE_DIR, XDG_CACHE_HOME and HOME is set";
    }
    return out;
}

}  // namespace detail

CacheSettings cache_settings_from_environment() { return detail::resolve_cache_settings().settings; }

std::string cache_disabled_reason() { return detail::resolve_cache_settings().disabled_reason; }

std::filesystem::path cache_format_directory(const std::filesystem::path& root) {
    return root / detail::format_folder_name();
}

}  // namespace tropical
