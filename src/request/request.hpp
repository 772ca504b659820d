#pragma once
// One type-erased request: what every public entry point (the templates of tropical/gemm.hpp and
// tropical/host.hpp, the C ABI) turns into, through the one builder per operation below. The GPU
// path (gemm/run.hpp) validates it (request/validate.hpp), plans it and launches it; the CPU path
// (cpu/host.hpp) validates it the same way and computes it.
#include <cstdint>

#include <tropical/counting.hpp>
#include <tropical/gemm.hpp>

namespace tropical::detail {

enum class Operation : std::uint8_t { Gemm, GemmArgmax, BackwardA, BackwardB, PackBits, Backtrack };

//   Gemm:       c = a (x) b
//   GemmArgmax: c = a (x) b, argmax = the k attaining each c[i,j]
//   BackwardA:  grad (M x K) gets the gradient of A from c = grad_C (M x N), argmax and b (K x N)
//   BackwardB:  grad (K x N) gets the gradient of B from c = grad_C, argmax and a (M x K)
//   PackBits:   c (32-bit words) = a (booleans in bytes) packed along K, as the operand `pack` says
//   Backtrack:  c (B x (T+1) int32, the paths) walked back from a (B x 1, the last states) through
//               argmax (T = batch matrices of B x S int32, the back-pointers); a and c are one
//               matrix each whatever the batch
// packed_k >= 0 (Gemm, GemmArgmax; OrAnd): a and b hold 32-bit words with K = packed_k booleans
// packed along K, a M x ceil(K/32) and b ceil(K/32) x N.
// options.device >= 0: the caller vouches that every operand is on that device and the stream is
// of its primary context, so the driver is not asked about each pointer and the stream.
struct Request {
    Operation operation = Operation::Gemm;
    Semiring semiring = Semiring::MaxPlus;
    DType dtype = DType::F32;
    OperandRef a, b, c, argmax, grad;
    // The counting semiring's counts (double), beside the values in a, b and c: with_counts is set
    // by its entry points (tropical/counting.hpp, tropical_counting_gemm) and only by them.
    OperandRef a_count, b_count, c_count;
    bool with_counts = false;
    std::int64_t batch = 1;
    GemmOptions options;
    std::int64_t packed_k = -1;  // -1: a and b hold elements
    PackAs pack = PackAs::A;     // PackBits: a packed as an A (along its columns) or a B (its rows)
};

// --- the builders: the one place a request of each operation is assembled (request/request.cpp),
// for the GPU path, the CPU path and the C ABI alike. On the CPU, only options.accumulate matters.

// c = a (x) b, with argmax where `argmax` is not null (GemmArgmax).
Request product_request(Semiring semiring, DType dtype, const OperandRef& a, const OperandRef& b, const OperandRef& c,
                        const OperandRef* argmax, std::int64_t batch, const GemmOptions& options);

// OrAnd on packed operands: product_request's (u8) with K = k booleans packed along K. Throws
// InvalidArgument for k < 0.
Request packed_product_request(Semiring semiring, const OperandRef& a, const OperandRef& b, std::int64_t k,
                               const OperandRef& c, const OperandRef* argmax, std::int64_t batch,
                               const GemmOptions& options);

// PackBits: `bytes` packed into 32-bit `words` as the operand `as` says.
Request pack_request(const OperandRef& bytes, PackAs as, const OperandRef& words, std::int64_t batch,
                     const GemmOptions& options);

// The gradient of A or B from grad_c and argmax (and a, b where the semiring's route reads them).
Request backward_request(Gradient of, Semiring semiring, DType dtype, const OperandRef& grad_c,
                         const OperandRef& argmax, const OperandRef& a, const OperandRef& b, const OperandRef& grad,
                         std::int64_t batch, const GemmOptions& options);

// A counting product's request: options.accumulate is `accumulate`.
Request counting_request(DType dtype, const CountingOperands& a, const CountingOperands& b, const CountingOperands& c,
                         std::int64_t batch, bool accumulate, const GemmOptions& options = {});

// A backtrack's request: the paths walked back from last through `steps` tables.
Request backtrack_request(const OperandRef& back, std::int64_t steps, const OperandRef& last, const OperandRef& path,
                          const GemmOptions& options = {});

}  // namespace tropical::detail
