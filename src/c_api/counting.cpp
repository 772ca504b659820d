// The C ABI's counting products (tropical_counting_gemm, tropical_host_counting_gemm): six
// descriptors checked and converted, then the device path (gemm/run.cpp) or the CPU one
// (cpu/host_counting.cpp).
#include <tropical/c_api.h>
#include <tropical/counting.hpp>
#include "c_api/guard.hpp"
#include "c_api/request.hpp"
#include "cpu/host.hpp"
#include "gemm/run.hpp"

namespace tropical::detail {
namespace {

// The six descriptors, none NULL, as a counting request (semiring and descriptors as the other
// products take them: c_api/request.cpp).
Request counting_from_c(std::int32_t dtype, const tropical_matrix* const (&m)[6], std::int64_t batch,
                        const tropical_options* options) {
    const char* names[] = {"a_values", "a_counts", "b_values", "b_counts", "c_values", "c_counts"};
    for (int i = 0; i < 6; ++i)
        if (!m[i]) throw InvalidArgument(std::string("the matrix descriptor ") + names[i] + " is NULL");
    // The values through the common conversion (layouts, options), the counts beside them.
    Request values =
        request_from_c(Operation::Gemm, TROPICAL_COUNTING, dtype, m[0], m[2], m[4], nullptr, nullptr, batch, options);
    const Request counts = request_from_c(Operation::Gemm, TROPICAL_COUNTING, TROPICAL_F64, m[1], m[3], m[5], nullptr,
                                          nullptr, batch, nullptr);
    Request q = counting_request(values.dtype, {values.a, counts.a}, {values.b, counts.b}, {values.c, counts.c}, batch,
                                 values.options.accumulate, values.options);
    return q;
}

}  // namespace
}  // namespace tropical::detail

using tropical::detail::raw;

extern "C" {

tropical_status tropical_counting_gemm(tropical_dtype t, const tropical_matrix* a_values,
                                       const tropical_matrix* a_counts, const tropical_matrix* b_values,
                                       const tropical_matrix* b_counts, const tropical_matrix* c_values,
                                       const tropical_matrix* c_counts, int64_t batch,
                                       const tropical_options* options) {
    return tropical::detail::guarded([&] {
        const tropical_matrix* const m[6] = {a_values, a_counts, b_values, b_counts, c_values, c_counts};
        tropical::detail::run(tropical::detail::counting_from_c(raw(t), m, batch, options));
    });
}

tropical_status tropical_host_counting_gemm(tropical_dtype t, const tropical_matrix* a_values,
                                            const tropical_matrix* a_counts, const tropical_matrix* b_values,
                                            const tropical_matrix* b_counts, const tropical_matrix* c_values,
                                            const tropical_matrix* c_counts, int64_t batch,
                                            const tropical_host_options* options) {
    return tropical::detail::guarded([&] {
        const tropical_matrix* const m[6] = {a_values, a_counts, b_values, b_counts, c_values, c_counts};
        tropical::detail::Request q = tropical::detail::counting_from_c(raw(t), m, batch, nullptr);
        q.options.accumulate = options && options->accumulate != 0;
        tropical::cpu::run(q, options ? options->threads : 0);
    });
}

}  // extern "C"
