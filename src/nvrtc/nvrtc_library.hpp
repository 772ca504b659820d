#pragma once
// NVRTC, opened at run time and only when a kernel must really be compiled: a process that runs
// from a warm cache never loads it, so a deployment can ship a warmed cache without the toolkit.
#include <nvrtc.h>

#include <string>
#include <vector>

#include "util/dynamic_library.hpp"

namespace tropical::detail {

struct NvrtcApi {
    decltype(&::nvrtcVersion) nvrtcVersion = nullptr;
    decltype(&::nvrtcGetErrorString) nvrtcGetErrorString = nullptr;
    decltype(&::nvrtcGetNumSupportedArchs) nvrtcGetNumSupportedArchs = nullptr;
    decltype(&::nvrtcGetSupportedArchs) nvrtcGetSupportedArchs = nullptr;
    decltype(&::nvrtcCreateProgram) nvrtcCreateProgram = nullptr;
    decltype(&::nvrtcDestroyProgram) nvrtcDestroyProgram = nullptr;
    decltype(&::nvrtcCompileProgram) nvrtcCompileProgram = nullptr;
    decltype(&::nvrtcGetProgramLogSize) nvrtcGetProgramLogSize = nullptr;
    decltype(&::nvrtcGetProgramLog) nvrtcGetProgramLog = nullptr;
    decltype(&::nvrtcGetPTXSize) nvrtcGetPTXSize = nullptr;
    decltype(&::nvrtcGetPTX) nvrtcGetPTX = nullptr;
    decltype(&::nvrtcGetCUBINSize) nvrtcGetCUBINSize = nullptr;
    decltype(&::nvrtcGetCUBIN) nvrtcGetCUBIN = nullptr;

    std::string library_path;
    int major = 0, minor = 0;
    std::vector<int> supported_archs;  // e.g. {75, 80, ..., 120}, ascending
};

// The environment variable that names the NVRTC library explicitly.
inline constexpr const char* kNvrtcPathVariable = "TROPICAL_GEMM_NVRTC";

// Where NVRTC is looked for, in order: `override_path` (when non-empty), libnvrtc.so.13,
// libnvrtc.so.12, the toolkits under $CUDA_HOME and $CUDA_PATH, /usr/local/cuda/lib64.
std::vector<LibraryCandidate> nvrtc_candidates(const std::string& override_path);

// Loads NVRTC from the candidates; throws NoCompiler naming every place tried and the variable.
NvrtcApi load_nvrtc(const std::string& override_path);

// The process-wide NVRTC, loaded on first call (honouring $TROPICAL_GEMM_NVRTC). A failure is
// remembered and rethrown.
const NvrtcApi& nvrtc();

// Whether nvrtc() has loaded the library in this process (a warm cache never does).
bool nvrtc_loaded();

}  // namespace tropical::detail
