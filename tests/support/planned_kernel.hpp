#pragma once
// The kernel the library plans for a product on device 0, for GPU tests that must reach one variant
// (split-K, an argmax variant) and would otherwise pass on another path.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include <tropical/context.hpp>
#include <tropical/kernels.hpp>
#include "gemm/plan.hpp"
#include "support/gemm_test_util.hpp"

namespace tropical::testing {

// Row-major A, B and C (and argmax) whose matrices follow each other, as the tests make them.
template <class S, class T>
detail::Choice planned_kernel(detail::Operation operation, const Shape& s, std::int64_t batch = 1,
                              bool accumulate = false) {
    detail::Request q;
    q.operation = operation;
    q.dtype = dtype_of<T>();
    q.semiring = S::value;
    q.a = {nullptr, s.m, s.k, s.k, Layout::RowMajor, s.m * s.k};
    q.b = {nullptr, s.k, s.n, s.n, Layout::RowMajor, s.k * s.n};
    q.c = {nullptr, s.m, s.n, s.n, Layout::RowMajor, s.m * s.n};
    if (operation == detail::Operation::GemmArgmax) q.argmax = q.c;
    q.batch = batch;
    q.options.accumulate = accumulate;
    const CudaContext& context = CudaContext::for_device(0);
    return detail::choose_kernel(q, {s.m, s.n, s.k},
                                 {context.multiprocessor_count(), context.shared_memory_per_block_optin()});
}

// A batch of `count` products of one shape, as the tests of one variant plan and run them.
struct BatchProblem {
    Shape shape;
    std::int64_t count = 1;
};

inline std::string describe(const BatchProblem& p) { return describe(p.shape) + " x " + std::to_string(p.count); }

inline std::int64_t multiprocessors() { return CudaContext::for_device(0).multiprocessor_count(); }

// Fails the test unless the library plans `variant` for p's products (row-major, one after another).
template <class S, class T>
void expect_planned(detail::Operation operation, const BatchProblem& p, KernelVariant variant) {
    ASSERT_EQ((planned_kernel<S, T>(operation, p.shape, p.count).kernel->variant), variant)
        << describe(p) << (operation == detail::Operation::GemmArgmax ? " with argmax" : "");
}

}  // namespace tropical::testing
