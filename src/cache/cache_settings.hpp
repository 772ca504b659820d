#pragma once
// The cache settings the environment gives (tropical/cache.hpp), with why they leave the disk
// cache off.
#include <string>

#include <tropical/cache.hpp>

namespace tropical::detail {

struct ResolvedCacheSettings {
    CacheSettings settings;
    std::string disabled_reason;  // empty where the disk cache is on
};

ResolvedCacheSettings resolve_cache_settings();

}  // namespace tropical::detail
