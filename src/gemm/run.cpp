// The one path of every call: validate, plan, launch. No allocation and no synchronisation on it.
#include <bit>
#include <cstdint>

#include <fmt/format.h>

#include <tropical/context.hpp>
#include <tropical/gemm.hpp>
#include "context/scoped_context.hpp"
#include "driver/cuda_driver.hpp"
#include "gemm/device_check.hpp"
#include "gemm/plan.hpp"
#include "gemm/run.hpp"
#include "request/validate.hpp"

namespace tropical::detail {
namespace {

// Every element of operand g (batch matrices of element_size bytes) set to copies of the 32-bit
// `word`, leaving the padding between its lines and matrices alone: one 2-D memset where the
// matrices follow each other, else one per matrix.
void fill_words(const OperandRef& g, std::size_t element_size, std::int64_t batch, std::uint32_t word,
                CUstream stream) {
    const bool row_major = g.layout == Layout::RowMajor;
    const std::int64_t lines = row_major ? g.rows : g.cols;  // rows of memory
    const std::int64_t width = row_major ? g.cols : g.rows;  // elements per line
    const auto words = static_cast<std::size_t>(width) * element_size / 4;
    const std::size_t pitch = static_cast<std::size_t>(g.ld) * element_size;
    auto* base = static_cast<char*>(const_cast<void*>(g.data));
    if (follows_on(g, batch)) {
        TROPICAL_CU(cuMemsetD2D32Async(reinterpret_cast<CUdeviceptr>(base), pitch, word, words,
                                       static_cast<std::size_t>(lines * batch), stream));
        return;
    }
    for (std::int64_t b = 0; b < batch; ++b)
        TROPICAL_CU(cuMemsetD2D32Async(
            reinterpret_cast<CUdeviceptr>(base + b * g.batch_stride * static_cast<std::int64_t>(element_size)), pitch,
            word, words, static_cast<std::size_t>(lines), stream));
}

// The semiring's zero of a 32-bit type as the word a memset repeats (split-K's starting C).
std::uint32_t zero_word(const Request& q) {
    return static_cast<std::uint32_t>(identity_bits(info(q.semiring).zero, q.dtype));
}

void launch(const LaunchPlan& p, const Request& q, CUfunction function, CUstream stream) {
    switch (p.fill) {
    case LaunchPlan::Fill::None: break;
    case LaunchPlan::Fill::ResultWithZero: fill_words(q.c, 4, q.batch, zero_word(q), stream); break;
    case LaunchPlan::Fill::ResultWithZeroArgmaxWithNone:
        fill_words(q.c, 4, q.batch, zero_word(q), stream);
        fill_words(q.argmax, 4, q.batch, 0xffffffffu, stream);  // -1
        break;
    case LaunchPlan::Fill::GradientWithZero: fill_words(q.grad, size_of(q.dtype), q.batch, 0u, stream); break;
    }
    if (!p.launch) return;
    const bool backward = q.operation == Operation::BackwardA || q.operation == Operation::BackwardB;
    const void* params = backward && gradient_reads_result(q.semiring) ? static_cast<const void*>(&p.log_backward)
                         : backward                                    ? static_cast<const void*>(&p.backward)
                         : q.with_counts                               ? static_cast<const void*>(&p.counting)
                         : q.operation == Operation::PackBits          ? static_cast<const void*>(&p.pack)
                         : q.operation == Operation::Backtrack         ? static_cast<const void*>(&p.backtrack)
                                                                       : static_cast<const void*>(&p.product);
    void* args[] = {const_cast<void*>(params)};
    TROPICAL_CU(cuLaunchKernel(function, p.grid[0], p.grid[1], p.grid[2], p.block, 1, 1, p.shared_bytes, stream, args,
                               nullptr));
}

}  // namespace

void run(const Request& q) {
    const ValidatedRequest v = validate(q);
    if (!has_work(q, v.shape)) return;
    const bool device_known = q.options.device >= 0;
    auto& context = CudaContext::for_device(device_known ? q.options.device : device_of(v));
    auto stream = reinterpret_cast<CUstream>(q.options.stream);
    if (!device_known) check_stream(stream, context);  // before a kernel is compiled for nothing
    const LaunchPlan p = plan(q, v.shape, {context.multiprocessor_count(), context.shared_memory_per_block_optin()});
    CUfunction function = context.kernel(*p.choice.kernel);
    ScopedContext current(context.primary_context());
    launch(p, q, function, stream);
}

void product(Semiring semiring, DType dtype, const OperandRef& a, const OperandRef& b, const OperandRef& c,
             const OperandRef* argmax, std::int64_t batch, const GemmOptions& options) {
    run(product_request(semiring, dtype, a, b, c, argmax, batch, options));
}

void product_packed(Semiring semiring, const OperandRef& a, const OperandRef& b, std::int64_t k, const OperandRef& c,
                    const OperandRef* argmax, std::int64_t batch, const GemmOptions& options) {
    run(packed_product_request(semiring, a, b, k, c, argmax, batch, options));
}

void pack_bits(const OperandRef& bytes, PackAs as, const OperandRef& words, std::int64_t batch,
               const GemmOptions& options) {
    run(pack_request(bytes, as, words, batch, options));
}

void backtrack(const OperandRef& back, std::int64_t steps, const OperandRef& last, const OperandRef& path,
               const GemmOptions& options) {
    run(backtrack_request(back, steps, last, path, options));
}

void counting_product(DType dtype, const CountingOperands& a, const CountingOperands& b, const CountingOperands& c,
                      std::int64_t batch, const GemmOptions& options) {
    run(counting_request(dtype, a, b, c, batch, options.accumulate, options));
}

void backward(Gradient of, Semiring semiring, DType dtype, const OperandRef& grad_c, const OperandRef& argmax,
              const OperandRef& a, const OperandRef& b, const OperandRef& grad, std::int64_t batch,
              const GemmOptions& options) {
    run(backward_request(of, semiring, dtype, grad_c, argmax, a, b, grad, batch, options));
}

}  // namespace tropical::detail
