#pragma once
// Which kernel a request gets, as data: for each operation a choice table, an ordered list of
// entries (an algorithm, the catalogue variant that implements it, and a `fits` predicate); the
// first entry whose kernel the catalogue holds for the request's type and semiring and whose
// predicate holds wins (src/gemm/choice.cpp holds the tables, tests/kernel_choice_test.cpp checks
// them without a GPU). The thresholds are named constants in choice.cpp; their measurements are in
// bench/NOTES.md, "Kernel choice: the thresholds and their measurements".
#include <cstddef>
#include <cstdint>

#include <tropical/kernels.hpp>
#include "catalogue/catalogue.hpp"
#include "request/request.hpp"
#include "request/validate.hpp"

namespace tropical::detail {

// What of the device a choice and a plan depend on.
struct DeviceLimits {
    std::int64_t multiprocessors = 0;
    // Most shared memory one block may use once its kernel opts in (kernels that take dynamic shared
    // memory are given this much when loaded: CudaContext::kernel).
    std::size_t shared_memory_per_block = 0;
};

// A kernel, and for a product the number of chunks K is split into (k_splits of the kernel's
// parameters; 1 for every kernel but the SplitKAtomic and SplitKSerial entries').
struct Choice {
    const KernelInfo* kernel;  // never null
    std::int64_t k_splits = 1;
};

// The kernel for request q of shape s (validated) on a GPU of `device`'s limits. Only products
// depend on the GPU; the others may pass zeros. Throws Unsupported where the catalogue has no kernel
// for the request.
Choice choose_kernel(const Request& q, const Shape& s, const DeviceLimits& device);

// The k of each chunk where `splits` chunks share K (kernels/kernel_params.h's tg_split_chunk), or
// K where the kernel does not split it.
std::int64_t chunk_of(const CatalogueRow& row, const Shape& s, std::int64_t splits);

// The dynamic shared memory an argmax kernel with a panel (stages_a_panel) takes for a K of k per
// block: min(slices of k, kTgPanelSlices) slices, at least one (kernel_params.h).
std::size_t argmax_panel_bytes(const CatalogueRow& row, std::int64_t k);

}  // namespace tropical::detail
