#pragma once
// A binary tensor contraction in a tropical semiring, on strided tensors whose dimensions carry
// index labels (as in einsum):
//
//   C[c-labels] = (+) over the labels C lacks of  A[a-labels] (x) B[b-labels]
//
// A label in A, B and C is a batch index; in A (or B) and C, a row (column) index; in A and B but
// not C, contracted; in A or B alone and not in C, reduced with (+) first. A label repeated in one
// input takes its diagonal. The contraction becomes one batched product (tropical/gemm.hpp) on
// strided views of A, B and C wherever their strides allow it. Where they do not, or where an index
// must be reduced first, the host path copies or reduces into buffers of its own; the GPU path
// (which allocates nothing) throws tropical::Unsupported, saying which operand needs what.
// Languages other than C++ get the same engine through tropical_contract / tropical_host_contract
// (tropical/c_api.h); the Python package's einsum plans whole networks into such steps.
//
// The argmax forms also write, for each element of C, which term attained it: the flat (row-major)
// index over the contracted labels, in the order A lists them (after its diagonals: a repeated
// label counts where it first appears), the smallest that attains C's value, -1 where no term
// beats the semiring's zero. That is what the gradient of a pairwise step needs. The argmax tensor
// holds int32, has C's labels and sizes (any strides), and there may be no label that one input
// alone holds (reduce it first: the argmax would not cover it).
//
// The counting forms (counting_contract) take the counting semiring's (value, count) pairs
// (tropical/counting.hpp): each tensor is two views with the same labels and sizes, its values
// (float or double) and its counts (double), each with strides of its own; the same grouping of
// labels makes one batched counting product of them. No argmax (the counts are what it computes).
#include <cstdint>
#include <initializer_list>

#include <tropical/counting.hpp>
#include <tropical/export.hpp>
#include <tropical/gemm.hpp>
#include <tropical/host.hpp>
#include <tropical/types.hpp>

namespace tropical {

inline constexpr int max_tensor_rank = 32;

// A non-owning view of a tensor: element (i0, i1, ...) is data[i0 * strides[0] + i1 * strides[1] + ...];
// labels name the dimensions' indices. Strides are in elements; inputs may have stride 0 (broadcast).
template <class T>
struct TensorView {
    T* data = nullptr;
    int rank = 0;
    std::int64_t sizes[max_tensor_rank] = {};
    std::int64_t strides[max_tensor_rank] = {};
    std::int32_t labels[max_tensor_rank] = {};

