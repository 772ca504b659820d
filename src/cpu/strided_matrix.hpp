#pragma once
// One matrix of an operand, in host memory, addressed by (row, column) through its strides: what the
// CPU's backward passes (cpu/host_backward.cpp, cpu/host_softmax_backward.cpp) read and write.
#include <cstdint>

#include "cpu/host.hpp"

namespace tropical::cpu {

template <class T>
struct StridedMatrix {
    T* data;
    std::int64_t rs, cs;
    T& operator()(std::int64_t i, std::int64_t j) const { return data[i * rs + j * cs]; }
};

// Matrix `product` of the batch of operand r (null data stays null: an operand the pass does not read).
template <class T>
StridedMatrix<T> strided_matrix(const detail::OperandRef& r, std::int64_t product) {
    auto* base = static_cast<T*>(const_cast<void*>(r.data));
    if (base) base += product * r.batch_stride;
    return {base, row_stride(r), col_stride(r)};
}

}  // namespace tropical::cpu
