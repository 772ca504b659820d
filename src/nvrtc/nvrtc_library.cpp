#include "nvrtc/nvrtc_library.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>

#include <fmt/format.h>

#include <tropical/error.hpp>

namespace tropical::detail {
namespace {

std::atomic<bool> g_loaded{false};

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

template <class Fn>
void bind(const DynamicLibrary& library, Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(library.symbol(name));
    if (!fn)
        throw NoCompiler(fmt::format("{} is not a usable NVRTC library: it has no {}. Point {} at the "
                                     "libnvrtc.so of a CUDA 12 or 13 toolkit.",
                                     library.path(), name, kNvrtcPathVariable));
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
    return candidates;
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
    bind(library, api.nvrtcVersion, "nvrtcVersion");
    bind(library, api.nvrtcGetErrorString, "nvrtcGetErrorString");
    bind(library, api.nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs");
    bind(library, api.nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs");
    bind(library, api.nvrtcCreateProgram, "nvrtcCreateProgram");
    bind(library, api.nvrtcDestroyProgram, "nvrtcDestroyProgram");
    bind(library, api.nvrtcCompileProgram, "nvrtcCompileProgram");
    bind(library, api.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
    bind(library, api.nvrtcGetProgramLog, "nvrtcGetProgramLog");
    bind(library, api.nvrtcGetPTXSize, "nvrtcGetPTXSize");
    bind(library, api.nvrtcGetPTX, "nvrtcGetPTX");
    bind(library, api.nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
    bind(library, api.nvrtcGetCUBIN, "nvrtcGetCUBIN");

    // The file actually loaded, not the soname asked for: the cache records it to tell later whether
    // the compiler changed without loading it again.
    if (Dl_info info{}; dladdr(reinterpret_cast<void*>(api.nvrtcVersion), &info) != 0 && info.dli_fname)
        api.library_path = info.dli_fname;
    api.nvrtcVersion(&api.major, &api.minor);
    int count = 0;
    api.nvrtcGetNumSupportedArchs(&count);
    api.supported_archs.resize(static_cast<std::size_t>(std::max(count, 0)));
    if (count > 0) api.nvrtcGetSupportedArchs(api.supported_archs.data());
    std::sort(api.supported_archs.begin(), api.supported_archs.end());
    return api;
}

const NvrtcApi& nvrtc() {
    static std::once_flag once;
    static NvrtcApi api;
    static std::exception_ptr failure;
    std::call_once(once, [] {
        try {
            api = load_nvrtc(env(kNvrtcPathVariable));
            g_loaded = true;
        } catch (...) {
            failure = std::current_exception();
        }
    });
    if (failure) std::rethrow_exception(failure);
    return api;
}

bool nvrtc_loaded() { return g_loaded; }

}  // namespace tropical::detail
