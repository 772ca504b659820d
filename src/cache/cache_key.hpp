#pragma once
// The key of a cache entry: XXH3-128 over every input of a compile and nothing else (the exact
// source text, the options, the NVRTC version, the cache-format version), plus the architecture.
// Compiler output is never hashed: PTX from CUDA 12+ carries random ids. The inputs come as plain
// text from the caller (loader/kernel_key.hpp assembles a registry kernel's), so that the cache
// knows neither the catalogue nor NVRTC.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tropical::detail {

// Bump when the entry layout or the meaning of a key changes: old entries then live in another
// folder (v1/, v2/...) and can be removed whole.
inline constexpr std::uint32_t kCacheFormatVersion = 1;

struct CacheKey {
    std::uint64_t high = 0, low = 0;
    std::string hex() const;  // 32 lowercase hex digits
    friend bool operator==(const CacheKey&, const CacheKey&) = default;
};

struct KeyInputs {
    std::string_view source;                  // the translation unit compiled
    const std::vector<std::string>* options;  // compile_options(...)
    int nvrtc_major = 0, nvrtc_minor = 0;
    int arch = 0;  // the device's sm_XY, as XY
    std::uint32_t format_version = kCacheFormatVersion;
};

CacheKey cache_key(const KeyInputs& inputs);

}  // namespace tropical::detail
