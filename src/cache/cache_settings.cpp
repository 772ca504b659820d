#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "cache/cache_key.hpp"
#include <tropical/cache.hpp>

namespace tropical {
namespace {

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

bool is_off(std::string value) {
    std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
    return value == "off" || value == "0" || value == "false" || value == "no" || value == "disabled";
}

// The settings, and why they leave the disk cache off (empty where they do not).
std::pair<CacheSettings, std::string> resolve() {
    CacheSettings settings;
    std::string reason;
    if (is_off(env("TROPICAL_GEMM_CACHE"))) {
        settings.enabled = false;
        reason = fmt::format("TROPICAL_GEMM_CACHE={}", env("TROPICAL_GEMM_CACHE"));
    }
    if (auto dir = env("TROPICAL_GEMM_CACHE_DIR"); !dir.empty()) settings.root = dir;
    else if (auto xdg = env("XDG_CACHE_HOME"); !xdg.empty()) settings.root = std::filesystem::path(xdg) / "tropical-gemm";
    else if (auto home = env("HOME"); !home.empty()) settings.root = std::filesystem::path(home) / ".cache" / "tropical-gemm";
    else {
        settings.enabled = false;  // nowhere sensible to write; memory only
        if (reason.empty()) reason = "none of TROPICAL_GEMM_CACHE_DIR, XDG_CACHE_HOME and HOME is set";
    }
    return {settings, reason};
}

}  // namespace

CacheSettings cache_settings_from_environment() { return resolve().first; }

std::string cache_disabled_reason() { return resolve().second; }

std::filesystem::path cache_format_directory(const std::filesystem::path& root) {
    return root / fmt::format("v{}", detail::kCacheFormatVersion);
}

}  // namespace tropical