    constexpr operator TensorView<const T>() const {
        TensorView<const T> v;
        v.data = data, v.rank = rank;
        for (int d = 0; d < rank && d < max_tensor_rank; ++d)
            v.sizes[d] = sizes[d], v.strides[d] = strides[d], v.labels[d] = labels[d];
        return v;
    }
};

// A dense row-major (C order) tensor: the last dimension is contiguous. Throws InvalidArgument where
// sizes and labels differ in number or exceed max_tensor_rank.
template <class T>
TensorView<T> dense_tensor(T* data, std::initializer_list<std::int64_t> sizes,
                           std::initializer_list<std::int32_t> labels) {
    if (sizes.size() != labels.size() || sizes.size() > static_cast<std::size_t>(max_tensor_rank))
        throw InvalidArgument("dense_tensor: give one label per dimension, at most max_tensor_rank of them");
    TensorView<T> v;
    v.data = data;
    v.rank = static_cast<int>(sizes.size());
    int d = 0;
    for (auto s : sizes) v.sizes[d++] = s;
    d = 0;
    for (auto l : labels) v.labels[d++] = l;
    std::int64_t stride = 1;
    for (d = v.rank - 1; d >= 0; --d) v.strides[d] = stride, stride *= v.sizes[d];
    return v;
}

namespace detail {

// A tensor operand, type-erased: the layout of the C ABI's tropical_tensor.
struct TensorRef {
    const void* data = nullptr;
    std::int32_t rank = 0;
    const std::int64_t* sizes = nullptr;
    const std::int64_t* strides = nullptr;
    const std::int32_t* labels = nullptr;
};

template <class T>
TensorRef tensor_ref(const TensorView<T>& v) {
    return {v.data, v.rank, v.sizes, v.strides, v.labels};
}

// `argmax` may be null (no argmax).
TROPICAL_GEMM_EXPORT void contract(Semiring semiring, DType dtype, const TensorRef& a, const TensorRef& b,
                                   const TensorRef& c, const TensorRef* argmax, const GemmOptions& options);
TROPICAL_GEMM_EXPORT void host_contract(Semiring semiring, DType dtype, const TensorRef& a, const TensorRef& b,
                                        const TensorRef& c, const TensorRef* argmax, const host::Options& options);

// A counting tensor, type-erased: its values (of the dtype given beside it) and its counts (double).
struct CountingTensorRef {
    TensorRef values, counts;
};

TROPICAL_GEMM_EXPORT void counting_contract(DType dtype, const CountingTensorRef& a, const CountingTensorRef& b,
                                            const CountingTensorRef& c, const GemmOptions& options);
TROPICAL_GEMM_EXPORT void host_counting_contract(DType dtype, const CountingTensorRef& a, const CountingTensorRef& b,
                                                 const CountingTensorRef& c, const host::Options& options);

}  // namespace detail

// C = the contraction of A and B over the labels C lacks, on the GPU (device memory, asynchronous on
// options.stream, allocating nothing).
template <SemiringTag S, Element T>
void contract(const TensorView<const T>& a, const TensorView<const T>& b, const TensorView<T>& c,
              const GemmOptions& options = {}) {
    static_assert(semiring_supports<S, T>,
                  "OrAnd takes std::uint8_t or bool elements; the other semirings float, "
                  "double, std::int32_t or std::int64_t");
    detail::contract(S::value, dtype_of<T>(), detail::tensor_ref(a), detail::tensor_ref(b), detail::tensor_ref(c),
                     nullptr, options);
}

// The same, and the argmax (see the top of this file). Where the view of A or B would merge the
// contracted labels in another order than A lists them, this throws tropical::Unsupported: list
// A's dimensions so that its contracted ones come outermost first in memory (the host path copies).
template <SemiringTag S, Element T>
void contract_with_argmax(const TensorView<const T>& a, const TensorView<const T>& b, const TensorView<T>& c,
                          const TensorView<std::int32_t>& argmax, const GemmOptions& options = {}) {
    const detail::TensorRef indices = detail::tensor_ref(argmax);
    detail::contract(S::value, dtype_of<T>(), detail::tensor_ref(a), detail::tensor_ref(b), detail::tensor_ref(c),
                     &indices, options);
}

// C = the contraction of A and B in the counting semiring (see the top of this file), on the GPU:
// values and counts of each tensor with the same labels and sizes.
template <CountingValue T>
void counting_contract(const TensorView<const T>& a_values, const TensorView<const double>& a_counts,
                       const TensorView<const T>& b_values, const TensorView<const double>& b_counts,
                       const TensorView<T>& c_values, const TensorView<double>& c_counts,
                       const GemmOptions& options = {}) {
    using detail::tensor_ref;
    detail::counting_contract(dtype_of<T>(), {tensor_ref(a_values), tensor_ref(a_counts)},
                              {tensor_ref(b_values), tensor_ref(b_counts)},
                              {tensor_ref(c_values), tensor_ref(c_counts)}, options);
}

namespace host {

// The same in host memory, on the CPU; synchronous. Copies operands whose strides admit no
// batched-matrix view and reduces indices held by one input alone, in buffers of its own.
template <SemiringTag S, Element T>
void contract(const TensorView<const T>& a, const TensorView<const T>& b, const TensorView<T>& c,
              const Options& options = {}) {
    static_assert(semiring_supports<S, T>,
                  "OrAnd takes std::uint8_t or bool elements; the other semirings float, "
                  "double, std::int32_t or std::int64_t");
    tropical::detail::host_contract(S::value, dtype_of<T>(), tropical::detail::tensor_ref(a),
                                    tropical::detail::tensor_ref(b), tropical::detail::tensor_ref(c), nullptr, options);
}

// The same, and the argmax (see the top of this file); copies what has no view, in either order.
template <SemiringTag S, Element T>
void contract_with_argmax(const TensorView<const T>& a, const TensorView<const T>& b, const TensorView<T>& c,
                          const TensorView<std::int32_t>& argmax, const Options& options = {}) {
    const tropical::detail::TensorRef indices = tropical::detail::tensor_ref(argmax);
    tropical::detail::host_contract(S::value, dtype_of<T>(), tropical::detail::tensor_ref(a),
                                    tropical::detail::tensor_ref(b), tropical::detail::tensor_ref(c), &indices,
                                    options);
}

// The counting contraction in host memory, on the CPU; copies and reduces as contract does.
template <CountingValue T>
void counting_contract(const TensorView<const T>& a_values, const TensorView<const double>& a_counts,
                       const TensorView<const T>& b_values, const TensorView<const double>& b_counts,
                       const TensorView<T>& c_values, const TensorView<double>& c_counts, const Options& options = {}) {
    using tropical::detail::tensor_ref;
    tropical::detail::host_counting_contract(dtype_of<T>(), {tensor_ref(a_values), tensor_ref(a_counts)},
                                             {tensor_ref(b_values), tensor_ref(b_counts)},
                                             {tensor_ref(c_values), tensor_ref(c_counts)}, options);
}

}  // namespace host
}  // namespace tropical
