#include "loader/kernel_key.hpp"

#include "catalogue/kernel_source.hpp"
#include "nvrtc/compile_options.hpp"

namespace tropical::detail {

CompileInputs compile_inputs(const KernelInfo& kernel, int arch) {
    return {kernel_source(kernel), compile_options(arch, false)};
}

CacheKey kernel_cache_key(const KernelInfo& kernel, int arch, CompilerVersion version) {
    const CompileInputs inputs = compile_inputs(kernel, arch);
    return cache_key({inputs.source, &inputs.options, version.major, version.minor, arch});
}

}  // namespace tropical::detail
