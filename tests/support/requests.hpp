#pragma once
// Requests for the validation tests (tests/validation_*_test.cpp): operands at fake device addresses,
// 1 TiB apart, which validation never dereferences, and the messages validation throws.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include <tropical/error.hpp>
#include <tropical/gemm.hpp>
#include "request/validate.hpp"

namespace tropical::testing {

using namespace tropical::detail;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// Fake device addresses, 1 TiB apart, so that no two operands overlap unless a test says so.
inline const void* address(int slot, std::int64_t byte_offset = 0) {
    return reinterpret_cast<const void*>((std::uintptr_t{1} << 40) * static_cast<std::uintptr_t>(slot + 1) +
                                         static_cast<std::uintptr_t>(byte_offset));
}
enum Slot { SlotA, SlotB, SlotC, SlotArgmax, SlotGrad };

// A tightly packed rows x cols operand in `layout` at `slot`.
inline OperandRef matrix(int slot, std::int64_t rows, std::int64_t cols, Layout layout = Layout::RowMajor) {
    return {address(slot), rows, cols, layout == Layout::RowMajor ? cols : rows, layout, 0};
}

// C (M x N) = A (M x K) (x) B (K x N), f32, all row-major unless changed.
inline Request gemm_request(std::int64_t m, std::int64_t n, std::int64_t k, Layout la = Layout::RowMajor,
                            Layout lb = Layout::RowMajor, Layout lc = Layout::RowMajor) {
    Request q;
    q.operation = Operation::Gemm;
    q.semiring = Semiring::MaxPlus;
    q.dtype = DType::F32;
    q.a = matrix(SlotA, m, k, la);
    q.b = matrix(SlotB, k, n, lb);
    q.c = matrix(SlotC, m, n, lc);
    return q;
}

inline Request argmax_request(std::int64_t m, std::int64_t n, std::int64_t k, Layout la = Layout::RowMajor,
                              Layout lb = Layout::RowMajor, Layout lc = Layout::RowMajor,
                              Layout li = Layout::RowMajor) {
    Request q = gemm_request(m, n, k, la, lb, lc);
    q.operation = Operation::GemmArgmax;
    q.argmax = matrix(SlotArgmax, m, n, li);
    return q;
}

// The gradient of A (M x K) or B (K x N) from grad_C (M x N), argmax (M x N) and, for MaxMul, the other
// operand (B, K x N, or A, M x K).
inline Request backward_request(Operation op, std::int64_t m, std::int64_t n, std::int64_t k, Semiring s) {
    const bool of_a = op == Operation::BackwardA;
    Request q;
    q.operation = op;
    q.semiring = s;
    q.dtype = DType::F32;
    q.c = matrix(SlotC, m, n);
    q.argmax = matrix(SlotArgmax, m, n);
    q.grad = of_a ? matrix(SlotGrad, m, k) : matrix(SlotGrad, k, n);
    if (s == Semiring::MaxMul) (of_a ? q.b : q.a) = of_a ? matrix(SlotB, k, n) : matrix(SlotA, m, k);
    return q;
}

inline Request backward_a_request(std::int64_t m, std::int64_t n, std::int64_t k, Semiring s = Semiring::MaxPlus) {
    return backward_request(Operation::BackwardA, m, n, k, s);
}

inline Request backward_b_request(std::int64_t m, std::int64_t n, std::int64_t k, Semiring s = Semiring::MaxPlus) {
    return backward_request(Operation::BackwardB, m, n, k, s);
}

// The message of the InvalidArgument that validating q throws ("" and a failure if none).
inline std::string invalid_message(const Request& q) {
    try {
        validate(q);
        ADD_FAILURE() << "expected InvalidArgument, but the request was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.status(), Status::InvalidArgument);
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected InvalidArgument, got another exception: " << e.what();
    }
    return "";
}

inline std::string unsupported_message(const Request& q) {
    try {
        validate(q);
        ADD_FAILURE() << "expected Unsupported, but the request was accepted";
    } catch (const Unsupported& e) {
        EXPECT_EQ(e.status(), Status::Unsupported);
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected Unsupported, got another exception: " << e.what();
    }
    return "";
}

}  // namespace tropical::testing
