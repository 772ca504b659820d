#pragma once
// The key of a kernel of the registry: the one place that assembles what the cache key hashes (the
// kernel's source text and the compile options, from the catalogue and src/nvrtc) and hands it to
// the cache as plain inputs, so that the cache knows neither the catalogue nor NVRTC.
#include <string>
#include <vector>

#include <tropical/kernels.hpp>
#include "cache/cache_key.hpp"

namespace tropical::detail {

struct CompilerVersion {
    int major = 0, minor = 0;
};

// What NVRTC compiles for `kernel` on sm_<arch> (CUBIN and PTX): the source and the options.
struct CompileInputs {
    std::string source;
    std::vector<std::string> options;
};
CompileInputs compile_inputs(const KernelInfo& kernel, int arch);

// The key under which the entries of `kernel` for sm_<arch>, compiled by NVRTC `version`, are
// stored: cache_key over compile_inputs(kernel, arch). The loader, the listing and the warm-up
// all use this, so that they can never disagree on which file a kernel is.
CacheKey kernel_cache_key(const KernelInfo& kernel, int arch, CompilerVersion version);

}  // namespace tropical::detail
