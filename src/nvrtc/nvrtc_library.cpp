#include "nvrtc/nvrtc_library.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string_view>

#include <fmt/format.h>

#include <tropical/error.hpp>
#include "util/load_once.hpp"

namespace tropical::detail {
namespace {

std::atomic<bool> g_loaded{false};

struct Fallbacks {
    std::mutex mutex;
    std::vector<LibraryCandidate> places;  // in the order added, each path once
};

Fallbacks& fallbacks() {
    static Fallbacks instance;
    return instance;
}

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

void add_fallback(LibraryCandidate place) {
    auto& extra = fallbacks();
    std::lock_guard lock(extra.mutex);
    const auto same = [&](const LibraryCandidate& c) { return c.path == place.path; };
    if (std::none_of(extra.places.begin(), extra.places.end(), same)) extra.places.push_back(std::move(place));
}

// The entries of a folder, none where it cannot be read (or is no folder).
std::vector<std::filesystem::path> entries_of(const std::filesystem::path& folder) {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
        out.push_back(it->path());
    return out;
}

// The major version of an NVRTC named by its soname, libnvrtc.so.<major>; -1 for any other name
// (libnvrtc.so.12.8, libnvrtc-builtins.so.12.8).
int soname_major(std::string_view name) {
    constexpr std::string_view prefix = "libnvrtc.so.";
    if (!name.starts_with(prefix)) return -1;
    const std::string_view digits = name.substr(prefix.size());
    int major = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), major);
    return error == std::errc() && end == digits.data() + digits.size() && major >= 0 ? major : -1;
}

// pip's NVRTC wheels under `folders`, in the order to try them (site_nvrtc_libraries), each with
// the folder it was found in.
std::vector<LibraryCandidate> site_candidates(const std::vector<std::string>& folders, int preferred_major) {
    struct Found {
        LibraryCandidate place;
        int major;
    };
    std::vector<Found> found;
    std::vector<std::string> looked;
    for (const auto& folder : folders) {
        if (folder.empty() || std::find(looked.begin(), looked.end(), folder) != looked.end()) continue;
        looked.push_back(folder);
        std::vector<Found> here;
        for (const auto& wheel : entries_of(std::filesystem::path(folder) / "nvidia")) {
            if (!wheel.filename().string().starts_with("cu")) continue;  // cu13, cuda_nvrtc, ...
            for (const auto& file : entries_of(wheel / "lib"))
                if (const int major = soname_major(file.filename().string()); major >= 0)
                    here.push_back({{file.string(), "pip's NVRTC wheel in " + folder}, major});
        }
        std::sort(here.begin(), here.end(), [](const Found& x, const Found& y) { return x.place.path < y.place.path; });
        for (auto& f : here) {
            const auto same = [&](const Found& g) { return g.place.path == f.place.path; };
            if (std::none_of(found.begin(), found.end(), same)) found.push_back(std::move(f));
        }
    }
    // The preferred major version first, then the newest; where equal, as found.
    std::stable_sort(found.begin(), found.end(), [&](const Found& x, const Found& y) {
        const bool x_later = x.major != preferred_major, y_later = y.major != preferred_major;
        return x_later != y_later ? !x_later : x.major > y.major;
    });
    std::vector<LibraryCandidate> out;
    for (auto& f : found) out.push_back(std::move(f.place));
    return out;
}

// NVRTC opens its builtins (libnvrtc-builtins.so.<major>.<minor>) by name the first time it
// compiles, which the loader finds only on its own path or through NVRTC's RUNPATH. An NVRTC found
// elsewhere (a Python package's copy without RUNPATH, as pip's CUDA 13.0 one is) then fails every
// compile ("failed to open libnvrtc-builtins.so.13.0"). Loading the builtins that lie beside it, by
// path, first makes NVRTC's own dlopen find them already loaded (by their soname). Best effort:
// where there are none beside it, NVRTC searches as it always does.
void preload_builtins(const std::string& nvrtc_file, int major, int minor) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path folder = fs::path(nvrtc_file).parent_path();
    const std::string exact = fmt::format("libnvrtc-builtins.so.{}.{}", major, minor);
    std::string found;
    if (fs::is_regular_file(folder / exact, ec)) {
        found = (folder / exact).string();
    } else {
        const std::string prefix = fmt::format("libnvrtc-builtins.so.{}.", major);
        for (const auto& entry : fs::directory_iterator(folder, ec))
            if (entry.path().filename().string().starts_with(prefix)) found = entry.path().string();
    }
    if (!found.empty()) (void)dlopen(found.c_str(), RTLD_NOW | RTLD_GLOBAL);  // kept for the process
}

}  // namespace

