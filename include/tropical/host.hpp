#pragma once
// Tropical matrix products on the CPU, in host memory:  C[i,j] = (+)_k A[i,k] (x) B[k,j]
//
// The operations of tropical/gemm.hpp with the same views (MatrixView, BatchedView: here they point
// to host memory), the same semantics bit for bit (README.md, "Semantics": NaN, integer zeros and
// ranges, argmax ties and -1, -0 read as +0) and the same validation and exceptions; instead of a
// stream, a number of threads. SIMD kernels chosen at run time for this CPU (AVX-512, AVX2 or SSE4
// on x86, NEON on ARM) run on every core; OrAnd runs on 64-bit words (src/cpu/orand.cpp). Every
// call is synchronous: when it returns, the outputs are written. Calls from several threads at once
// are safe; they share the cores.
#include <cstdint>

#include <tropical/error.hpp>
#include <tropical/export.hpp>
#include <tropical/gemm.hpp>
#include <tropical/matrix.hpp>
#include <tropical/types.hpp>

namespace tropical::host {

struct Options {
    bool accumulate = false;  // C = C (+) A(x)B instead of C = A(x)B; backward: grad += instead of =
    // Threads to use at most: 0 means one per core this process may run on. Small products use
    // fewer (a thread is worth waking for about a million terms).
    int threads = 0;
};

// The SIMD instruction set the kernels use on this CPU, as Highway names it ("AVX2", "AVX3" for
// AVX-512, "SSE4", "NEON", "EMU128" or "SCALAR" for the portable fallback).
TROPICAL_GEMM_EXPORT const char* simd_target();

// The threads a call with Options::threads = 0 may use: the cores this process may run on.
TROPICAL_GEMM_EXPORT int default_threads();

namespace detail {

using tropical::detail::Gradient;
using tropical::detail::OperandRef;

// The library's entry points behind the templates below (tropical::detail::product and backward's
// twins for host memory).
TROPICAL_GEMM_EXPORT void product(Semiring semiring, DType dtype, const OperandRef& a, const OperandRef& b,
                                  const OperandRef& c, const OperandRef* argmax, std::int64_t batch,
                                  const Options& options);
TROPICAL_GEMM_EXPORT void backward(Gradient of, Semiring semiring, DType dtype, const OperandRef& grad_c,
                                   const OperandRef& argmax, const OperandRef& a, const OperandRef& b,
                                   const OperandRef& grad, std::int64_t batch, const Options& options);
TROPICAL_GEMM_EXPORT void product_packed(Semiring semiring, const OperandRef& a, const OperandRef& b, std::int64_t k,
                                         const OperandRef& c, const OperandRef* argmax, std::int64_t batch,
                                         const Options& options);
TROPICAL_GEMM_EXPORT void pack_bits(const OperandRef& bytes, PackAs as, const OperandRef& words, std::int64_t batch,
                                    const Options& options);
TROPICAL_GEMM_EXPORT void backtrack(const OperandRef& back, std::int64_t steps, const OperandRef& last,
                                    const OperandRef& path, const Options& options);

// The body of every backward template below (of A or B, single or batched): the views type-erased
// for backward().
template <SemiringTag S, Element T, class GradC, class Argmax, class Operand, class Grad>
void backward_of(Gradient of, const GradC& grad_c, const Argmax& argmax, const Operand& a, const Operand& b,
                 const Grad& grad, std::int64_t count, const Options& options) {
    using tropical::detail::operand;
    static_assert(tropical::detail::has_gradient<S>, "OrAnd is Boolean: it has no gradient");
    detail::backward(of, S::value, dtype_of<T>(), operand(grad_c), operand(argmax), operand(a), operand(b),
                     operand(grad), count, options);
}

}  // namespace detail

// C = A (x) B.  A is M x K, B is K x N, C is M x N.
template <SemiringTag S, Element T>
void gemm(tropical::detail::In<T> a, tropical::detail::In<T> b, MatrixView<T> c, const Options& options = {}) {
    using tropical::detail::operand;
    static_assert(semiring_supports<S, T>,
                  "OrAnd takes std::uint8_t or bool elements; the other semirings float, "
                  "double, std::int32_t or std::int64_t");
    detail::product(S::value, dtype_of<T>(), operand(a), operand(b), operand(c), nullptr, 1, options);
}

// C = A (x) B, and argmax[i,j] = the smallest k whose term attains C[i,j] (-1 where no term beats
// the zero). Not combinable with options.accumulate.
template <SemiringTag S, Element T>
void gemm_with_argmax(tropical::detail::In<T> a, tropical::detail::In<T> b, MatrixView<T> c,
                      MatrixView<std::int32_t> argmax, const Options& options = {}) {
    using tropical::detail::operand;
    const detail::OperandRef indices = operand(argmax);
    static_assert(semiring_supports<S, T>,
                  "OrAnd takes std::uint8_t or bool elements; the other semirings float, "
                  "double, std::int32_t or std::int64_t");
    detail::product(S::value, dtype_of<T>(), operand(a), operand(b), operand(c), &indices, 1, options);
}

// The gradient of A (M x K) given grad_C (M x N), the argmax of the forward product, A (M x K) and
// B (K x N), read as tropical::gemm_backward_a reads them (MaxMul B, MaxMin and MinMax both). f32
// and f64. grad_A is overwritten unless options.accumulate. The sums run in a fixed order: results
// do not vary from run to run.
template <SemiringTag S, Element T>
requires(!tropical::detail::reads_result<S>) void gemm_backward_a(tropical::detail::In<T> grad_c,
                                                                  MatrixView<const std::int32_t> argmax,
                                                                  tropical::detail::In<T> a, tropical::detail::In<T> b,
                                                                  MatrixView<T> grad_a, const Options& options = {}) {
    detail::backward_of<S, T>(detail::Gradient::OfA, grad_c, argmax, a, b, grad_a, 1, options);
}

// The same without A, for the semirings whose gradient of A reads B at most.
template <SemiringTag S, Element T>
requires(!tropical::detail::needs_both_operands<S>) void gemm_backward_a(tropical::detail::In<T> grad_c,
                                                                         MatrixView<const std::int32_t> argmax,
                                                                         tropical::detail::In<T> b,
                                                                         MatrixView<T> grad_a,
                                                                         const Options& options = {}) {
    gemm_backward_a<S, T>(grad_c, argmax, {}, b, grad_a, options);
}

// The gradient of B (K x N), likewise.
template <SemiringTag S, Element T>
requires(!tropical::detail::reads_result<S>) void gemm_backward_b(tropical::detail::In<T> grad_c,
                                                                  MatrixView<const std::int32_t> argmax,
                                                                  tropical::detail::In<T> a, tropical::detail::In<T> b,
                                                                  MatrixView<T> grad_b, const Options& options = {}) {
    detail::backward_of<S, T>(detail::Gradient::OfB, grad_c, argmax, a, b, grad_b, 1, options);
}

// The same without B, for the semirings whose gradient of B reads A at most.
template <SemiringTag S, Element T>
requires(!tropical::detail::needs_both_operands<S>) void gemm_backward_b(tropical::detail::In<T> grad_c,
                                                                         MatrixView<const std::int32_t> argmax,
                                                                         tropical::detail::In<T> a,
                                                                         MatrixView<T> grad_b,
                                                                         const Options& options = {}) {
    gemm_backward_b<S, T>(grad_c, argmax, a, {}, grad_b, options);
}

// `count` independent products C_b = A_b (x) B_b; an input batch stride of 0 broadcasts that operand.
template <SemiringTag S, Element T>
void gemm_batched(tropical::detail::BatchedIn<T> a, tropical::detail::BatchedIn<T> b, BatchedView<T> c,
                  std::int64_t count, const Options& options = {}) {
    using tropical::detail::operand;
    static_assert(semiring_supports<S, T>,
                  "OrAnd takes std::uint8_t or bool elements; the other semirings float, "
                  "double, std::int32_t or std::int64_t");
    detail::product(S::value, dtype_of<T>(), operand(a), operand(b), operand(c), nullptr, count, options);
}

template <SemiringTag S, Element T>
void gemm_batched_with_argmax(tropical::detail::BatchedIn<T> a, tropical::detail::BatchedIn<T> b, BatchedView<T> c,
                              BatchedView<std::int32_t> argmax, std::int64_t count, const Options& options = {}) {
    using tropical::detail::operand;
    const detail::OperandRef indices = operand(argmax);
    static_assert(semiring_supports<S, T>,
                  "OrAnd takes std::uint8_t or bool elements; the other semirings float, "
                  "double, std::int32_t or std::int64_t");
    detail::product(S::value, dtype_of<T>(), operand(a), operand(b), operand(c), &indices, count, options);
}

template <SemiringTag S, Element T>
requires(!tropical::detail::reads_result<S>) void gemm_batched_backward_a(
    tropical::detail::BatchedIn<T> grad_c, BatchedView<const std::int32_t> argmax, tropical::detail::BatchedIn<T> a,
    tropical::detail::BatchedIn<T> b, BatchedView<T> grad_a, std::int64_t count, const Options& options = {}) {
    detail::backward_of<S, T>(detail::Gradient::OfA, grad_c, argmax, a, b, grad_a, count, options);
}

template <SemiringTag S, Element T>
requires(!tropical::detail::needs_both_operands<S>) void gemm_batched_backward_a(
    tropical::detail::BatchedIn<T> grad_c, BatchedView<const std::int32_t> argmax, tropical::detail::BatchedIn<T> b,
    BatchedView<T> grad_a, std::int64_t count, const Options& options = {}) {
    gemm_batched_backward_a<S, T>(grad_c, argmax, {}, b, grad_a, count, options);
}

template <SemiringTag S, Element T>
requires(!tropical::detail::reads_result<S>) void gemm_batched_backward_b(
    tropical::detail::BatchedIn<T> grad_c, BatchedView<const std::int32_t> argmax, tropical::detail::BatchedIn<T> a,
    tropical::detail::BatchedIn<T> b, BatchedView<T> grad_b, std::int64_t count, const Options& options = {}) {
    detail::backward_of<S, T>(detail::Gradient::OfB, grad_c, argmax, a, b, grad_b, count, options);
}

template <SemiringTag S, Element T>
requires(!tropical::detail::needs_both_operands<S>) void gemm_batched_backward_b(
    tropical::detail::BatchedIn<T> grad_c, BatchedView<const std::int32_t> argmax, tropical::detail::BatchedIn<T> a,
    BatchedView<T> grad_b, std::int64_t count, const Options& options = {}) {
    gemm_batched_backward_b<S, T>(grad_c, argmax, a, {}, grad_b, count, options);
}

// LogPlus's gradients, as tropical/gemm.hpp's: from the forward's C (M x N) instead of an argmax,
// grad_A[i,k] = sum_j grad_C[i,j] * exp(A[i,k] + B[k,j] - C[i,j]) and grad_B[k,j] = sum_i of the same
// (IEEE's exp: a term of -inf gets nothing, C = NaN gives NaN; 0 where C is -inf); the weights are never
// stored. Overwritten unless options.accumulate.
template <SemiringTag S, Element T>
requires tropical::detail::reads_result<S>
void gemm_backward_a(tropical::detail::In<T> grad_c, tropical::detail::In<T> c, tropical::detail::In<T> a,
                     tropical::detail::In<T> b, MatrixView<T> grad_a, const Options& options = {}) {
    detail::backward_of<S, T>(detail::Gradient::OfA, grad_c, c, a, b, grad_a, 1, options);
}
template <SemiringTag S, Element T>
requires tropical::detail::reads_result<S>
void gemm_backward_b(tropical::detail::In<T> grad_c, tropical::detail::In<T> c, tropical::detail::In<T> a,
                     tropical::detail::In<T> b, MatrixView<T> grad_b, const Options& options = {}) {
    detail::backward_of<S, T>(detail::Gradient::OfB, grad_c, c, a, b, grad_b, 1, options);
}
template <SemiringTag S, Element T>
requires tropical::detail::reads_result<S>
void gemm_batched_backward_a(tropical::detail::BatchedIn<T> grad_c, tropical::detail::BatchedIn<T> c,
                             tropical::detail::BatchedIn<T> a, tropical::detail::BatchedIn<T> b, BatchedView<T> grad_a,
                             std::int64_t count, const Options& options = {}) {
    detail::backward_of<S, T>(detail::Gradient::OfA, grad_c, c, a, b, grad_a, count, options);
}
template <SemiringTag S, Element T>
requires tropical::detail::reads_result<S>
void gemm_batched_backward_b(tropical::detail::BatchedIn<T> grad_c, tropical::detail::BatchedIn<T> c,
                             tropical::detail::BatchedIn<T> a, tropical::detail::BatchedIn<T> b, BatchedView<T> grad_b,
                             std::int64_t count, const Options& options = {}) {
    detail::backward_of<S, T>(detail::Gradient::OfB, grad_c, c, a, b, grad_b, count, options);
}

// OrAnd on packed operands, and the packing, as tropical/gemm.hpp's (there: the layout of the words).
template <Boolean T>
void pack_bits(tropical::detail::In<T> bytes, PackAs as, MatrixView<std::uint32_t> words, const Options& options = {}) {
    using tropical::detail::operand;
    detail::pack_bits(operand(bytes), as, operand(words), 1, options);
}

template <Boolean T>
void pack_bits_batched(tropical::detail::BatchedIn<T> bytes, PackAs as, BatchedView<std::uint32_t> words,
                       std::int64_t count, const Options& options = {}) {
    using tropical::detail::operand;
    detail::pack_bits(operand(bytes), as, operand(words), count, options);
}

template <SemiringTag S, Boolean T>
void gemm_packed(MatrixView<const std::uint32_t> a, MatrixView<const std::uint32_t> b, std::int64_t k, MatrixView<T> c,
                 const Options& options = {}) {
    static_assert(std::is_same_v<S, OrAnd>, "only OrAnd is defined on packed booleans");
    using tropical::detail::operand;
    detail::product_packed(S::value, operand(a), operand(b), k, operand(c), nullptr, 1, options);
}

template <SemiringTag S, Boolean T>
void gemm_packed_with_argmax(MatrixView<const std::uint32_t> a, MatrixView<const std::uint32_t> b, std::int64_t k,
                             MatrixView<T> c, MatrixView<std::int32_t> argmax, const Options& options = {}) {
    static_assert(std::is_same_v<S, OrAnd>, "only OrAnd is defined on packed booleans");
    using tropical::detail::operand;
    const detail::OperandRef indices = operand(argmax);
    detail::product_packed(S::value, operand(a), operand(b), k, operand(c), &indices, 1, options);
}

template <SemiringTag S, Boolean T>
void gemm_packed_batched(BatchedView<const std::uint32_t> a, BatchedView<const std::uint32_t> b, std::int64_t k,
                         BatchedView<T> c, std::int64_t count, const Options& options = {}) {
    static_assert(std::is_same_v<S, OrAnd>, "only OrAnd is defined on packed booleans");
    using tropical::detail::operand;
    detail::product_packed(S::value, operand(a), operand(b), k, operand(c), nullptr, count, options);
}

template <SemiringTag S, Boolean T>
void gemm_packed_batched_with_argmax(BatchedView<const std::uint32_t> a, BatchedView<const std::uint32_t> b,
                                     std::int64_t k, BatchedView<T> c, BatchedView<std::int32_t> argmax,
                                     std::int64_t count, const Options& options = {}) {
    static_assert(std::is_same_v<S, OrAnd>, "only OrAnd is defined on packed booleans");
    using tropical::detail::operand;
    const detail::OperandRef indices = operand(argmax);
    detail::product_packed(S::value, operand(a), operand(b), k, operand(c), &indices, count, options);
}

// The walk back through a chain's argmax tables, as tropical/gemm.hpp's backtrack (there: what it
// writes); options.threads is not used (one pass over the rows).
inline void backtrack(BatchedView<const std::int32_t> back, std::int64_t steps, MatrixView<const std::int32_t> last,
                      MatrixView<std::int32_t> path, const Options& options = {}) {
    using tropical::detail::operand;
    detail::backtrack(operand(back), steps, operand(last), operand(path), options);
}

}  // namespace tropical::host
