// The C ABI's products and backward passes: arguments converted (c_api/request.cpp), run, and
// exceptions turned into status codes (c_api/guard.hpp).
#include <string>

#include "c_api/guard.hpp"
#include "c_api/request.hpp"
#include "reference/reference.hpp"
#include <tropical/c_api.h>

namespace tropical::detail {
namespace {

thread_local std::string g_last_error;

// `required` names the operands an operation cannot do without, in the order a b c argmax grad.
tropical_status call(Operation op, std::int32_t semiring, std::int32_t dtype, const tropical_matrix* a,
                     const tropical_matrix* b, const tropical_matrix* c, const tropical_matrix* argmax,
                     const tropical_matrix* grad, int64_t batch, const tropical_options* options, const char* required) {
    return guarded([&] {
        const tropical_matrix* given[] = {a, b, c, argmax, grad};
        const char* names[] = {"a", "b", "c", "argmax", "grad"};
        for (int i = 0; i < 5; ++i)
            if (required[i] == '1' && given[i] == nullptr)
                throw InvalidArgument(std::string("the matrix descriptor ") + names[i] + " is NULL");
        run(request_from_c(op, semiring, dtype, a, b, c, argmax, grad, batch, options));
    });
}

// A backward pass: A and B are required where the semiring's gradient reads them (a semiring out
// of range reads neither here; validation names it).
tropical_status call_backward(bool of_a, std::int32_t semiring, std::int32_t dtype, const tropical_matrix* a,
                              const tropical_matrix* b, const tropical_matrix* grad_c, const tropical_matrix* argmax,
                              const tropical_matrix* grad, int64_t batch, const tropical_options* options) {
    const bool known = semiring >= 0 && semiring < static_cast<std::int32_t>(std::size(all_semirings));
    const auto s = static_cast<Semiring>(known ? semiring : 0);
    const char required[] = {known && reference::backward_reads_a(s, of_a) ? '1' : '0',
                             known && reference::backward_reads_b(s, of_a) ? '1' : '0', '1', '1', '1', '\0'};
    return call(of_a ? Operation::BackwardA : Operation::BackwardB, semiring, dtype, a, b, grad_c, argmax, grad, batch,
                options, required);
}

}  // namespace

void set_last_error(const char* message) noexcept {
    try {
        g_last_error = message;
    } catch (...) {
        g_last_error.clear();  // no memory for the message: the status alone says it
    }
}

void require_pointer(const void* pointer, const char* what) {
    if (!pointer) throw InvalidArgument(std::string(what) + " is NULL");
}

}  // namespace tropical::detail

using tropical::detail::Operation;
using tropical::detail::raw;

extern "C" {

tropical_status tropical_gemm(tropical_semiring s, tropical_dtype t, const tropical_matrix* a, const tropical_matrix* b,
                              const tropical_matrix* c, int64_t batch, const tropical_options* options) {
    return tropical::detail::call(Operation::Gemm, raw(s), raw(t), a, b, c, nullptr, nullptr, batch, options, "11100");
}

tropical_status tropical_gemm_argmax(tropical_semiring s, tropical_dtype t, const tropical_matrix* a,
                                     const tropical_matrix* b, const tropical_matrix* c, const tropical_matrix* argmax,
                                     int64_t batch, const tropical_options* options) {
    return tropical::detail::call(Operation::GemmArgmax, raw(s), raw(t), a, b, c, argmax, nullptr, batch, options,
                                  "11110");
}

tropical_status tropical_gemm_backward_a(tropical_semiring s, tropical_dtype t, const tropical_matrix* grad_c,
                                         const tropical_matrix* argmax, const tropical_matrix* a,
                                         const tropical_matrix* b, const tropical_matrix* grad_a, int64_t batch,
                                         const tropical_options* options) {
    return tropical::detail::call_backward(true, raw(s), raw(t), a, b, grad_c, argmax, grad_a, batch, options);
}

tropical_status tropical_gemm_backward_b(tropical_semiring s, tropical_dtype t, const tropical_matrix* grad_c,
                                         const tropical_matrix* argmax, const tropical_matrix* a,
                                         const tropical_matrix* b, const tropical_matrix* grad_b, int64_t batch,
                                         const tropical_options* options) {
    return tropical::detail::call_backward(false, raw(s), raw(t), a, b, grad_c, argmax, grad_b, batch, options);
}

const char* tropical_last_error_message(void) { return tropical::detail::g_last_error.c_str(); }

const char* tropical_status_string(tropical_status status) {
    if (!tropical_status_name(status)) return "unknown status";
    return tropical::to_string(static_cast<tropical::Status>(raw(status)));
}

const char* tropical_semiring_name(tropical_semiring semiring) {
    const std::int32_t value = raw(semiring);
    if (value < 0 || value >= static_cast<std::int32_t>(std::size(tropical::all_semirings))) return nullptr;
    return tropical::to_string(static_cast<tropical::Semiring>(value)).data();  // a literal: NUL-terminated
}

const char* tropical_status_name(tropical_status status) {
    switch (raw(status)) {
#define TROPICAL_STATUS_NAME(c_suffix, name, value, words) \
    case value: return #name;
        TROPICAL_STATUS_LIST(TROPICAL_STATUS_NAME)
#undef TROPICAL_STATUS_NAME
    }
    return nullptr;
}

}  // extern "C"
