// The one entry point behind the templates of tropical/gemm.hpp and the C ABI: validate, choose a
// kernel, launch it. No allocation and no synchronisation on this path.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include <fmt/format.h>

#include "context/scoped_context.hpp"
#include "driver/cuda_driver.hpp"
#include "gemm/device_check.hpp"
#include "gemm/kernel_choice.hpp"
#include "gemm/kernel_params.hpp"
#include "gemm/validate.hpp"
#include "reference/reference.hpp"
#include "registry/kernel_source.hpp"
#include <tropical/gemm.hpp>
#include <tropical/kernels.hpp>

namespace tropical::detail {
namespace {

constexpr std::int64_t kMaxGridY = 65535;
constexpr std::int64_t kMaxGridZ = 65535;
// Bytes of each row of grad_B that one block of the shared-memory grad_B kernel takes
// (BACKWARD_B_SLAB_BYTES in kernels/tropical_gemm.cu).
constexpr std::size_t kBackwardBSlabBytes = 32;

KernelOperand kernel_operand(const OperandRef& r) {
    return {const_cast<void*>(r.data), r.layout == Layout::RowMajor ? r.ld : 1, r.layout == Layout::RowMajor ? 1 : r.ld,
            r.batch_stride};
}

// Every element of operand g (batch matrices of element_size bytes) set to copies of the 32-bit
// `word`, leaving the padding between its lines and matrices alone: one 2-D memset where the
// matrices follow each other, else one per matrix.
void fill_words(const OperandRef& g, std::size_t element_size, std::int64_t batch, std::uint32_t word, CUstream stream) {
    const bool row_major = g.layout == Layout::RowMajor;
    const std::int64_t lines = row_major ? g.rows : g.cols;   // rows of memory
    const std::int64_t width = row_major ? g.cols : g.rows;   // elements per line
    const auto words = static_cast<std::size_t>(width) * element_size / 4;
    const std::size_t pitch = static_cast<std::size_t>(g.ld) * element_size;
    auto* base = static_cast<char*>(const_cast<void*>(g.data));
    if (follows_on(g, batch)) {
        TROPICAL_CU(cuMemsetD2D32Async(reinterpret_cast<CUdeviceptr>(base), pitch, word, words,
                                       static_cast<std::size_t>(lines * batch), stream));
        return;
    }
    for (std::int64_t b = 0; b < batch; ++b)
        TROPICAL_CU(cuMemsetD2D32Async(reinterpret_cast<CUdeviceptr>(base + b * g.batch_stride * static_cast<std::int64_t>(element_size)),
                                       pitch, word, words, static_cast<std::size_t>(lines), stream));
}

// C = the semiring's zero before a split-K product: 32-bit words, line by line of C's memory.
void fill_with_zero(const Request& q, std::int64_t batch, CUstream stream) {
    std::uint32_t word = 0;
    if (q.dtype == DType::F32) word = std::bit_cast<std::uint32_t>(reference::zero<float>(q.semiring));
    else word = std::bit_cast<std::uint32_t>(reference::zero<std::int32_t>(q.semiring));
    fill_words(q.c, 4, batch, word, stream);
}

}  // namespace

void run(const Request& q) {
    const ValidatedRequest v = validate(q);
    const Shape& s = v.shape;
    const bool backward = q.operation == Operation::BackwardA || q.operation == Operation::BackwardB;
    if (q.batch == 0 || (!backward && s.empty())) return;
    if (backward && (s.k == 0 || (q.operation == Operation::BackwardA ? s.m == 0 : s.n == 0))) return;

    // Only a product's choice depends on the device; an unsupported request fails before it is touched.
    const KernelInfo* chosen = q.operation == Operation::Gemm ? nullptr : choose_kernel(q, s, 0).kernel;
    auto& context = CudaContext::for_device(q.known_device >= 0 ? q.known_device : device_of(v));
    const Choice choice = chosen ? Choice{chosen} : choose_kernel(q, s, context.multiprocessor_count());
    const KernelInfo& kernel = *choice.kernel;
    const KernelFragment& fragment = fragment_of(kernel);
    auto stream = reinterpret_cast<CUstream>(q.options.stream);
    if (q.known_device < 0) check_stream(stream, context);   // before a kernel is compiled for nothing
    CUfunction function = context.kernel(kernel);
    ScopedContext current(context.primary_context());

    if (backward) {
        // The shared-memory way (see the kernel) when a block's K values fit: grad_A a row of K,
        // grad_B K rows of a 32-byte slab of columns. It writes every element of grad, so an
        // overwriting pass needs no zeroing first.
        const bool for_a = q.operation == Operation::BackwardA;
        const std::size_t element = size_of(q.dtype);
        const auto shared = static_cast<std::size_t>(s.k) * (for_a ? element : kBackwardBSlabBytes);
        // Not where products of a batch share gradient elements (a broadcast gradient): those must add up.
        const std::int64_t grad_lines = q.grad.layout == Layout::RowMajor ? q.grad.rows : q.grad.cols;
        const bool disjoint = q.batch == 1 || q.grad.batch_stride >= grad_lines * q.grad.ld;
        // The backward kernels have no static shared memory and were given the device's whole
        // opt-in limit when loaded (CudaContext::kernel).
        const bool in_shared = disjoint && s.k > 0 && shared <= context.shared_memory_per_block_optin();
        if (!q.options.accumulate && !(in_shared && s.m > 0 && s.n > 0))
            fill_words(q.grad, element, q.batch, 0u, stream);
        if (s.m == 0 || s.n == 0) return;
        BackwardKernelParams params;
        params.grad_c = kernel_operand(q.c);
        params.argmax = kernel_operand(q.argmax);
        params.other = kernel_operand(for_a ? q.b : q.a);
        params.grad = kernel_operand(q.grad);
        params.m = s.m, params.n = s.n, params.k = s.k, params.batch = q.batch;
        params.multiply_by_other = q.semiring == Semiring::MaxMul ? 1 : 0;
        params.overwrite = in_shared && !q.options.accumulate ? 1 : 0;
        const std::int64_t multiprocessors = context.multiprocessor_count();
        std::int64_t blocks = 0;
        if (in_shared) {
            const auto slab = static_cast<std::int64_t>(kBackwardBSlabBytes / element);   // grad_B columns per block
            const std::int64_t units = q.batch * (for_a ? s.m : (s.n + slab - 1) / slab);
            blocks = std::min<std::int64_t>(units, multiprocessors * 64);
        } else {
            const std::int64_t work = s.m * s.n * q.batch;
            blocks = std::clamp<std::int64_t>((work + fragment.threads - 1) / fragment.threads, 1, multiprocessors * 32);
        }
        void* args[] = {&params};
        TROPICAL_CU(cuLaunchKernel(function, static_cast<unsigned>(blocks), 1, 1, static_cast<unsigned>(fragment.threads),
                                   1, 1, in_shared ? static_cast<unsigned>(shared) : 0u, stream, args, nullptr));
        return;
    }

    GemmKernelParams params;
    params.a = kernel_operand(q.a);
    params.b = kernel_operand(q.b);
    params.c = kernel_operand(q.c);
    if (q.operation == Operation::GemmArgmax) params.argmax = kernel_operand(q.argmax);
    params.m = s.m, params.n = s.n, params.k = s.k, params.batch = q.batch;
    params.accumulate = q.options.accumulate ? 1 : 0;
    params.k_splits = static_cast<std::int32_t>(choice.k_splits);
    if (choice.k_splits > 1) fill_with_zero(q, q.batch, stream);
    const std::int64_t grid_x = (s.n + fragment.tile_n - 1) / fragment.tile_n;
    if (grid_x > 0x7fffffff)
        throw InvalidArgument(fmt::format("N = {} is too large for one launch (at most {} columns)", s.n,
                                          std::int64_t{0x7fffffff} * fragment.tile_n));
    const std::int64_t grid_y = std::min((s.m + fragment.tile_m - 1) / fragment.tile_m, kMaxGridY);
    const std::int64_t grid_z = std::min(q.batch * choice.k_splits, kMaxGridZ);
    void* args[] = {&params};
    TROPICAL_CU(cuLaunchKernel(function, static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y),
                               static_cast<unsigned>(grid_z), static_cast<unsigned>(fragment.threads), 1, 1, 0, stream,
                               args, nullptr));
}

}  // namespace tropical::detail
