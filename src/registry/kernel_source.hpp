#pragma once
// kernels/tropical_gemm.cu, as embedded in the library, cut into its preamble and one fragment per
// kernel. A fragment starts at a marker line
//   //@kernel name=<entry point> threads=<block size> tile_m=<rows of C per block> tile_n=<cols>
// and runs to the next marker; the launch geometry lives there, beside the code it describes.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <tropical/kernels.hpp>

namespace tropical::detail {

struct KernelFragment {
    std::string name;
    int threads = 0;
    int tile_m = 0;  // 0 for kernels launched on a 1-D grid-stride grid
    int tile_n = 0;
    std::string_view text;  // from the marker line to the next one
    int first_line = 0;     // line of the marker in the .cu file, for compiler messages
};

struct KernelSourceFile {
    std::string_view preamble;
    std::vector<KernelFragment> fragments;
};

// Throws tropical::Error (Internal) on a malformed marker or a duplicate name.
KernelSourceFile parse_kernel_source(std::string_view file_text);

// The library's own kernels/tropical_gemm.cu, parsed once.
const KernelSourceFile& embedded_kernel_source();

// The fragment of a registry kernel; throws Internal if the source has none (a build defect).
const KernelFragment& fragment_of(const KernelInfo& kernel);

// The exact text NVRTC compiles for a fragment: the preamble, then the fragment under a #line
// directive so that compiler messages name the real line of kernels/tropical_gemm.cu.
std::string translation_unit(const KernelSourceFile& file, const KernelFragment& fragment);

}  // namespace tropical::detail
