#include "nvrtc/nvrtc_library.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include <tropical/error.hpp>
#include "util/load_once.hpp"

namespace tropical::detail {
namespace {

std::atomic<bool> g_loaded{false};

struct Fallbacks {
    std::mutex mutex;
    std::vector<std::string> paths;
};

Fallbacks& fallbacks() {
    static Fallbacks instance;
    return instance;
}

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
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
    if (!override_path.empty()) return {{override_path, std::string("from ") + kNvrtcPathVariable}};
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
    for (const auto& path : extra.paths) candidates.push_back({path, "a fallback the application added"});
    return candidates;
}

std::vector<LibraryCandidate> nvrtc_candidates() { return nvrtc_candidates(env(kNvrtcPathVariable)); }

void add_nvrtc_fallback(const std::string& path) {
    if (path.empty()) throw InvalidArgument("an NVRTC fallback must name a library; it is empty");
    auto& extra = fallbacks();
    std::lock_guard lock(extra.mutex);
    if (std::find(extra.paths.begin(), extra.paths.end(), path) == extra.paths.end()) extra.paths.push_back(path);
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
