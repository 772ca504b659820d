#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tropical/error.hpp>
#include "nvrtc/compiler.hpp"
#include "nvrtc/nvrtc_library.hpp"
#include "util/warnings.hpp"

namespace tropical::detail {
namespace {

// Owns an nvrtcProgram; destroyed on every path out of compile().
struct ProgramDeleter {
    const NvrtcApi* api;
    void operator()(_nvrtcProgram* program) const noexcept {
        const nvrtcResult result = api->nvrtcDestroyProgram(&program);
#ifndef NDEBUG
        if (result == NVRTC_SUCCESS) return;
        try {
            report_dropped_failure(fmt::format("nvrtcDestroyProgram failed: {}", api->nvrtcGetErrorString(result)));
        } catch (...) {
            report_dropped_failure("nvrtcDestroyProgram failed");
        }
#else
        (void)result;
#endif
    }
};
using ProgramHandle = std::unique_ptr<_nvrtcProgram, ProgramDeleter>;

class NvrtcCompiler final : public Compiler {
public:
    NvrtcCompiler() : api_(nvrtc()) {}

    int major_version() const override { return api_.major; }
    int minor_version() const override { return api_.minor; }
    std::string library_path() const override { return api_.library_path; }
    const std::vector<int>& supported_archs() const override { return api_.supported_archs; }

    CompiledKernel compile(std::string_view kernel_name, std::string_view source,
                           const std::vector<std::string>& options) const override {
        const std::string name(kernel_name);
        const std::string text(source);
        nvrtcProgram raw = nullptr;
        check(api_.nvrtcCreateProgram(&raw, text.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr),
              "nvrtcCreateProgram", name, options);
        ProgramHandle program(raw, ProgramDeleter{&api_});

        std::vector<const char*> argv;
        for (const auto& option : options) argv.push_back(option.c_str());
        const nvrtcResult result = api_.nvrtcCompileProgram(raw, static_cast<int>(argv.size()), argv.data());
        if (result != NVRTC_SUCCESS)
            throw CompileError(fmt::format("NVRTC could not compile kernel {} (options: {}): {}\n{}", name,
                                           fmt::join(options, " "), api_.nvrtcGetErrorString(result), log(raw)),
                               result, name, fmt::format("{}", fmt::join(options, " ")), log(raw));

        CompiledKernel out;
        std::size_t size = 0;
        check(api_.nvrtcGetPTXSize(raw, &size), "nvrtcGetPTXSize", name, options);
        out.ptx.resize(size);
        check(api_.nvrtcGetPTX(raw, out.ptx.data()), "nvrtcGetPTX", name, options);
        if (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
        // A compute_XY target yields PTX alone; NVRTC then reports a CUBIN of size 0 or an error.
        if (api_.nvrtcGetCUBINSize(raw, &size) == NVRTC_SUCCESS && size > 0) {
            out.cubin.resize(size);
            check(api_.nvrtcGetCUBIN(raw, reinterpret_cast<char*>(out.cubin.data())), "nvrtcGetCUBIN", name, options);
        }
        return out;
    }

private:
    std::string log(nvrtcProgram program) const {
        std::size_t size = 0;
        if (api_.nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size == 0) return {};
        std::string text(size, '\0');
        api_.nvrtcGetProgramLog(program, text.data());
        while (!text.empty() && text.back() == '\0') text.pop_back();
        return text;
    }

    void check(nvrtcResult result, const char* call, const std::string& name,
               const std::vector<std::string>& options) const {
        if (result == NVRTC_SUCCESS) return;
        throw CompileError(fmt::format("{} failed for kernel {}: {}", call, name, api_.nvrtcGetErrorString(result)),
                           result, name, fmt::format("{}", fmt::join(options, " ")), "");
    }

    const NvrtcApi& api_;
};

}  // namespace

std::unique_ptr<Compiler> make_nvrtc_compiler() { return std::make_unique<NvrtcCompiler>(); }

}  // namespace tropical::detail
