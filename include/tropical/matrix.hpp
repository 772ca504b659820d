#pragma once
// Non-owning views of matrices in device memory. A view never allocates or copies; it says where
// the elements are: element (i, j) is data[i * ld + j] (row-major) or data[i + j * ld] (column-major).
#include <cstdint>

#include <tropical/types.hpp>

namespace tropical {

template <class T>
struct MatrixView {
    T* data = nullptr;
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::int64_t ld = 0;  // leading dimension, in elements: >= cols (row-major) or >= rows (column-major)
    Layout layout = Layout::RowMajor;

    // Strides in elements between consecutive rows and columns.
    constexpr std::int64_t row_stride() const { return layout == Layout::RowMajor ? ld : 1; }
    constexpr std::int64_t col_stride() const { return layout == Layout::RowMajor ? 1 : ld; }

    // A view of the same elements as const, as every input parameter takes it.
    constexpr operator MatrixView<const T>() const { return {data, rows, cols, ld, layout}; }
};

// A row-major view; ld defaults to cols (tightly packed rows).
template <class T>
constexpr MatrixView<T> row_major(T* data, std::int64_t rows, std::int64_t cols, std::int64_t ld = 0) {
    return {data, rows, cols, ld ? ld : cols, Layout::RowMajor};
}

// A column-major view (BLAS, Fortran, Julia); ld defaults to rows.
template <class T>
constexpr MatrixView<T> col_major(T* data, std::int64_t rows, std::int64_t cols, std::int64_t ld = 0) {
    return {data, rows, cols, ld ? ld : rows, Layout::ColMajor};
}

// `count` matrices of the same shape, the b-th starting batch_stride elements after the (b-1)-th.
// A batch stride of 0 uses one matrix for every product of the batch (broadcast); outputs need
// distinct matrices.
template <class T>
struct BatchedView {
    MatrixView<T> matrix;
    std::int64_t batch_stride = 0;

    constexpr operator BatchedView<const T>() const { return {matrix, batch_stride}; }
};

template <class T>
constexpr BatchedView<T> batched(MatrixView<T> first, std::int64_t batch_stride) {
    return {first, batch_stride};
}

}  // namespace tropical
