// The C ABI's products and backward passes in host memory (tropical_host_*): the same conversion of
// arguments as the device functions (c_api/request.cpp), then the CPU path (cpu/host.hpp).
#include "cpu/host.hpp"
#include <tropical/c_api.h>
#include "c_api/guard.hpp"
#include "c_api/request.hpp"
#include "cpu/targets.hpp"

namespace {

using tropical::detail::Operation;
using tropical::detail::raw;

// A request converted without options, run on the CPU with the host options (NULL: the defaults).
void run_host(tropical::detail::Request q, const tropical_host_options* options) {
    q.options.accumulate = options && options->accumulate != 0;
    tropical::cpu::run(q, options ? options->threads : 0);
}

tropical_status call_host(Operation op, std::int32_t semiring, std::int32_t dtype, const tropical_matrix* a,
                          const tropical_matrix* b, const tropical_matrix* c, const tropical_matrix* argmax,
                          const tropical_matrix* grad, int64_t batch, const tropical_host_options* options) {
    return tropical::detail::guarded([&] {
        tropical::detail::require_descriptors(op, semiring, a, b, c, argmax, grad);
        run_host(tropical::detail::request_from_c(op, semiring, dtype, a, b, c, argmax, grad, batch, nullptr), options);
    });
}

}  // namespace

extern "C" {

tropical_status tropical_host_gemm(tropical_semiring s, tropical_dtype t, const tropical_matrix* a,
                                   const tropical_matrix* b, const tropical_matrix* c, int64_t batch,
                                   const tropical_host_options* options) {
    return call_host(Operation::Gemm, raw(s), raw(t), a, b, c, nullptr, nullptr, batch, options);
}

tropical_status tropical_host_gemm_argmax(tropical_semiring s, tropical_dtype t, const tropical_matrix* a,
                                          const tropical_matrix* b, const tropical_matrix* c,
                                          const tropical_matrix* argmax, int64_t batch,
                                          const tropical_host_options* options) {
    return call_host(Operation::GemmArgmax, raw(s), raw(t), a, b, c, argmax, nullptr, batch, options);
}

tropical_status tropical_host_gemm_backward_a(tropical_semiring s, tropical_dtype t, const tropical_matrix* grad_c,
                                              const tropical_matrix* argmax, const tropical_matrix* a,
                                              const tropical_matrix* b, const tropical_matrix* grad_a, int64_t batch,
                                              const tropical_host_options* options) {
    return call_host(Operation::BackwardA, raw(s), raw(t), a, b, grad_c, argmax, grad_a, batch, options);
}

tropical_status tropical_host_gemm_backward_b(tropical_semiring s, tropical_dtype t, const tropical_matrix* grad_c,
                                              const tropical_matrix* argmax, const tropical_matrix* a,
                                              const tropical_matrix* b, const tropical_matrix* grad_b, int64_t batch,
                                              const tropical_host_options* options) {
    return call_host(Operation::BackwardB, raw(s), raw(t), a, b, grad_c, argmax, grad_b, batch, options);
}

tropical_status tropical_host_gemm_packed(tropical_semiring s, const tropical_matrix* a, const tropical_matrix* b,
                                          int64_t k, const tropical_matrix* c, int64_t batch,
                                          const tropical_host_options* options) {
    return tropical::detail::guarded([&] {
        run_host(tropical::detail::packed_request_from_c(Operation::Gemm, raw(s), a, b, k, c, nullptr, batch, nullptr),
                 options);
    });
}

tropical_status tropical_host_gemm_packed_argmax(tropical_semiring s, const tropical_matrix* a,
                                                 const tropical_matrix* b, int64_t k, const tropical_matrix* c,
                                                 const tropical_matrix* argmax, int64_t batch,
                                                 const tropical_host_options* options) {
    return tropical::detail::guarded([&] {
        run_host(
            tropical::detail::packed_request_from_c(Operation::GemmArgmax, raw(s), a, b, k, c, argmax, batch, nullptr),
            options);
    });
}

tropical_status tropical_host_pack_bits(const tropical_matrix* bytes, tropical_pack as, const tropical_matrix* words,
                                        int64_t batch, const tropical_host_options* options) {
    return tropical::detail::guarded(
        [&] { run_host(tropical::detail::pack_request_from_c(bytes, raw(as), words, batch, nullptr), options); });
}

tropical_status tropical_host_backtrack(const tropical_matrix* back, int64_t steps, const tropical_matrix* last,
                                        const tropical_matrix* path, const tropical_host_options* options) {
    return tropical::detail::guarded(
        [&] { run_host(tropical::detail::backtrack_request_from_c(back, steps, last, path, nullptr), options); });
}

const char* tropical_host_simd_target(void) { return tropical::cpu::target_name(); }

}  // extern "C"
