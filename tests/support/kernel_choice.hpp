#pragma once
// Requests for the kernel-choice tests (tests/kernel_choice_*test.cpp): a product's shape, type and
// layout of C as a Request with no operands, and the kernel src/gemm/plan.cpp chooses for it on an
// H200 (its multiprocessors and the shared memory a block may opt in to).
#include <cstdint>
#include <string>

#include "catalogue/catalogue.hpp"
#include "gemm/plan.hpp"

namespace tropical::testing {

using namespace tropical::detail;

inline constexpr std::int64_t kH200 = 132;          // multiprocessors
inline constexpr std::size_t kH200Shared = 232448;  // shared memory per block, opted in

struct Product {
    std::int64_t m, n, k, batch = 1;
    DType dtype = DType::F32;
    Semiring semiring = Semiring::MaxPlus;
    bool accumulate = false;
    std::int64_t c_gap = 0;  // elements between C's matrices in a batch
    Layout c_layout = Layout::RowMajor;
};

inline Request request_of(const Product& p, Operation operation = Operation::Gemm) {
    Request q;
    q.operation = operation;
    q.dtype = p.dtype;
    q.semiring = p.semiring;
    q.a = {nullptr, p.m, p.k, p.k, Layout::RowMajor, p.batch > 1 ? p.m * p.k : 0};
    q.b = {nullptr, p.k, p.n, p.n, Layout::RowMajor, p.batch > 1 ? p.k * p.n : 0};
    const std::int64_t ld = p.c_layout == Layout::RowMajor ? p.n : p.m;
    q.c = {nullptr, p.m, p.n, ld, p.c_layout, p.batch > 1 ? p.m * p.n + p.c_gap : 0};
    q.batch = p.batch;
    q.options.accumulate = p.accumulate;
    return q;
}

inline Choice choose(const Product& p, std::int64_t multiprocessors = kH200, Operation operation = Operation::Gemm) {
    return choose_kernel(request_of(p, operation), Shape{p.m, p.n, p.k}, {multiprocessors, kH200Shared});
}

inline std::string name_of(const Choice& c) { return std::string(c.kernel->name); }

}  // namespace tropical::testing
