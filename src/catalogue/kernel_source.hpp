#pragma once
// The exact text NVRTC compiles for a kernel: the device code (kernels/*.cuh, joined at build time
// and embedded in the library), then the kernel's entry point, written from its catalogue row.
#include <string>
#include <string_view>

#include <tropical/kernels.hpp>
#include "catalogue/catalogue.hpp"

namespace tropical::detail {

// The device code: kernels/kernel_params.h and kernels/*.cuh, in their order, each under a #line
// directive naming its file, so that compiler messages point at the real line.
std::string_view device_source() noexcept;

// The entry point of a row, named `name`: an extern "C" __global__ function with the row's launch
// bounds that calls kernels/entry.cuh with the row's variant, semiring, type and tile.
std::string entry_point(const CatalogueRow& row, std::string_view name);

// device_source() followed by the kernel's entry point: what is compiled, and what the cache key
// hashes.
std::string kernel_source(const KernelInfo& kernel);

}  // namespace tropical::detail
