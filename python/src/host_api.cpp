// The Python package's NumPy reference (tropical_gemm.reference): the plain CPU reference
// (src/reference/reference.hpp) over strided host memory of any strides, batched, as one C function
// that Python calls through ctypes, linked with the library into libtropical_gemm_python.so
// (python/CMakeLists.txt). It stays the plain oracle on purpose: the ops on CPU tensors, like
// everything else the package does, go through the library's public C ABI (tropical/c_api.h's
// tropical_host_*). It reports like the C ABI: a status, and the message in
// tropical_last_error_message().
#include <cstdint>
#include <string>

#include <tropical/c_api.h>
#include <tropical/error.hpp>
#include "c_api/guard.hpp"
#include "c_api/request.hpp"
#include "reference/reference.hpp"

#define TGH_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using tropical::detail::guarded;

// A strided matrix (or batch of them) in host memory; strides in elements, any of them may be 0.
struct tgh_view {
    void* data;
    std::int64_t rows, cols, row_stride, col_stride, batch_stride;
};

void require(bool ok, const std::string& what) {
    if (!ok) throw tropical::InvalidArgument(what);
}

void require_view(const tgh_view* v, const char* name) {
    require(v != nullptr, std::string("the view ") + name + " is NULL");
    require(v->rows >= 0 && v->cols >= 0, std::string(name) + " has a negative size");
    require(v->data != nullptr || v->rows == 0 || v->cols == 0, std::string(name) + " is a null pointer");
}

template <class T>
tropical::reference::HostView<T> at(const tgh_view* v, std::int64_t b) {
    auto* base = static_cast<T*>(v->data);
    // Offsets only when the view holds elements: an empty view may carry a null pointer.
    if (v->rows > 0 && v->cols > 0) base += b * v->batch_stride;
    return {base, v->rows, v->cols, v->row_stride, v->col_stride};
}

}  // namespace

// C = A (x) B (and the argmax, when `argmax` is not NULL) for `batch` products, by the reference.
TGH_EXPORT int tgh_cpu_gemm(std::int32_t semiring, std::int32_t dtype, const tgh_view* a, const tgh_view* b,
                            const tgh_view* c, const tgh_view* argmax, std::int64_t batch) {
    return guarded([&] {
        const auto s = tropical::detail::semiring_from_c(semiring);
        const auto t = tropical::detail::dtype_from_c(dtype);
        if (!tropical::supports(s, t)) {
            std::string takes;  // the table's types for this semiring
            for (tropical::DType d : tropical::all_dtypes)
                if (tropical::supports(s, d))
                    takes += (takes.empty() ? "" : ", ") + std::string(tropical::to_string(d));
            throw tropical::Unsupported(std::string("semiring ") + std::string(tropical::to_string(s)) +
                                        " does not take " + std::string(tropical::to_string(t)) +
                                        " elements: it takes " + takes);
        }
        if (argmax && !tropical::info(s).selects())
            throw tropical::Unsupported(std::string("semiring ") + std::string(tropical::to_string(s)) +
                                        " has no argmax: its (+) combines every term, so no single k attains a "
                                        "result; call it without one");
        require_view(a, "A"), require_view(b, "B"), require_view(c, "C");
        if (argmax) require_view(argmax, "argmax");
        require(batch >= 0, "the batch count must be 0 or more");
        tropical::with_element_type(t, [&]<class T>(T) {
            for (std::int64_t i = 0; i < batch; ++i) {
                if (argmax)
                    tropical::reference::gemm_argmax<T>(s, at<const T>(a, i), at<const T>(b, i), at<T>(c, i),
                                                        at<std::int32_t>(argmax, i));
                else tropical::reference::gemm<T>(s, at<const T>(a, i), at<const T>(b, i), at<T>(c, i));
            }
        });
    });
}
