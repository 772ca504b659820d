#pragma once
// Which cache folder a command acts on.
#include <string_view>

#include <tropical/cache.hpp>

#include "options.hpp"

namespace warmup {

// --cache-dir, else the folder the environment names. Where the environment leaves the disk cache
// off (TROPICAL_GEMM_CACHE=off, an empty TROPICAL_GEMM_CACHE_DIR, no folder variable at all), throws
// Fatal (kEnvironment) saying why, rather than falling back on another folder: an empty variable in
// a script must never make --clear or --max-size act on the user's default cache.
tropical::CacheSettings cache_to_use(const Options& options);

}  // namespace warmup
