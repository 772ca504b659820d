// The C ABI's kernel registry, kernel cache and NVRTC search: thin wrappers of tropical/kernels.hpp,
// tropical/cache.hpp and the NVRTC loader.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <tropical/c_api.h>
#include <tropical/cache.hpp>
#include <tropical/kernels.hpp>
#include "c_api/guard.hpp"
#include "nvrtc/nvrtc_library.hpp"

namespace {

using tropical::detail::guarded;
using tropical::detail::require_pointer;

// `text` into a caller's buffer of `capacity` bytes, NUL-terminated.
void copy_out(std::string_view text, char* out, int64_t capacity, const char* what) {
    require_pointer(out, what);
    if (capacity <= static_cast<int64_t>(text.size()))
        throw tropical::InvalidArgument(
            fmt::format("{} holds {} bytes but {} are needed", what, capacity, text.size() + 1));
    text.copy(out, text.size());
    out[text.size()] = '\0';
}

// The lines of `text` (a C caller's list, one item per line), less empty ones.
std::vector<std::string> lines_of(const char* text, const char* what) {
    require_pointer(text, what);
    std::vector<std::string> out;
    for (std::string_view rest = text; !rest.empty();) {
        const auto end = std::min(rest.find('\n'), rest.size());
        if (end > 0) out.emplace_back(rest.substr(0, end));
        rest.remove_prefix(std::min(end + 1, rest.size()));
    }
    return out;
}

std::string one_per_line(const std::vector<std::string>& items) {
    std::string text;
    for (const auto& item : items) text += item + "\n";
    return text;
}

// The NVRTC search, a place per line: its path, and with `why` a tab and where it came from.
std::string nvrtc_search_text(bool why) {
    std::string text;
    for (const auto& candidate : tropical::detail::nvrtc_candidates())
        text += candidate.path + (why ? "\t" + candidate.why : std::string()) + "\n";
    return text;
}

}  // namespace

extern "C" {

int64_t tropical_kernel_count(void) { return static_cast<int64_t>(tropical::kernel_registry().size()); }

tropical_status tropical_kernel_info_at(int64_t index, tropical_kernel_info* info) {
    return guarded([&] {
        require_pointer(info, "info");
        const auto kernels = tropical::kernel_registry();
        if (index < 0 || index >= static_cast<int64_t>(kernels.size()))
            throw tropical::InvalidArgument(
                fmt::format("there is no kernel {}: the registry has kernels 0 to {}", index, kernels.size() - 1));
        const tropical::KernelInfo& k = kernels[static_cast<std::size_t>(index)];
        // Every view below is of a NUL-terminated string: the registry's names and literals.
        *info = {k.name.data(),
                 to_string(k.group).data(),
                 to_string(k.operation).data(),
                 to_string(k.variant).data(),
                 to_string(k.dtype).data(),
                 k.semiring ? to_string(*k.semiring).data() : "any"};
    });
}

tropical_status tropical_cache_directory(char* path, int64_t capacity, int32_t* enabled) {
    return guarded([&] {
        require_pointer(enabled, "enabled");
        const auto settings = tropical::cache_settings_from_environment();
        copy_out(settings.root.string(), path, capacity, "the path buffer");
        *enabled = settings.enabled ? 1 : 0;
    });
}

tropical_status tropical_device_architectures(int32_t* archs, int64_t capacity, int64_t* count) {
    return guarded([&] {
        require_pointer(count, "count");
        if (capacity > 0) require_pointer(archs, "archs");
        const auto found = tropical::device_architectures();
        *count = static_cast<int64_t>(found.size());
        for (std::size_t i = 0; i < found.size() && static_cast<int64_t>(i) < capacity; ++i) archs[i] = found[i];
    });
}

tropical_status tropical_warm_targets(const int32_t* requested, int64_t count, int32_t* archs, int64_t capacity,
                                      int64_t* found) {
    return guarded([&] {
        require_pointer(found, "found");
        if (count > 0) require_pointer(requested, "requested");
        if (capacity > 0) require_pointer(archs, "archs");
        if (count < 0) throw tropical::InvalidArgument(fmt::format("count is {}; it must be 0 or more", count));
        const auto targets = tropical::warm_targets(std::vector<int>(requested, requested + count));
        *found = static_cast<int64_t>(targets.archs.size());
        for (std::size_t i = 0; i < targets.archs.size() && static_cast<int64_t>(i) < capacity; ++i)
            archs[i] = targets.archs[i];
    });
}

tropical_status tropical_warm_kernel(const char* name, int32_t arch, tropical_warm_result* result) {
    return guarded([&] {
        require_pointer(name, "name");
        require_pointer(result, "result");
        const tropical::KernelInfo* kernel = tropical::find_kernel(name);
        if (!kernel)
            throw tropical::InvalidArgument(
                fmt::format("no kernel named '{}'; tropical_kernel_info_at lists the {} there are", name,
                            tropical::kernel_registry().size()));
        const auto warmed = tropical::warm_kernel(tropical::cache_settings_from_environment(), *kernel, arch);
        *result = {warmed.compiled ? 1 : 0, warmed.ptx_for_jit ? 1 : 0, warmed.seconds};
    });
}

tropical_status tropical_nvrtc_search_path(char* out, int64_t capacity) {
    return guarded([&] { copy_out(nvrtc_search_text(false), out, capacity, "the output buffer"); });
}

tropical_status tropical_nvrtc_search_places(char* out, int64_t capacity) {
    return guarded([&] { copy_out(nvrtc_search_text(true), out, capacity, "the output buffer"); });
}

tropical_status tropical_nvrtc_site_libraries(const char* folders, int32_t preferred_major, char* out,
                                              int64_t capacity) {
    return guarded([&] {
        const auto found = tropical::detail::site_nvrtc_libraries(lines_of(folders, "folders"), preferred_major);
        copy_out(one_per_line(found), out, capacity, "the output buffer");
    });
}

tropical_status tropical_add_nvrtc_site_folders(const char* folders, int32_t preferred_major) {
    return guarded([&] { tropical::detail::add_nvrtc_site_folders(lines_of(folders, "folders"), preferred_major); });
}

tropical_status tropical_add_nvrtc_fallback(const char* path) {
    return guarded([&] {
        require_pointer(path, "path");
        tropical::detail::add_nvrtc_fallback(path);
    });
}

}  // extern "C"
