#pragma once
// NVRTC, opened at run time and only when a kernel must really be compiled: a process that runs
// from a warm cache never loads it, so a deployment can ship a warmed cache without the toolkit.
// The search for it is here alone, the places where pip's NVRTC wheels live included: the Python
// package only names its site-packages folders (add_nvrtc_site_folders) and asks.
#include <nvrtc.h>

#include <string>
#include <vector>

#include "util/dynamic_library.hpp"

namespace tropical::detail {

#define TROPICAL_NVRTC_FUNCTIONS(X) \
    X(nvrtcVersion)                 \
    X(nvrtcGetErrorString)          \
    X(nvrtcGetNumSupportedArchs)    \
    X(nvrtcGetSupportedArchs)       \
    X(nvrtcCreateProgram)           \
    X(nvrtcDestroyProgram)          \
    X(nvrtcCompileProgram)          \
    X(nvrtcGetProgramLogSize)       \
    X(nvrtcGetProgramLog)           \
    X(nvrtcGetPTXSize)              \
    X(nvrtcGetPTX)                  \
    X(nvrtcGetCUBINSize)            \
    X(nvrtcGetCUBIN)

struct NvrtcApi {
#define TROPICAL_DECLARE(name) decltype(&::name) name = nullptr;
    TROPICAL_NVRTC_FUNCTIONS(TROPICAL_DECLARE)
#undef TROPICAL_DECLARE

    std::string library_path;
    int major = 0, minor = 0;
    std::vector<int> supported_archs;  // e.g. {75, 80, ..., 120}, ascending
};

// The environment variable that names the NVRTC library explicitly.
inline constexpr const char* kNvrtcPathVariable = "TROPICAL_GEMM_NVRTC";

// Where NVRTC is looked for, in order: `override_path` alone when non-empty; else libnvrtc.so.13 and
// libnvrtc.so.12 on the loader's path, the toolkits under $CUDA_HOME and $CUDA_PATH,
// /usr/local/cuda/lib64, then the fallbacks added with add_nvrtc_fallback and
// add_nvrtc_site_folders, in the order added. Each with the words that say where it came from.
std::vector<LibraryCandidate> nvrtc_candidates(const std::string& override_path);
// The same for this process's $TROPICAL_GEMM_NVRTC.
std::vector<LibraryCandidate> nvrtc_candidates();

// Adds a place to look after the library's own (once; in the order added). Only a search that has
// not happened yet sees it.
void add_nvrtc_fallback(const std::string& path);

// The NVRTC libraries that pip's CUDA wheels put in a site-packages folder, where the places above
// do not reach: <folder>/nvidia/cu*/lib/libnvrtc.so.<major> (nvidia/cu13/lib for CUDA 13,
// nvidia/cuda_nvrtc/lib for CUDA 12). Those under `folders` (each looked at once, in the order
// given), in the order to try them: those of CUDA major version `preferred_major` first (the one the
// application loads itself, such as PyTorch's; 0: none), then the newest major version first.
// Reads folders only; loads nothing.
std::vector<std::string> site_nvrtc_libraries(const std::vector<std::string>& folders, int preferred_major);

// Adds site_nvrtc_libraries(folders, preferred_major) as fallbacks, in that order; returns them.
std::vector<std::string> add_nvrtc_site_folders(const std::vector<std::string>& folders, int preferred_major);

// Loads NVRTC from the candidates; throws NoCompiler naming every place tried and the variable.
NvrtcApi load_nvrtc(const std::string& override_path);

// The process-wide NVRTC, loaded on first call (honouring $TROPICAL_GEMM_NVRTC). A failure is
// remembered and rethrown.
const NvrtcApi& nvrtc();

// Whether nvrtc() has loaded the library in this process (a warm cache never does).
bool nvrtc_loaded();

}  // namespace tropical::detail
