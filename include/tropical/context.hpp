#pragma once
// One CudaContext per device, created on first use, on the device's primary context, so that
// pointers and streams from PyTorch or the CUDA runtime work as they are. Kernels are loaded
// lazily: a kernel nobody asks for is never compiled.
#include <cstddef>
#include <memory>
#include <string>

#include <tropical/export.hpp>
#include <tropical/kernels.hpp>

// The driver's handle types, declared here so that users need not include cuda.h.
struct CUctx_st;
struct CUfunc_st;
struct CUstream_st;

namespace tropical {

// A CUstream or a cudaStream_t (they are the same type); nullptr is the legacy default stream.
using Stream = CUstream_st*;

class TROPICAL_GEMM_EXPORT CudaContext {
public:
    // The context of CUDA device `ordinal`. Throws NoDriver without a usable driver, NoDevice for an
    // ordinal that does not exist.
    static CudaContext& for_device(int ordinal);

    // Number of CUDA devices; throws NoDriver without a usable driver.
    static int device_count();

    int ordinal() const;
    int arch() const;  // compute capability as XY, e.g. 90 for sm_90
    int multiprocessor_count() const;
    // Most shared memory one block may use when its kernel opts in (CU_DEVICE_ATTRIBUTE_MAX_SHARED_
    // MEMORY_PER_BLOCK_OPTIN); kernels that take dynamic shared memory are given this much at load.
    std::size_t shared_memory_per_block_optin() const;
    const std::string& name() const;
    CUctx_st* primary_context() const;

    // The loaded entry point of a registry kernel: compiled, or read from the disk cache, on the
    // first call for this kernel on this device; a lock-free table read afterwards.
    CUfunc_st* kernel(const KernelInfo& kernel);

    // How many kernels this context has loaded, and whether one of them is `kernel` (for tests and
    // diagnostics).
    std::size_t loaded_kernel_count() const;
    bool is_loaded(const KernelInfo& kernel) const;

    CudaContext(const CudaContext&) = delete;
    CudaContext& operator=(const CudaContext&) = delete;
    ~CudaContext();

private:
    explicit CudaContext(int ordinal);
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace tropical
