// The one entry point behind the templates of tropical/gemm.hpp and the C ABI: validate, choose a
// kernel, launch it. No allocation and no synchronisation on this path.
#include <algorithm>

#include <fmt/format.h>

#include "context/scoped_context.hpp"
#include "driver/cuda_driver.hpp"
#include "gemm/device_check.hpp"
#include "gemm/kernel_params.hpp"
#include "gemm/validate.hpp"
#include "registry/kernel_source.hpp"
#include <tropical/gemm.hpp>
#include <tropical/kernels.hpp>

namespace tropical::detail {
namespace {

constexpr std::int64_t kMaxGridY = 65535;
constexpr std::int64_t kMaxGridZ = 65535;
// Products up to this size in M and N use the kernels tuned for small matrices.
constexpr std::int64_t kSmallProduct = 256;

KernelOperand kernel_operand(const OperandRef& r) {
    return {const_cast<void*>(r.data), r.layout == Layout::RowMajor ? r.ld : 1, r.layout == Layout::RowMajor ? 1 : r.ld,
            r.batch_stride};
}

const KernelInfo& choose_kernel(const Request& q, const Shape& s) {
    KernelGroup group = KernelGroup::Gemm;
    switch (q.operation) {
    case Operation::Gemm:
        group = (s.m <= kSmallProduct && s.n <= kSmallProduct) ? KernelGroup::Batched : KernelGroup::Gemm;
        break;
    case Operation::GemmArgmax: group = KernelGroup::GemmArgmax; break;
    case Operation::BackwardA: group = KernelGroup::BackwardA; break;
    case Operation::BackwardB: group = KernelGroup::BackwardB; break;
    }
    const KernelInfo* kernel = find_kernel(group, q.dtype, q.semiring);
    if (!kernel)
        throw Unsupported(fmt::format("no {} kernel for {} {}", to_string(group), to_string(q.dtype), to_string(q.semiring)));
    return *kernel;
}

// grad = 0 before a backward pass that does not accumulate, as 32-bit words row by row.
void zero_gradient(const OperandRef& g, std::size_t element_size, std::int64_t batch, CUstream stream) {
    const bool row_major = g.layout == Layout::RowMajor;
    const std::int64_t lines = row_major ? g.rows : g.cols;   // rows of memory
    const std::int64_t width = row_major ? g.cols : g.rows;   // elements per line
    const auto words = static_cast<std::size_t>(width) * element_size / 4;
    const std::size_t pitch = static_cast<std::size_t>(g.ld) * element_size;
    auto* base = static_cast<char*>(const_cast<void*>(g.data));
    if (batch == 1 || g.batch_stride == lines * g.ld) {
        TROPICAL_CU(cuMemsetD2D32Async(reinterpret_cast<CUdeviceptr>(base), pitch, 0u, words,
                                       static_cast<std::size_t>(lines * batch), stream));
        return;
    }
    for (std::int64_t b = 0; b < batch; ++b)
        TROPICAL_CU(cuMemsetD2D32Async(reinterpret_cast<CUdeviceptr>(base + b * g.batch_stride * static_cast<std::int64_t>(element_size)),
                                       pitch, 0u, words, static_cast<std::size_t>(lines), stream));
}

}  // namespace

void run(const Request& q) {
    const ValidatedRequest v = validate(q);
    const Shape& s = v.shape;
    const bool backward = q.operation == Operation::BackwardA || q.operation == Operation::BackwardB;
    if (q.batch == 0 || (!backward && s.empty())) return;
    if (backward && (s.k == 0 || (q.operation == Operation::BackwardA ? s.m == 0 : s.n == 0))) return;

    const KernelInfo& kernel = choose_kernel(q, s);
    const KernelFragment& fragment = fragment_of(kernel);
    auto& context = CudaContext::for_device(device_of(v));
    CUfunction function = context.kernel(kernel);
    auto stream = reinterpret_cast<CUstream>(q.options.stream);
    ScopedContext current(context.primary_context());

    if (backward) {
        if (!q.options.accumulate) zero_gradient(q.grad, size_of(q.dtype), q.batch, stream);
        if (s.m == 0 || s.n == 0) return;
        BackwardKernelParams params;
        params.grad_c = kernel_operand(q.c);
        params.argmax = kernel_operand(q.argmax);
        params.other = kernel_operand(q.operation == Operation::BackwardA ? q.b : q.a);
        params.grad = kernel_operand(q.grad);
        params.m = s.m, params.n = s.n, params.k = s.k, params.batch = q.batch;
        params.multiply_by_other = q.semiring == Semiring::MaxMul ? 1 : 0;
        const std::int64_t work = s.m * s.n * q.batch;
        const std::int64_t blocks = std::clamp<std::int64_t>((work + fragment.threads - 1) / fragment.threads, 1,
                                                             std::int64_t{context.multiprocessor_count()} * 32);
        void* args[] = {&params};
        TROPICAL_CU(cuLaunchKernel(function, static_cast<unsigned>(blocks), 1, 1, static_cast<unsigned>(fragment.threads),
                                   1, 1, 0, stream, args, nullptr));
        return;
    }

    GemmKernelParams params;
    params.a = kernel_operand(q.a);
    params.b = kernel_operand(q.b);
    params.c = kernel_operand(q.c);
    if (q.operation == Operation::GemmArgmax) params.argmax = kernel_operand(q.argmax);
    params.m = s.m, params.n = s.n, params.k = s.k, params.batch = q.batch;
    params.accumulate = q.options.accumulate ? 1 : 0;
    const std::int64_t grid_x = (s.n + fragment.tile_n - 1) / fragment.tile_n;
    if (grid_x > 0x7fffffff)
        throw InvalidArgument(fmt::format("N = {} is too large for one launch (at most {} columns)", s.n,
                                          std::int64_t{0x7fffffff} * fragment.tile_n));
    const std::int64_t grid_y = std::min((s.m + fragment.tile_m - 1) / fragment.tile_m, kMaxGridY);
    const std::int64_t grid_z = std::min(q.batch, kMaxGridZ);
    void* args[] = {&params};
    TROPICAL_CU(cuLaunchKernel(function, static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y),
                               static_cast<unsigned>(grid_z), static_cast<unsigned>(fragment.threads), 1, 1, 0, stream,
                               args, nullptr));
}

}  // namespace tropical::detail
