#pragma once
// NVRTC, opened at run time and only when a kernel must really be compiled: a process that runs
// from a warm cache never loads it, so a deployment can ship a warmed cache without the toolkit.
// The search for it is here alone; the Python package adds the NVRTC that PyTorch ships as a
// fallback (add_nvrtc_fallback) rather than searching itself.
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
// /usr/local/cuda/lib64, then the fallbacks added with add_nvrtc_fallback.
std::vector<LibraryCandidate> nvrtc_candidates(const std::string& override_path);
// The same for this process's $TROPICAL_GEMM_NVRTC.
std::vector<LibraryCandidate> nvrtc_candidates();

// Adds a place to look after the library's own (once; in the order added). Only a search that has
// not happened yet sees it.
void add_nvrtc_fallback(const std::string& path);

// Loads NVRTC from the candidates; throws NoCompiler naming every place tried and the variable.
NvrtcApi load_nvrtc(const std::string& override_path);

// The process-wide NVRTC, loaded on first call (honouring $TROPICAL_GEMM_NVRTC). A failure is
// remembered and rethrown.
const NvrtcApi& nvrtc();

// Whether nvrtc() has loaded the library in this process (a warm cache never does).
bool nvrtc_loaded();

}  // namespace tropical::detail
