#pragma once
// What the kernel cache needs of a compiler. The real one is NVRTC; tests inject their own to
// count calls and to prove that a cache hit never loads NVRTC.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tropical::detail {

struct CompiledKernel {
    std::vector<std::byte> cubin;  // empty when compiled to PTX only
    std::string ptx;
};

class Compiler {
public:
    virtual ~Compiler() = default;
    virtual int major_version() const = 0;
    virtual int minor_version() const = 0;
    // The compiler's library file, recorded beside the cache so that a later process can tell the
    // compiler is unchanged without loading it; empty when there is no such file.
    virtual std::string library_path() const = 0;
    virtual const std::vector<int>& supported_archs() const = 0;  // ascending
    // Throws CompileError with the kernel's name, the options and the full log.
    virtual CompiledKernel compile(std::string_view kernel_name, std::string_view source,
                                   const std::vector<std::string>& options) const = 0;
};

// NVRTC as a Compiler; loads the library on construction (throws NoCompiler).
std::unique_ptr<Compiler> make_nvrtc_compiler();

}  // namespace tropical::detail
