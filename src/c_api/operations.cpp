// The C ABI's products and backward passes: arguments converted (c_api/request.cpp), run, and
// exceptions turned into status codes (c_api/guard.hpp).
#include <string>

#include <tropical/c_api.h>
#include "c_api/guard.hpp"
#include "c_api/request.hpp"
#include "gemm/run.hpp"

namespace tropical::detail {
namespace {

thread_local std::string g_last_error;

tropical_status call(Operation op, std::int32_t semiring, std::int32_t dtype, const tropical_matrix* a,
                     const tropical_matrix* b, const tropical_matrix* c, const tropical_matrix* argmax,
                     const tropical_matrix* grad, int64_t batch, const tropical_options* options) {
    return guarded([&] {
        require_descriptors(op, semiring, a, b, c, argmax, grad);
        run(request_from_c(op, semiring, dtype, a, b, c, argmax, grad, batch, options));
    });
}

// The status's C++ name, or null for a value outside the list (status.h).
const char* status_name(std::int32_t status) {
    switch (status) {
#define TROPICAL_STATUS_NAME(c_suffix, name, value, words) \
    case value: return #name;
        TROPICAL_STATUS_LIST(TROPICAL_STATUS_NAME)
#undef TROPICAL_STATUS_NAME
    }
    return nullptr;
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
using tropical::detail::run;
using tropical::detail::status_name;

extern "C" {

tropical_status tropical_gemm(tropical_semiring s, tropical_dtype t, const tropical_matrix* a, const tropical_matrix* b,
                              const tropical_matrix* c, int64_t batch, const tropical_options* options) {
    return tropical::detail::call(Operation::Gemm, raw(s), raw(t), a, b, c, nullptr, nullptr, batch, options);
}

tropical_status tropical_gemm_argmax(tropical_semiring s, tropical_dtype t, const tropical_matrix* a,
                                     const tropical_matrix* b, const tropical_matrix* c, const tropical_matrix* argmax,
                                     int64_t batch, const tropical_options* options) {
    return tropical::detail::call(Operation::GemmArgmax, raw(s), raw(t), a, b, c, argmax, nullptr, batch, options);
}

tropical_status tropical_gemm_backward_a(tropical_semiring s, tropical_dtype t, const tropical_matrix* grad_c,
                                         const tropical_matrix* argmax, const tropical_matrix* a,
                                         const tropical_matrix* b, const tropical_matrix* grad_a, int64_t batch,
                                         const tropical_options* options) {
    return tropical::detail::call(Operation::BackwardA, raw(s), raw(t), a, b, grad_c, argmax, grad_a, batch, options);
}

tropical_status tropical_gemm_backward_b(tropical_semiring s, tropical_dtype t, const tropical_matrix* grad_c,
                                         const tropical_matrix* argmax, const tropical_matrix* a,
                                         const tropical_matrix* b, const tropical_matrix* grad_b, int64_t batch,
                                         const tropical_options* options) {
    return tropical::detail::call(Operation::BackwardB, raw(s), raw(t), a, b, grad_c, argmax, grad_b, batch, options);
}

tropical_status tropical_gemm_packed(tropical_semiring s, const tropical_matrix* a, const tropical_matrix* b, int64_t k,
                                     const tropical_matrix* c, int64_t batch, const tropical_options* options) {
    return tropical::detail::guarded([&] {
        run(tropical::detail::packed_request_from_c(Operation::Gemm, raw(s), a, b, k, c, nullptr, batch, options));
    });
}

tropical_status tropical_gemm_packed_argmax(tropical_semiring s, const tropical_matrix* a, const tropical_matrix* b,
                                            int64_t k, const tropical_matrix* c, const tropical_matrix* argmax,
                                            int64_t batch, const tropical_options* options) {
    return tropical::detail::guarded([&] {
        run(tropical::detail::packed_request_from_c(Operation::GemmArgmax, raw(s), a, b, k, c, argmax, batch, options));
    });
}

tropical_status tropical_pack_bits(const tropical_matrix* bytes, tropical_pack as, const tropical_matrix* words,
                                   int64_t batch, const tropical_options* options) {
    return tropical::detail::guarded(
        [&] { run(tropical::detail::pack_request_from_c(bytes, raw(as), words, batch, options)); });
}

tropical_status tropical_backtrack(const tropical_matrix* back, int64_t steps, const tropical_matrix* last,
                                   const tropical_matrix* path, const tropical_options* options) {
    return tropical::detail::guarded(
        [&] { run(tropical::detail::backtrack_request_from_c(back, steps, last, path, options)); });
}

const char* tropical_last_error_message(void) { return tropical::detail::g_last_error.c_str(); }

const char* tropical_status_string(tropical_status status) {
    // Read once as the int it is (raw): a status outside the list may not even be copied as one.
    const std::int32_t value = raw(status);
    if (!status_name(value)) return "unknown status";
    return tropical::to_string(static_cast<tropical::Status>(value));
}

const char* tropical_status_name(tropical_status status) { return status_name(raw(status)); }

}  // extern "C"
