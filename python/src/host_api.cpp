// The CPU path of the Python package's ops: the CPU reference (src/reference/reference.hpp) over
// strided host memory, batched, as a few C functions that Python calls through ctypes, linked with
// the library into libtropical_gemm_python.so (python/CMakeLists.txt). Everything else the package
// does goes through the library's public C ABI (tropical/c_api.h). These report like it: a status,
// and the message in tropical_last_error_message().
#include <cstdint>
#include <string>
#include <type_traits>

#include "c_api/guard.hpp"
#include "c_api/request.hpp"
#include "reference/reference.hpp"
#include <tropical/c_api.h>
#include <tropical/error.hpp>

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

// Calls f(tag) with a value of the element type that `dtype` names.
template <class F>
void with_dtype(tropical::DType dtype, F&& f) {
    switch (dtype) {
    case tropical::DType::F32: f(float{}); return;
    case tropical::DType::F64: f(double{}); return;
    case tropical::DType::I32: f(std::int32_t{}); return;
    case tropical::DType::I64: f(std::int64_t{}); return;
    }
}

// grad_A (of_a) or grad_B += the route of grad_C through argmax, for `batch` products. A and B are
// read where the semiring's gradient needs them (the reference says which) and may be NULL
// elsewhere. A gradient batch stride of 0 sums the batch into one matrix. The caller zeroes the
// gradient first for an overwrite.
int cpu_backward(bool of_a, std::int32_t semiring, std::int32_t dtype, const tgh_view* grad_c, const tgh_view* argmax,
                 const tgh_view* a, const tgh_view* b, const tgh_view* grad, std::int64_t batch) {
    return guarded([&] {
        const auto s = tropical::detail::semiring_from_c(semiring);
        const auto t = tropical::detail::dtype_from_c(dtype);
        require(tropical::is_floating(t), "backward is implemented for f32 and f64 only");
        require_view(grad_c, "grad_C"), require_view(argmax, "argmax"), require_view(grad, of_a ? "grad_A" : "grad_B");
        const bool reads_a = tropical::reference::backward_reads_a(s, of_a);
        const bool reads_b = tropical::reference::backward_reads_b(s, of_a);
        if (reads_a) require_view(a, "A");
        if (reads_b) require_view(b, "B");
        with_dtype(t, [&]<class T>(T) {
            if constexpr (std::is_floating_point_v<T>) {
                // An operand the semiring does not read: a stand-in of no elements, never read.
                const tgh_view none{nullptr, 0, 0, 0, 0, 0};
                const tgh_view* va = reads_a ? a : &none;
                const tgh_view* vb = reads_b ? b : &none;
                for (std::int64_t i = 0; i < batch; ++i)
                    tropical::reference::backward<T>(s, of_a, at<const T>(grad_c, i), at<const std::int32_t>(argmax, i),
                                                     at<const T>(va, i), at<const T>(vb, i), at<T>(grad, i));
            }
        });
    });
}

}  // namespace

// C = A (x) B (and the argmax, when `argmax` is not NULL) for `batch` products, on the CPU.
TGH_EXPORT int tgh_cpu_gemm(std::int32_t semiring, std::int32_t dtype, const tgh_view* a, const tgh_view* b,
                            const tgh_view* c, const tgh_view* argmax, std::int64_t batch) {
    return guarded([&] {
        const auto s = tropical::detail::semiring_from_c(semiring);
        const auto t = tropical::detail::dtype_from_c(dtype);
        require_view(a, "A"), require_view(b, "B"), require_view(c, "C");
        if (argmax) require_view(argmax, "argmax");
        require(batch >= 0, "the batch count must be 0 or more");
        with_dtype(t, [&]<class T>(T) {
            for (std::int64_t i = 0; i < batch; ++i) {
                if (argmax)
                    tropical::reference::gemm_argmax<T>(s, at<const T>(a, i), at<const T>(b, i), at<T>(c, i),
                                                        at<std::int32_t>(argmax, i));
                else
                    tropical::reference::gemm<T>(s, at<const T>(a, i), at<const T>(b, i), at<T>(c, i));
            }
        });
    });
}

TGH_EXPORT int tgh_cpu_backward_a(std::int32_t semiring, std::int32_t dtype, const tgh_view* grad_c,
                                  const tgh_view* argmax, const tgh_view* a, const tgh_view* b, const tgh_view* grad_a,
                                  std::int64_t batch) {
    return cpu_backward(true, semiring, dtype, grad_c, argmax, a, b, grad_a, batch);
}

TGH_EXPORT int tgh_cpu_backward_b(std::int32_t semiring, std::int32_t dtype, const tgh_view* grad_c,
                                  const tgh_view* argmax, const tgh_view* a, const tgh_view* b, const tgh_view* grad_b,
                                  std::int64_t batch) {
    return cpu_backward(false, semiring, dtype, grad_c, argmax, a, b, grad_b, batch);
}