std::vector<LibraryCandidate> nvrtc_candidates(const std::string& override_path) {
    if (!override_path.empty())
        return {{override_path, fmt::format("from ${}, the only place looked at while it is set", kNvrtcPathVariable)}};
    std::vector<LibraryCandidate> candidates = {
        {"libnvrtc.so.13", "the system library path"},
        {"libnvrtc.so.12", "the system library path"},
    };
    for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
        if (const std::string root = env(variable); !root.empty()) {
            for (const char* soname : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
                candidates.push_back({root + "/lib64/" + soname, std::string("from $") + variable});
        }
    }
    candidates.push_back({"/usr/local/cuda/lib64/libnvrtc.so", "the default toolkit location"});
    auto& extra = fallbacks();
    std::lock_guard lock(extra.mutex);
    candidates.insert(candidates.end(), extra.places.begin(), extra.places.end());
    return candidates;
}

std::vector<LibraryCandidate> nvrtc_candidates() { return nvrtc_candidates(env(kNvrtcPathVariable)); }

void add_nvrtc_fallback(const std::string& path) {
    if (path.empty()) throw InvalidArgument("an NVRTC fallback must name a library; it is empty");
    add_fallback({path, "a fallback the application added"});
}

std::vector<std::string> site_nvrtc_libraries(const std::vector<std::string>& folders, int preferred_major) {
    std::vector<std::string> paths;
    for (const auto& place : site_candidates(folders, preferred_major)) paths.push_back(place.path);
    return paths;
}

std::vector<std::string> add_nvrtc_site_folders(const std::vector<std::string>& folders, int preferred_major) {
    std::vector<std::string> paths;
    for (auto& place : site_candidates(folders, preferred_major)) {
        paths.push_back(place.path);
        add_fallback(std::move(place));
    }
    return paths;
}

NvrtcApi load_nvrtc(const std::string& override_path) {
    auto library = DynamicLibrary::open_first(nvrtc_candidates(override_path));
    if (!library.loaded())
        throw NoCompiler(fmt::format(
            "NVRTC is needed to compile a kernel that is not in the kernel cache, but it could not be loaded.\n"
            "Looked for the NVRTC library in:\n{}"
            "Install the CUDA toolkit's NVRTC (e.g. the cuda-nvrtc package or pip's nvidia-cuda-nvrtc), set "
            "CUDA_HOME to the toolkit, or set {} to the full path of libnvrtc.so; or warm the cache with "
            "tropical-gemm-warmup on a machine that has it.",
            describe_failures(library.failures()), kNvrtcPathVariable));

    NvrtcApi api;
    api.library_path = library.path();
#define TROPICAL_BIND(name)                                                                \
    api.name = reinterpret_cast<decltype(api.name)>(library.symbol(#name));                \
    if (!api.name)                                                                         \
        throw NoCompiler(                                                                  \
            fmt::format("{} is not a usable NVRTC library: it has no {}. Point {} at the " \
                        "libnvrtc.so of a CUDA 12 or 13 toolkit.",                         \
                        library.path(), #name, kNvrtcPathVariable));
    TROPICAL_NVRTC_FUNCTIONS(TROPICAL_BIND)
#undef TROPICAL_BIND

    // The file actually loaded, not the soname asked for: the cache records it to tell later whether
    // the compiler changed without loading it again.
    if (Dl_info info{}; dladdr(reinterpret_cast<void*>(api.nvrtcVersion), &info) != 0 && info.dli_fname)
        api.library_path = info.dli_fname;
    api.nvrtcVersion(&api.major, &api.minor);
    preload_builtins(api.library_path, api.major, api.minor);
    int count = 0;
    api.nvrtcGetNumSupportedArchs(&count);
    api.supported_archs.resize(static_cast<std::size_t>(std::max(count, 0)));
    if (count > 0) api.nvrtcGetSupportedArchs(api.supported_archs.data());
    std::sort(api.supported_archs.begin(), api.supported_archs.end());
    return api;
}

const NvrtcApi& nvrtc() {
    return load_once([] {
        NvrtcApi api = load_nvrtc(env(kNvrtcPathVariable));
        g_loaded = true;
        return api;
    });
}

bool nvrtc_loaded() { return g_loaded; }

}  // namespace tropical::detail
