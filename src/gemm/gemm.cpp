// The one entry point behind the templates of tropical/gemm.hpp and the C ABI: validate, choose a
// kernel, launch it. No allocation and no synchronisation on this path.
#include <algorithm>
#include <array>

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
// Bytes of each row of grad_B that one block of the shared-memory grad_B kernel takes
// (BACKWARD_B_SLAB_BYTES in kernels/tropical_gemm.cu).
constexpr std::size_t kBackwardBSlabBytes = 32;

KernelOperand kernel_operand(const OperandRef& r) {
    return {const_cast<void*>(r.data), r.layout == Layout::RowMajor ? r.ld : 1, r.layout == Layout::RowMajor ? 1 : r.ld,
            r.batch_stride};
}

const KernelInfo* required(const KernelInfo* kernel, std::string_view what, const Request& q) {
    if (!kernel)
        throw Unsupported(fmt::format("no {} kernel for {} {}", what, to_string(q.dtype), to_string(q.semiring)));
    return kernel;
}

// The small-tile product kernels (tropical_small_<type>_<semiring>), looked up by name once.
const KernelInfo* small_kernel(DType dtype, Semiring semiring) {
    static const auto table = [] {
        std::array<std::array<const KernelInfo*, 3>, 4> t{};
        for (DType d : {DType::F32, DType::F64, DType::I32, DType::I64})
            for (Semiring r : {Semiring::MaxPlus, Semiring::MinPlus, Semiring::MaxMul})
                t[static_cast<int>(d)][static_cast<int>(r)] =
                    find_kernel(fmt::format("tropical_small_{}_{}", to_string(d), to_string(r)));
        return t;
    }();
    return table[static_cast<int>(dtype)][static_cast<int>(semiring)];
}

// Products go to the kernel with the largest tile that the shape fills (at least 3/4 of the tiles'
// area is inside C) and that still gives the GPU enough blocks: the big-tile gemm kernel with two
// blocks per multiprocessor, the 64 x 64 batched kernel with one, else the 32 x 32 small kernel,
// which gives a single small product 4 to 16 times more blocks than the others.
const KernelInfo& choose_kernel(const Request& q, const Shape& s, std::int64_t multiprocessors) {
    switch (q.operation) {
    case Operation::Gemm: {
        auto fits = [&](const KernelInfo* kernel, std::int64_t min_blocks) {
            const KernelFragment& f = fragment_of(*kernel);
            const std::int64_t tiles_m = (s.m + f.tile_m - 1) / f.tile_m, tiles_n = (s.n + f.tile_n - 1) / f.tile_n;
            const double covered = static_cast<double>(s.m) * static_cast<double>(s.n) /
                                   (static_cast<double>(tiles_m * f.tile_m) * static_cast<double>(tiles_n * f.tile_n));
            return covered >= 0.75 && q.batch * tiles_m * tiles_n >= min_blocks;
        };
        const KernelInfo* gemm = required(find_kernel(KernelGroup::Gemm, q.dtype, q.semiring), "gemm", q);
        if (fits(gemm, 2 * multiprocessors)) return *gemm;
        const KernelInfo* batched = required(find_kernel(KernelGroup::Batched, q.dtype, q.semiring), "batched", q);
        if (fits(batched, multiprocessors)) return *batched;
        if (const KernelInfo* small = small_kernel(q.dtype, q.semiring)) return *small;
        return *batched;
    }
    case Operation::GemmArgmax: return *required(find_kernel(KernelGroup::GemmArgmax, q.dtype, q.semiring), "gemm_argmax", q);
    case Operation::BackwardA: return *required(find_kernel(KernelGroup::BackwardA, q.dtype, q.semiring), "backward_a", q);
    case Operation::BackwardB: return *required(find_kernel(KernelGroup::BackwardB, q.dtype, q.semiring), "backward_b", q);
    }
    throw Unsupported("unknown operation");
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

    // Only a product's choice depends on the device; an unsupported request fails before it is touched.
    const KernelInfo* chosen = q.operation == Operation::Gemm ? nullptr : &choose_kernel(q, s, 0);
    auto& context = CudaContext::for_device(q.known_device >= 0 ? q.known_device : device_of(v));
    const KernelInfo& kernel = chosen ? *chosen : choose_kernel(q, s, context.multiprocessor_count());
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
            zero_gradient(q.grad, element, q.batch, stream);
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
