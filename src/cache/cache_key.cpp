#include "cache/cache_key.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fmt/format.h>

namespace tropical::detail {
namespace {

// Each field is written with its length first, so that no two different inputs serialise alike
// ("ab"+"c" versus "a"+"bc").
void feed(XXH3_state_t* state, std::string_view field) {
    const std::uint64_t size = field.size();
    XXH3_128bits_update(state, &size, sizeof size);
    XXH3_128bits_update(state, field.data(), field.size());
}

}  // namespace

std::string CacheKey::hex() const { return fmt::format("{:016x}{:016x}", high, low); }

CacheKey cache_key(const KeyInputs& in) {
    XXH3_state_t* state = XXH3_createState();
    XXH3_128bits_reset(state);
    feed(state, "tropical-gemm kernel");
    feed(state, fmt::format("format {}", in.format_version));
    feed(state, fmt::format("nvrtc {}.{}", in.nvrtc_major, in.nvrtc_minor));
    feed(state, fmt::format("arch sm_{}", in.arch));
    if (in.options)
        for (const auto& option : *in.options) feed(state, option);
    feed(state, in.source);
    const XXH128_hash_t hash = XXH3_128bits_digest(state);
    XXH3_freeState(state);
    return {hash.high64, hash.low64};
}

}  // namespace tropical::detail
