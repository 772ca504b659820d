#pragma once
// Where compiled kernels are kept between processes, and how to turn that off.
//
// The cache root is $TROPICAL_GEMM_CACHE_DIR, else $XDG_CACHE_HOME/tropical-gemm, else
// ~/.cache/tropical-gemm; entries live in a format-version folder inside it (v1/), one folder per
// architecture (v1/sm_90/). TROPICAL_GEMM_CACHE=off (or 0, false, no) disables the disk cache:
// kernels are then compiled once per process and kept in memory.
#include <filesystem>

#include <tropical/export.hpp>

namespace tropical {

struct CacheSettings {
    bool enabled = true;
    std::filesystem::path root;  // the cache root; the format-version folder is created inside
};

// The settings the library uses when nothing else is said, read from the environment.
TROPICAL_GEMM_EXPORT CacheSettings cache_settings_from_environment();

// The folder inside `root` that holds entries of this library's cache format (root/v1).
TROPICAL_GEMM_EXPORT std::filesystem::path cache_format_directory(const std::filesystem::path& root);

}  // namespace tropical
