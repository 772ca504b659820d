#pragma once
// Tropical matrix products on the GPU:  C[i,j] = (+)_k A[i,k] (x) B[k,j]
//
//   semiring  (+)   (x)   zero                      one
//   MaxPlus   max   +     -inf (integers: min)      0
//   MinPlus   min   +     +inf (integers: max)      0
//   MaxMul    max   *     0                         1
//   MaxMin    max   min   -inf (integers: min)      +inf (integers: max)
//   MinMax    min   max   +inf (integers: max)      -inf (integers: min)
//   OrAnd     OR    AND   false (0)                 true (1)        std::uint8_t or bool elements
//
// All operands are in device memory of one GPU; every call is asynchronous on options.stream,
// allocates nothing and never synchronises. Inputs are validated before anything is launched:
// bad shapes, layouts or pointers throw tropical::InvalidArgument naming what is wrong.
// README.md states the exact semantics (integer ranges, NaN, argmax ties, K = 0).
#include <cstdint>
#include <type_traits>

#include <tropical/context.hpp>
#include <tropical/error.hpp>
#include <tropical/export.hpp>
#include <tropical/matrix.hpp>
#include <tropical/types.hpp>

namespace tropical {

// OrAnd's elements: booleans in bytes, nonzero read as true, results written 0 or 1.
template <class T>
concept Boolean = std::is_same_v<T, std::uint8_t> || std::is_same_v<T, bool>;

// Which operand pack_bits packs a boolean matrix for: an A (M x K), whose rows are packed along
// their K columns into an M x ceil(K/32) matrix of words, or a B (K x N), whose columns are packed
// along their K rows into ceil(K/32) x N words.
enum class PackAs : std::uint8_t { A, B };

struct GemmOptions {
    Stream stream = nullptr;  // a CUstream / cudaStream_t; nullptr is the legacy default stream
    bool accumulate = false;  // C = C (+) A(x)B instead of C = A(x)B; backward: grad += instead of =
    // The CUDA device that holds every operand, where the caller knows it and knows that `stream`
    // belongs to that device's primary context (as PyTorch's tensors and current stream do): the
    // library then skips asking the driver about each pointer and the stream. -1: it asks.
    int device = -1;
};

namespace detail {

// A matrix operand, type-erased: what the templates below pass to the library.
struct OperandRef {
    const void* data = nullptr;
    std::int64_t rows = 0, cols = 0, ld = 0;
    Layout layout = Layout::RowMajor;
    std::int64_t batch_stride = 0;
};

// The library's entry points behind the templates below: `batch` products C = A (x) B (with the
// argmax where `argmax` is not null), and the gradient of A (M x K) or B (K x N) from grad_C,
// argmax, A and B (each read where the semiring's gradient needs it, else it may be empty).
TROPICAL_GEMM_EXPORT void product(Semiring semiring, DType dtype, const OperandRef& a, const OperandRef& b,
                                  const OperandRef& c, const OperandRef* argmax, std::int64_t batch,
                                  const GemmOptions& options);
// OrAnd on operands packed along K (a: M x ceil(k/32) words, b: ceil(k/32) x N), and the packing.
TROPICAL_GEMM_EXPORT void product_packed(Semiring semiring, const OperandRef& a, const OperandRef& b, std::int64_t k,
                                         const OperandRef& c, const OperandRef* argmax, std::int64_t batch,
                                         const GemmOptions& options);
TROPICAL_GEMM_EXPORT void pack_bits(const OperandRef& bytes, PackAs as, const OperandRef& words, std::int64_t batch,
                                    const GemmOptions& options);
// The walk back of backtrack() below: back holds `steps` matrices (rows x states), last is rows x 1,
// path rows x (steps + 1).
TROPICAL_GEMM_EXPORT void backtrack(const OperandRef& back, std::int64_t steps, const OperandRef& last,
                                    const OperandRef& path, const GemmOptions& options);
enum class Gradient : std::uint8_t { OfA, OfB };
TROPICAL_GEMM_EXPORT void backward(Gradient of, Semiring semiring, DType dtype, const OperandRef& grad_c,
                                   const OperandRef& argmax, const OperandRef& a, const OperandRef& b,
                                   const OperandRef& grad, std::int64_t batch, const GemmOptions& options);

// Whether the gradients of semiring S need both operands (MaxMin, MinMax: grad_C goes to the operand
// whose value the term took; LogPlus: every term's weight), so that the short backward forms below, which take one, refuse it.
template <class S>
inline constexpr bool needs_both_operands = gradient_reads_a(S::value, true) && gradient_reads_b(S::value, true);
// Whether the gradients of semiring S come from the forward's C rather than its argmax (LogPlus).
template <class S>
inline constexpr bool reads_result = gradient_reads_result(S::value);

// The semirings with a gradient (tropical::has_gradient), for the templates' static_asserts.
template <class S>
inline constexpr bool has_gradient = tropical::has_gradient(S::value);

template <class T>
OperandRef operand(MatrixView<T> m, std::int64_t batch_stride = 0) {
    return {m.data, m.rows, m.cols, m.ld, m.layout, batch_stride};
}
template <class T>
OperandRef operand(BatchedView<T> m) {
    return operand(m.matrix, m.batch_stride);
}

template <class T>
using In = std::type_identity_t<MatrixView<const T>>;  // deduce T from the output only
template <class T>
using BatchedIn = std::type_identity_t<BatchedView<const T>>;

}  // namespace detail

// C = A (x) B.  A is M x K, B is K x N, C is M x N.
template <SemiringTag S, Element T>
void gemm(detail::In<T> a, detail::In<T> b, MatrixView<T> c, const GemmOptions& options = {}) {
    static_assert(semiring_supports<S, T>,
                  "OrAnd takes std::uint8_t or bool elements; the other semirings float, "
                  "double, std::int32_t or std::int64_t");
    detail::product(S::value, dtype_of<T>(), detail::operand(a), detail::operand(b), detail::operand(c), nullptr, 1,
                    options);
}

// C = A (x) B, and argmax[i,j] = the smallest k whose term attains C[i,j] (-1 where no term beats
// the zero). Not combinable with options.accumulate.
template <SemiringTag S, Element T>
void gemm_with_argmax(detail::In<T> a, detail::In<T> b, MatrixView<T> c, MatrixView<std::int32_t> argmax,
                      const GemmOptions& options = {}) {
    static_assert(semiring_supports<S, T>,
                  "OrAnd takes std::uint8_t or bool elements; the other semirings float, "
                  "double, std::int32_t or std::int64_t");
    const detail::OperandRef indices = detail::operand(argmax);
    detail::product(S::value, dtype_of<T>(), detail::operand(a), detail::operand(b), detail::operand(c), &indices, 1,
                    options);
}

// The gradient of A (M x K) given grad_C (M x N), the argmax of the forward product, A (M x K) and
// B (K x N): MaxPlus and MinPlus route grad_C[i,j] to A[i,argmax]; MaxMul multiplies it by B
// (product rule); MaxMin and MinMax route it only where A[i,k], not B[k,j], is the term's value (A's
// on a tie). An operand the semiring does not read may be an empty view. f32 and f64. grad_A is
// overwritten unless options.accumulate.
template <SemiringTag S, Element T>
requires(!detail::reads_result<S>) void gemm_backward_a(detail::In<T> grad_c, MatrixView<const std::int32_t> argmax,
                                                        detail::In<T> a, detail::In<T> b, MatrixView<T> grad_a,
                                                        const GemmOptions& options = {}) {
    static_assert(detail::has_gradient<S>, "OrAnd is Boolean: it has no gradient");
    detail::backward(detail::Gradient::OfA, S::value, dtype_of<T>(), detail::operand(grad_c), detail::operand(argmax),
                     detail::operand(a), detail::operand(b), detail::operand(grad_a), 1, options);
}

// The same without A, for the semirings whose gradient of A reads B at most (B for MaxMul only).
template <SemiringTag S, Element T>
requires(!detail::needs_both_operands<S>) void gemm_backward_a(detail::In<T> grad_c,
                                                               MatrixView<const std::int32_t> argmax, detail::In<T> b,
                                                               MatrixView<T> grad_a, const GemmOptions& options = {}) {
    gemm_backward_a<S, T>(grad_c, argmax, {}, b, grad_a, options);
}

// The gradient of B (K x N), as gemm_backward_a's of A.
template <SemiringTag S, Element T>
requires(!detail::reads_result<S>) void gemm_backward_b(detail::In<T> grad_c, MatrixView<const std::int32_t> argmax,
                                                        detail::In<T> a, detail::In<T> b, MatrixView<T> grad_b,
                                                        const GemmOptions& options = {}) {
    static_assert(detail::has_gradient<S>, "OrAnd is Boolean: it has no gradient");
    detail::backward(detail::Gradient::OfB, S::value, dtype_of<T>(), detail::operand(grad_c), detail::operand(argmax),
                     detail::operand(a), detail::operand(b), detail::operand(grad_b), 1, options);
}

// The same without B, for the semirings whose gradient of B reads A at most (A for MaxMul only).
template <SemiringTag S, Element T>
requires(!detail::needs_both_operands<S>) void gemm_backward_b(detail::In<T> grad_c,
                                                               MatrixView<const std::int32_t> argmax, detail::In<T> a,
                                                               MatrixView<T> grad_b, const GemmOptions& options = {}) {
    gemm_backward_b<S, T>(grad_c, argmax, a, {}, grad_b, options);
}

// `count` independent products C_b = A_b (x) B_b. Any count (also beyond 65535); an input batch
// stride of 0 broadcasts that operand.
template <SemiringTag S, Element T>
void gemm_batched(detail::BatchedIn<T> a, detail::BatchedIn<T> b, BatchedView<T> c, std::int64_t count,
                  const GemmOptions& options = {}) {
    static_assert(semiring_supports<S, T>,
                  "OrAnd takes std::uint8_t or bool elements; the other semirings float, "
                  "double, std::int32_t or std::int64_t");
    detail::product(S::value, dtype_of<T>(), detail::operand(a), detail::operand(b), detail::operand(c), nullptr, count,
                    options);
}

template <SemiringTag S, Element T>
void gemm_batched_with_argmax(detail::BatchedIn<T> a, detail::BatchedIn<T> b, BatchedView<T> c,
                              BatchedView<std::int32_t> argmax, std::int64_t count, const GemmOptions& options = {}) {
    static_assert(semiring_supports<S, T>,
                  "OrAnd takes std::uint8_t or bool elements; the other semirings float, "
                  "double, std::int32_t or std::int64_t");
    const detail::OperandRef indices = detail::operand(argmax);
    detail::product(S::value, dtype_of<T>(), detail::operand(a), detail::operand(b), detail::operand(c), &indices,
                    count, options);
}

template <SemiringTag S, Element T>
requires(!detail::reads_result<S>) void gemm_batched_backward_a(detail::BatchedIn<T> grad_c,
                                                                BatchedView<const std::int32_t> argmax,
                                                                detail::BatchedIn<T> a, detail::BatchedIn<T> b,
                                                                BatchedView<T> grad_a, std::int64_t count,
                                                                const GemmOptions& options = {}) {
    static_assert(detail::has_gradient<S>, "OrAnd is Boolean: it has no gradient");
    detail::backward(detail::Gradient::OfA, S::value, dtype_of<T>(), detail::operand(grad_c), detail::operand(argmax),
                     detail::operand(a), detail::operand(b), detail::operand(grad_a), count, options);
}

template <SemiringTag S, Element T>
requires(!detail::needs_both_operands<S>) void gemm_batched_backward_a(detail::BatchedIn<T> grad_c,
                                                                       BatchedView<const std::int32_t> argmax,
                                                                       detail::BatchedIn<T> b, BatchedView<T> grad_a,
                                                                       std::int64_t count,
                                                                       const GemmOptions& options = {}) {
    gemm_batched_backward_a<S, T>(grad_c, argmax, {}, b, grad_a, count, options);
}

template <SemiringTag S, Element T>
requires(!detail::reads_result<S>) void gemm_batched_backward_b(detail::BatchedIn<T> grad_c,
                                                                BatchedView<const std::int32_t> argmax,
                                                                detail::BatchedIn<T> a, detail::BatchedIn<T> b,
                                                                BatchedView<T> grad_b, std::int64_t count,
                                                                const GemmOptions& options = {}) {
    static_assert(detail::has_gradient<S>, "OrAnd is Boolean: it has no gradient");
    detail::backward(detail::Gradient::OfB, S::value, dtype_of<T>(), detail::operand(grad_c), detail::operand(argmax),
                     detail::operand(a), detail::operand(b), detail::operand(grad_b), count, options);
}

template <SemiringTag S, Element T>
requires(!detail::needs_both_operands<S>) void gemm_batched_backward_b(detail::BatchedIn<T> grad_c,
                                                                       BatchedView<const std::int32_t> argmax,
                                                                       detail::BatchedIn<T> a, BatchedView<T> grad_b,
                                                                       std::int64_t count,
                                                                       const GemmOptions& options = {}) {
    gemm_batched_backward_b<S, T>(grad_c, argmax, a, {}, grad_b, count, options);
}

// LogPlus's gradients: its (+) combines every term, so they come from the forward's C (M x N), not an
// argmax: grad_A[i,k] = sum_j grad_C[i,j] * exp(A[i,k] + B[k,j] - C[i,j]) and grad_B[k,j] = sum_i of
// the same (IEEE's exp, so a term of -inf gets nothing and C = NaN gives NaN; 0 where C is -inf). Computed as products of their own: the weights are never
// stored. Overwritten unless options.accumulate.
template <SemiringTag S, Element T>
requires detail::reads_result<S>
void gemm_backward_a(detail::In<T> grad_c, detail::In<T> c, detail::In<T> a, detail::In<T> b, MatrixView<T> grad_a,
                     const GemmOptions& options = {}) {
    detail::backward(detail::Gradient::OfA, S::value, dtype_of<T>(), detail::operand(grad_c), detail::operand(c),
                     detail::operand(a), detail::operand(b), detail::operand(grad_a), 1, options);
}
template <SemiringTag S, Element T>
requires detail::reads_result<S>
void gemm_backward_b(detail::In<T> grad_c, detail::In<T> c, detail::In<T> a, detail::In<T> b, MatrixView<T> grad_b,
                     const GemmOptions& options = {}) {
    detail::backward(detail::Gradient::OfB, S::value, dtype_of<T>(), detail::operand(grad_c), detail::operand(c),
                     detail::operand(a), detail::operand(b), detail::operand(grad_b), 1, options);
}
template <SemiringTag S, Element T>
requires detail::reads_result<S>
void gemm_batched_backward_a(detail::BatchedIn<T> grad_c, detail::BatchedIn<T> c, detail::BatchedIn<T> a,
                             detail::BatchedIn<T> b, BatchedView<T> grad_a, std::int64_t count,
                             const GemmOptions& options = {}) {
    detail::backward(detail::Gradient::OfA, S::value, dtype_of<T>(), detail::operand(grad_c), detail::operand(c),
                     detail::operand(a), detail::operand(b), detail::operand(grad_a), count, options);
}
template <SemiringTag S, Element T>
requires detail::reads_result<S>
void gemm_batched_backward_b(detail::BatchedIn<T> grad_c, detail::BatchedIn<T> c, detail::BatchedIn<T> a,
                             detail::BatchedIn<T> b, BatchedView<T> grad_b, std::int64_t count,
                             const GemmOptions& options = {}) {
    detail::backward(detail::Gradient::OfB, S::value, dtype_of<T>(), detail::operand(grad_c), detail::operand(c),
                     detail::operand(a), detail::operand(b), detail::operand(grad_b), count, options);
}

// --- The walk back through a chain's argmax tables ----------------------------------------------
// The best paths of a dynamic program run as T chained products with argmax (a Viterbi decoder:
// v_{t+1} = v_t (x) W_t for B rows of S scores, back[t] the argmax of step t). back holds the T
// argmax tables, back[t] the B x S one of step t, so that back[t][b, s] is the state at step t from
// which state s at step t + 1 is reached best; last (B x 1) holds each row's final state (the
// argmax of v_T over its states: gemm_with_argmax<MaxPlus> of v_T by an S x 1 column of the
// semiring's one gives it with the best score). Writes path (B x (T + 1)):
//     path[b, T] = last[b, 0],   path[b, t] = back[t][b, path[b, t + 1]]   for t = T - 1 ... 0.
// An index outside [0, S) (-1 where no term beat the zero) ends a row's walk: that entry and the
// earlier ones of the row are written -1. A thread per row follows its T pointers on the GPU, so
// only the paths need to reach the host. Asynchronous on options.stream (options.accumulate must
// be off); validated like the products.
inline void backtrack(BatchedView<const std::int32_t> back, std::int64_t steps, MatrixView<const std::int32_t> last,
                      MatrixView<std::int32_t> path, const GemmOptions& options = {}) {
    detail::backtrack(detail::operand(back), steps, detail::operand(last), detail::operand(path), options);
}

// --- OrAnd on packed operands ---------------------------------------------------------------------
// Booleans packed along K into 32-bit words: bit k % 32 of word k / 32 holds element k along K. An
// A (M x K) is an M x ceil(K/32) matrix of words, a B (K x N) a ceil(K/32) x N one, in either layout
// with a leading dimension in words; the bits past K in the last word are ignored (they may hold
// anything). Each AND of two words is 32 terms: one instruction where a product of bytes costs
// about two (they are packed as they are staged), so packing once pays for products that reuse an
// operand, and for large ones (README, "OrAnd"). 128-bit loads where the words are 16-byte aligned
// and the leading dimension is a multiple of 4 words.

// Packs booleans in bytes (nonzero is true) into words for operand `as` (PackAs): bytes is M x K
// and words M x ceil(K/32) for an A; bytes K x N and words ceil(K/32) x N for a B. The bits past K
// are written 0. Asynchronous on options.stream like every product (options.accumulate must be off).
template <Boolean T>
void pack_bits(detail::In<T> bytes, PackAs as, MatrixView<std::uint32_t> words, const GemmOptions& options = {}) {
    detail::pack_bits(detail::operand(bytes), as, detail::operand(words), 1, options);
}

template <Boolean T>
void pack_bits_batched(detail::BatchedIn<T> bytes, PackAs as, BatchedView<std::uint32_t> words, std::int64_t count,
                       const GemmOptions& options = {}) {
    detail::pack_bits(detail::operand(bytes), as, detail::operand(words), count, options);
}

// C = A (x) B for OrAnd with A and B packed along K (k booleans): a is M x ceil(k/32) words, b is
// ceil(k/32) x N, c M x N booleans (written 0 or 1; options.accumulate ORs into them).
template <SemiringTag S, Boolean T>
void gemm_packed(MatrixView<const std::uint32_t> a, MatrixView<const std::uint32_t> b, std::int64_t k, MatrixView<T> c,
                 const GemmOptions& options = {}) {
    static_assert(std::is_same_v<S, OrAnd>, "only OrAnd is defined on packed booleans");
    detail::product_packed(S::value, detail::operand(a), detail::operand(b), k, detail::operand(c), nullptr, 1,
                           options);
}

// The same, and argmax[i,j] = the smallest k whose term is true (-1 where none is).
template <SemiringTag S, Boolean T>
void gemm_packed_with_argmax(MatrixView<const std::uint32_t> a, MatrixView<const std::uint32_t> b, std::int64_t k,
                             MatrixView<T> c, MatrixView<std::int32_t> argmax, const GemmOptions& options = {}) {
    static_assert(std::is_same_v<S, OrAnd>, "only OrAnd is defined on packed booleans");
    const detail::OperandRef indices = detail::operand(argmax);
    detail::product_packed(S::value, detail::operand(a), detail::operand(b), k, detail::operand(c), &indices, 1,
                           options);
}

template <SemiringTag S, Boolean T>
void gemm_packed_batched(BatchedView<const std::uint32_t> a, BatchedView<const std::uint32_t> b, std::int64_t k,
                         BatchedView<T> c, std::int64_t count, const GemmOptions& options = {}) {
    static_assert(std::is_same_v<S, OrAnd>, "only OrAnd is defined on packed booleans");
    detail::product_packed(S::value, detail::operand(a), detail::operand(b), k, detail::operand(c), nullptr, count,
                           options);
}

template <SemiringTag S, Boolean T>
void gemm_packed_batched_with_argmax(BatchedView<const std::uint32_t> a, BatchedView<const std::uint32_t> b,
                                     std::int64_t k, BatchedView<T> c, BatchedView<std::int32_t> argmax,
                                     std::int64_t count, const GemmOptions& options = {}) {
    static_assert(std::is_same_v<S, OrAnd>, "only OrAnd is defined on packed booleans");
    const detail::OperandRef indices = detail::operand(argmax);
    detail::product_packed(S::value, detail::operand(a), detail::operand(b), k, detail::operand(c), &indices, count,
                           options);
}

}  // namespace tropical
