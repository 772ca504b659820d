// The builders of request/request.hpp: every Request the library runs is assembled here.
#include "request/request.hpp"

#include <fmt/format.h>

#include <tropical/error.hpp>

namespace tropical::detail {

Request product_request(Semiring semiring, DType dtype, const OperandRef& a, const OperandRef& b, const OperandRef& c,
                        const OperandRef* argmax, std::int64_t batch, const GemmOptions& options) {
    Request q;
    q.operation = argmax ? Operation::GemmArgmax : Operation::Gemm;
    q.semiring = semiring, q.dtype = dtype;
    q.a = a, q.b = b, q.c = c;
    if (argmax) q.argmax = *argmax;
    q.batch = batch;
    q.options = options;
    return q;
}

Request packed_product_request(Semiring semiring, const OperandRef& a, const OperandRef& b, std::int64_t k,
                               const OperandRef& c, const OperandRef* argmax, std::int64_t batch,
                               const GemmOptions& options) {
    if (k < 0) throw InvalidArgument(fmt::format("K is {}: the number of booleans packed along K is 0 or more", k));
    Request q = product_request(semiring, DType::U8, a, b, c, argmax, batch, options);
    q.packed_k = k;
    return q;
}

Request pack_request(const OperandRef& bytes, PackAs as, const OperandRef& words, std::int64_t batch,
                     const GemmOptions& options) {
    Request q;
    q.operation = Operation::PackBits;
    q.semiring = Semiring::OrAnd, q.dtype = DType::U8;
    q.a = bytes, q.c = words;
    q.pack = as;
    q.batch = batch;
    q.options = options;
    return q;
}

Request backward_request(Gradient of, Semiring semiring, DType dtype, const OperandRef& grad_c,
                         const OperandRef& argmax, const OperandRef& a, const OperandRef& b, const OperandRef& grad,
                         std::int64_t batch, const GemmOptions& options) {
    Request q;
    q.operation = of == Gradient::OfA ? Operation::BackwardA : Operation::BackwardB;
    q.semiring = semiring, q.dtype = dtype;
    q.c = grad_c, q.argmax = argmax, q.grad = grad;
    q.a = a, q.b = b;
    q.batch = batch;
    q.options = options;
    return q;
}

Request counting_request(DType dtype, const CountingOperands& a, const CountingOperands& b, const CountingOperands& c,
                         std::int64_t batch, bool accumulate, const GemmOptions& options) {
    Request q;
    q.operation = Operation::Gemm;
    q.semiring = Semiring::Counting, q.dtype = dtype;
    q.a = a.values, q.b = b.values, q.c = c.values;
    q.a_count = a.counts, q.b_count = b.counts, q.c_count = c.counts;
    q.with_counts = true;
    q.batch = batch;
    q.options = options;
    q.options.accumulate = accumulate;
    return q;
}

Request backtrack_request(const OperandRef& back, std::int64_t steps, const OperandRef& last, const OperandRef& path,
                          const GemmOptions& options) {
    Request q;
    q.operation = Operation::Backtrack;
    q.dtype = DType::I32;
    q.argmax = back, q.a = last, q.c = path;
    q.batch = steps;
    q.options = options;
    return q;
}

}  // namespace tropical::detail
