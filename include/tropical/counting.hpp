#pragma once
// The counting tropical semiring (max-plus with multiplicities), on the GPU and on the CPU:
//
//   an element is a pair (value, count);  (va, ca) (x) (vb, cb) = (va + vb, ca * cb)
//   (+) keeps the larger value, adding the counts of equal values;  zero (-inf, 0), one (0, 1)
//
// so C[i,j] = (max_k A[i,k] + B[k,j], the sum over the k attaining it of A's count times B's): a
// tropical tensor network contracted in it gives its optimum and the number of configurations that
// attain it (a spin glass's ground-state degeneracy, the number of maximum independent sets).
//
// Each operand is two matrices of the same shape, values (float or double) and counts (double),
// each with its own layout, leading dimension and batch stride. Counts are exact integers while
// every partial sum and product stays at or below 2^53. A result of value -inf has count 0; a NaN
// value anywhere makes the result (NaN, NaN); +inf terms tie and add their counts. README.md
// ("Semantics") and src/reference/reference.hpp state the rules in full. No argmax, no backward: the
// counts are what the semiring computes, and split-K has no exact way to combine pairs.
#include <concepts>
#include <cstdint>

#include <tropical/export.hpp>
#include <tropical/gemm.hpp>
#include <tropical/host.hpp>
#include <tropical/matrix.hpp>
#include <tropical/types.hpp>

namespace tropical {

template <class T>
concept CountingValue = std::same_as<T, float> || std::same_as<T, double>;

namespace detail {

// One operand of a counting product, type-erased: its values and its counts.
struct CountingOperands {
    OperandRef values, counts;
};

// The entry points behind the templates below: `batch` products C = A (x) B in device memory (on
// options.stream, asynchronous) or in host memory (on the CPU, synchronous).
TROPICAL_GEMM_EXPORT void counting_product(DType dtype, const CountingOperands& a, const CountingOperands& b,
                                           const CountingOperands& c, std::int64_t batch, const GemmOptions& options);
TROPICAL_GEMM_EXPORT void host_counting_product(DType dtype, const CountingOperands& a, const CountingOperands& b,
                                                const CountingOperands& c, std::int64_t batch,
                                                const host::Options& options);

// A pair of views (single or batched) as one operand.
template <class V, class C>
CountingOperands counting_operands(V values, C counts) {
    return {operand(values), operand(counts)};
}

}  // namespace detail

// C = A (x) B in device memory: A is M x K, B is K x N, C is M x N (values and counts alike).
// options.accumulate gives C = C (+) A (x) B.
template <CountingValue T>
void counting_gemm(detail::In<T> a_values, MatrixView<const double> a_counts, detail::In<T> b_values,
                   MatrixView<const double> b_counts, MatrixView<T> c_values, MatrixView<double> c_counts,
                   const GemmOptions& options = {}) {
    using detail::counting_operands;
    detail::counting_product(dtype_of<T>(), counting_operands(a_values, a_counts),
                             counting_operands(b_values, b_counts), counting_operands(c_values, c_counts), 1, options);
}

// `count` independent products C_b = A_b (x) B_b; an input batch stride of 0 (values or counts)
// broadcasts that matrix.
template <CountingValue T>
void counting_gemm_batched(detail::BatchedIn<T> a_values, BatchedView<const double> a_counts,
                           detail::BatchedIn<T> b_values, BatchedView<const double> b_counts, BatchedView<T> c_values,
                           BatchedView<double> c_counts, std::int64_t count, const GemmOptions& options = {}) {
    using detail::counting_operands;
    detail::counting_product(dtype_of<T>(), counting_operands(a_values, a_counts),
                             counting_operands(b_values, b_counts), counting_operands(c_values, c_counts), count,
                             options);
}

namespace host {

// The same in host memory, on the CPU's cores (synchronous).
template <CountingValue T>
void counting_gemm(tropical::detail::In<T> a_values, MatrixView<const double> a_counts,
                   tropical::detail::In<T> b_values, MatrixView<const double> b_counts, MatrixView<T> c_values,
                   MatrixView<double> c_counts, const Options& options = {}) {
    using tropical::detail::counting_operands;
    tropical::detail::host_counting_product(dtype_of<T>(), counting_operands(a_values, a_counts),
                                            counting_operands(b_values, b_counts),
                                            counting_operands(c_values, c_counts), 1, options);
}

template <CountingValue T>
void counting_gemm_batched(tropical::detail::BatchedIn<T> a_values, BatchedView<const double> a_counts,
                           tropical::detail::BatchedIn<T> b_values, BatchedView<const double> b_counts,
                           BatchedView<T> c_values, BatchedView<double> c_counts, std::int64_t count,
                           const Options& options = {}) {
    using tropical::detail::counting_operands;
    tropical::detail::host_counting_product(dtype_of<T>(), counting_operands(a_values, a_counts),
                                            counting_operands(b_values, b_counts),
                                            counting_operands(c_values, c_counts), count, options);
}

}  // namespace host
}  // namespace tropical
