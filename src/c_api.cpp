// The C ABI over detail::run: converts (src/c_request.cpp), calls, and turns exceptions into
// status codes.
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include <tropical/c_api.h>
#include <tropical/error.hpp>
#include <tropical/gemm.hpp>

#include "c_request.hpp"

namespace {

thread_local std::string g_last_error;

tropical_status fail(tropical_status status, const char* message) {
    g_last_error = message;
    return status;
}

// C enums arrive as whatever int the caller passed (C allows any, and so does ctypes). In C++ a
// value outside an enum's range (0..3 for tropical_semiring) must not even be read through the
// enum type, so the argument's bits are read as the int32 they are, then range-checked.
template <class CEnum>
std::int32_t raw(const CEnum& value) {
    static_assert(sizeof(CEnum) == sizeof(std::int32_t));
    std::int32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

template <class Body>
tropical_status guarded(Body body) {
    try {
        body();
        g_last_error.clear();
        return TROPICAL_SUCCESS;
    } catch (const tropical::Error& e) {
        return fail(static_cast<tropical_status>(e.status()), e.what());
    } catch (const std::bad_alloc&) {
        return fail(TROPICAL_OUT_OF_MEMORY, "out of host memory");
    } catch (const std::exception& e) {
        return fail(TROPICAL_INTERNAL_ERROR, e.what());
    } catch (...) {
        return fail(TROPICAL_INTERNAL_ERROR, "unknown exception");
    }
}

tropical_status run(tropical::detail::Operation op, std::int32_t semiring, std::int32_t dtype,
                    const tropical_matrix* a, const tropical_matrix* b, const tropical_matrix* c,
                    const tropical_matrix* argmax, const tropical_matrix* grad, int64_t batch,
                    const tropical_options* options, const char* required) {
    return guarded([&] {
        // `required` names the operands this operation cannot do without, in the order a b c argmax grad.
        const tropical_matrix* given[] = {a, b, c, argmax, grad};
        const char* names[] = {"a", "b", "c", "argmax", "grad"};
        for (int i = 0; i < 5; ++i)
            if (required[i] == '1' && given[i] == nullptr)
                throw tropical::InvalidArgument(std::string("the matrix descriptor ") + names[i] + " is NULL");
        tropical::detail::run(tropical::detail::request_from_c(op, semiring, dtype, a, b, c, argmax, grad, batch, options));
    });
}

}  // namespace

extern "C" {

tropical_status tropical_gemm(tropical_semiring s, tropical_dtype t, const tropical_matrix* a, const tropical_matrix* b,
                              const tropical_matrix* c, int64_t batch, const tropical_options* options) {
    return run(tropical::detail::Operation::Gemm, raw(s), raw(t), a, b, c, nullptr, nullptr, batch, options, "11100");
}

tropical_status tropical_gemm_argmax(tropical_semiring s, tropical_dtype t, const tropical_matrix* a,
                                     const tropical_matrix* b, const tropical_matrix* c, const tropical_matrix* argmax,
                                     int64_t batch, const tropical_options* options) {
    return run(tropical::detail::Operation::GemmArgmax, raw(s), raw(t), a, b, c, argmax, nullptr, batch, options,
               "11110");
}

tropical_status tropical_gemm_backward_a(tropical_semiring s, tropical_dtype t, const tropical_matrix* grad_c,
                                         const tropical_matrix* argmax, const tropical_matrix* b,
                                         const tropical_matrix* grad_a, int64_t batch, const tropical_options* options) {
    return run(tropical::detail::Operation::BackwardA, raw(s), raw(t), nullptr, b, grad_c, argmax, grad_a, batch,
               options, raw(s) == TROPICAL_MAXMUL ? "01111" : "00111");
}

tropical_status tropical_gemm_backward_b(tropical_semiring s, tropical_dtype t, const tropical_matrix* grad_c,
                                         const tropical_matrix* argmax, const tropical_matrix* a,
                                         const tropical_matrix* grad_b, int64_t batch, const tropical_options* options) {
    return run(tropical::detail::Operation::BackwardB, raw(s), raw(t), a, nullptr, grad_c, argmax, grad_b, batch,
               options, raw(s) == TROPICAL_MAXMUL ? "10111" : "00111");
}

const char* tropical_last_error_message(void) { return g_last_error.c_str(); }

const char* tropical_status_string(tropical_status status) {
    const std::int32_t value = raw(status);
    if (value < TROPICAL_SUCCESS || value > TROPICAL_INTERNAL_ERROR) return "unknown status";
    return tropical::to_string(static_cast<tropical::Status>(value));
}

}  // extern "C"
