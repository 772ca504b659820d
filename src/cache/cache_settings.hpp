#pragma once
// The cache settings the environment gives (tropical/cache.hpp), with why they leave the disk
// cache off, and whether that deserves a warning when the library itself runs so.
#include <string>

#include <tropical/cache.hpp>

namespace tropical::detail {

struct ResolvedCacheSettings {
    CacheSettings settings;
    std::string disabled_reason;  // empty where the disk cache is on
    // The disk cache is off by what is most likely a mistake (an empty TROPICAL_GEMM_CACHE_DIR),
    // not by a choice (TROPICAL_GEMM_CACHE=off): the library says so once.
    bool warn = false;
};

ResolvedCacheSettings resolve_cache_settings();

}  // namespace tropical::detail
