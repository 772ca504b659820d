// The marker parser on any text: it is fed the embedded kernels/tropical_gemm.cu, which others
// edit; a malformed marker must be an Error naming the line, never a crash or a wrong cut.
#include <string>
#include <string_view>

#include "registry/kernel_source.hpp"
#include "targets.hpp"
#include <tropical/error.hpp>

namespace tropical::fuzz {

int kernel_source(const std::uint8_t* data, std::size_t size) {
    const std::string_view text{reinterpret_cast<const char*>(data), size};
    detail::KernelSourceFile file;
    try {
        file = detail::parse_kernel_source(text);
    } catch (const Error& e) {
        if (e.status() != Status::Internal) fail("a malformed kernel source is not reported as Internal");
        return 0;
    }
    // The preamble and the fragments, in order, are the whole text, each fragment at its marker.
    std::string joined(file.preamble);
    for (const auto& fragment : file.fragments) {
        if (!fragment.text.starts_with("//@kernel ")) fail("a fragment does not start at its marker");
        if (fragment.name.empty() || fragment.threads < 1 || fragment.threads > 1024) fail("a bad marker was accepted");
        joined.append(fragment.text);
        if (!detail::translation_unit(file, fragment).ends_with(fragment.text))
            fail("a translation unit lost its fragment");
    }
    if (joined != text) fail("preamble and fragments do not add up to the text");
    return 0;
}

}  // namespace tropical::fuzz
