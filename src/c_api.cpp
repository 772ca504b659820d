// The C ABI over detail::run: converts, calls, and turns exceptions into status codes.
#include <exception>
#include <new>
#include <string>

#include <tropical/c_api.h>
#include <tropical/error.hpp>
#include <tropical/gemm.hpp>

namespace {

thread_local std::string g_last_error;

tropical_status fail(tropical_status status, const char* message) {
    g_last_error = message;
    return status;
}

tropical::detail::OperandRef operand(const tropical_matrix* m) {
    if (!m) return {};
    return {m->data, m->rows, m->cols, m->ld, static_cast<tropical::Layout>(m->layout), m->batch_stride};
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

tropical_status run(tropical::detail::Operation op, tropical_semiring semiring, tropical_dtype dtype,
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
        tropical::detail::Request q;
        q.operation = op;
        q.semiring = static_cast<tropical::Semiring>(semiring);
        q.dtype = static_cast<tropical::DType>(dtype);
        q.a = operand(a), q.b = operand(b), q.c = operand(c), q.argmax = operand(argmax), q.grad = operand(grad);
        q.batch = batch;
        if (options) {
            q.options.stream = static_cast<tropical::Stream>(options->stream);
            q.options.accumulate = options->accumulate != 0;
        }
        tropical::detail::run(q);
    });
}

}  // namespace

extern "C" {

tropical_status tropical_gemm(tropical_semiring s, tropical_dtype t, const tropical_matrix* a, const tropical_matrix* b,
                              const tropical_matrix* c, int64_t batch, const tropical_options* options) {
    return run(tropical::detail::Operation::Gemm, s, t, a, b, c, nullptr, nullptr, batch, options, "11100");
}

tropical_status tropical_gemm_argmax(tropical_semiring s, tropical_dtype t, const tropical_matrix* a,
                                     const tropical_matrix* b, const tropical_matrix* c, const tropical_matrix* argmax,
                                     int64_t batch, const tropical_options* options) {
    return run(tropical::detail::Operation::GemmArgmax, s, t, a, b, c, argmax, nullptr, batch, options, "11110");
}

tropical_status tropical_gemm_backward_a(tropical_semiring s, tropical_dtype t, const tropical_matrix* grad_c,
                                         const tropical_matrix* argmax, const tropical_matrix* b,
                                         const tropical_matrix* grad_a, int64_t batch, const tropical_options* options) {
    return run(tropical::detail::Operation::BackwardA, s, t, nullptr, b, grad_c, argmax, grad_a, batch, options,
               s == TROPICAL_MAXMUL ? "01111" : "00111");
}

tropical_status tropical_gemm_backward_b(tropical_semiring s, tropical_dtype t, const tropical_matrix* grad_c,
                                         const tropical_matrix* argmax, const tropical_matrix* a,
                                         const tropical_matrix* grad_b, int64_t batch, const tropical_options* options) {
    return run(tropical::detail::Operation::BackwardB, s, t, a, nullptr, grad_c, argmax, grad_b, batch, options,
               s == TROPICAL_MAXMUL ? "10111" : "00111");
}

const char* tropical_last_error_message(void) { return g_last_error.c_str(); }

const char* tropical_status_string(tropical_status status) {
    return tropical::to_string(static_cast<tropical::Status>(status));
}

}  // extern "C"
