// The C ABI's binary contractions (tropical_contract, tropical_host_contract, their _argmax forms
// and the counting ones): the C arguments range-checked and turned into tropical/contract.hpp's
// calls; exceptions become statuses.
#include <tropical/c_api.h>
#include <tropical/contract.hpp>
#include <tropical/error.hpp>
#include "c_api/guard.hpp"
#include "c_api/request.hpp"

namespace {

using tropical::detail::raw;
using tropical::detail::TensorRef;

TensorRef tensor_from_c(const tropical_tensor* t, const char* name) {
    tropical::detail::require_pointer(t, name);
    return {t->data, t->rank, t->sizes, t->strides, t->labels};
}

void refuse_accumulate(int32_t accumulate) {
    if (accumulate != 0)
        throw tropical::InvalidArgument("options.accumulate is not supported by a contraction: set it to 0");
}

tropical::GemmOptions gpu_options(const tropical_options* options) {
    if (options) refuse_accumulate(options->accumulate);
    return tropical::detail::options_from_c(options);
}

tropical::host::Options host_options(const tropical_host_options* options) {
    tropical::host::Options o;
    if (options) {
        refuse_accumulate(options->accumulate);
        o.threads = options->threads;
    }
    return o;
}

// `argmax` null: the form without argmax; else the argmax form, whose descriptor (*argmax) must be there.
tropical_status gpu_contract(tropical_semiring s, tropical_dtype t, const tropical_tensor* a, const tropical_tensor* b,
                             const tropical_tensor* c, const tropical_tensor* const* argmax,
                             const tropical_options* options) {
    return tropical::detail::guarded([&] {
        const TensorRef indices = argmax ? tensor_from_c(*argmax, "the tensor descriptor argmax") : TensorRef{};
        tropical::detail::contract(
            tropical::detail::semiring_from_c(raw(s)), tropical::detail::dtype_from_c(raw(t)),
            tensor_from_c(a, "the tensor descriptor a"), tensor_from_c(b, "the tensor descriptor b"),
            tensor_from_c(c, "the tensor descriptor c"), argmax ? &indices : nullptr, gpu_options(options));
    });
}

tropical_status host_contract(tropical_semiring s, tropical_dtype t, const tropical_tensor* a, const tropical_tensor* b,
                              const tropical_tensor* c, const tropical_tensor* const* argmax,
                              const tropical_host_options* options) {
    return tropical::detail::guarded([&] {
        const TensorRef indices = argmax ? tensor_from_c(*argmax, "the tensor descriptor argmax") : TensorRef{};
        tropical::detail::host_contract(
            tropical::detail::semiring_from_c(raw(s)), tropical::detail::dtype_from_c(raw(t)),
            tensor_from_c(a, "the tensor descriptor a"), tensor_from_c(b, "the tensor descriptor b"),
            tensor_from_c(c, "the tensor descriptor c"), argmax ? &indices : nullptr, host_options(options));
    });
}

// The six descriptors of a counting contraction, none NULL, as three (values, counts) pairs.
struct CountingRefs {
    tropical::detail::CountingTensorRef a, b, c;
};

CountingRefs counting_from_c(const tropical_tensor* const (&t)[6]) {
    const char* names[] = {"the tensor descriptor a_values", "the tensor descriptor a_counts",
                           "the tensor descriptor b_values", "the tensor descriptor b_counts",
                           "the tensor descriptor c_values", "the tensor descriptor c_counts"};
    TensorRef r[6];
    for (int i = 0; i < 6; ++i) r[i] = tensor_from_c(t[i], names[i]);
    return {{r[0], r[1]}, {r[2], r[3]}, {r[4], r[5]}};
}

}  // namespace

extern "C" {

tropical_status tropical_contract(tropical_semiring s, tropical_dtype t, const tropical_tensor* a,
                                  const tropical_tensor* b, const tropical_tensor* c, const tropical_options* options) {
    return gpu_contract(s, t, a, b, c, nullptr, options);
}

tropical_status tropical_host_contract(tropical_semiring s, tropical_dtype t, const tropical_tensor* a,
                                       const tropical_tensor* b, const tropical_tensor* c,
                                       const tropical_host_options* options) {
    return host_contract(s, t, a, b, c, nullptr, options);
}

tropical_status tropical_contract_argmax(tropical_semiring s, tropical_dtype t, const tropical_tensor* a,
                                         const tropical_tensor* b, const tropical_tensor* c,
                                         const tropical_tensor* argmax, const tropical_options* options) {
    return gpu_contract(s, t, a, b, c, &argmax, options);
}

tropical_status tropical_host_contract_argmax(tropical_semiring s, tropical_dtype t, const tropical_tensor* a,
                                              const tropical_tensor* b, const tropical_tensor* c,
                                              const tropical_tensor* argmax, const tropical_host_options* options) {
    return host_contract(s, t, a, b, c, &argmax, options);
}

tropical_status tropical_counting_contract(tropical_dtype value_dtype, const tropical_tensor* a_values,
                                           const tropical_tensor* a_counts, const tropical_tensor* b_values,
                                           const tropical_tensor* b_counts, const tropical_tensor* c_values,
                                           const tropical_tensor* c_counts, const tropical_options* options) {
    return tropical::detail::guarded([&] {
        const CountingRefs r = counting_from_c({a_values, a_counts, b_values, b_counts, c_values, c_counts});
        tropical::detail::counting_contract(tropical::detail::dtype_from_c(raw(value_dtype)), r.a, r.b, r.c,
                                            gpu_options(options));
    });
}

tropical_status tropical_host_counting_contract(tropical_dtype value_dtype, const tropical_tensor* a_values,
                                                const tropical_tensor* a_counts, const tropical_tensor* b_values,
                                                const tropical_tensor* b_counts, const tropical_tensor* c_values,
                                                const tropical_tensor* c_counts, const tropical_host_options* options) {
    return tropical::detail::guarded([&] {
        const CountingRefs r = counting_from_c({a_values, a_counts, b_values, b_counts, c_values, c_counts});
        tropical::detail::host_counting_contract(tropical::detail::dtype_from_c(raw(value_dtype)), r.a, r.b, r.c,
                                                 host_options(options));
    });
}

}  // extern "C"
