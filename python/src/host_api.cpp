// The host-side helpers of the Python package, linked with the library into
// libtropical_gemm_python.so (python/CMakeLists.txt), as a small C ABI that Python calls through
// ctypes (no Python or PyTorch headers, so the build depends on neither's version). They offer
// what the library's own C ABI (tropical/c_api.h) does not:
//   - the CPU reference (src/reference/reference.hpp) over strided host memory, batched, for the
//     CPU path of the PyTorch ops;
//   - the kernel registry and cache warm-up (tropical/cache.hpp), for tropical_gemm.warm_up();
//   - tgh_gpu_run, the GPU path of the PyTorch ops: the library's own request, packed in one
//     buffer (one ctypes argument), for operands whose device the caller knows.
// Every function returns a tropical_status; on failure tgh_last_error() holds the calling thread's
// message.
#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <tropical/c_api.h>
#include <tropical/cache.hpp>
#include <tropical/error.hpp>
#include <tropical/gemm.hpp>
#include <tropical/kernels.hpp>

#include "c_request.hpp"
#include "reference/reference.hpp"

#define TGH_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

thread_local std::string g_last_error;

// A strided matrix (or batch of them) in host memory; strides in elements, any of them may be 0.
struct tgh_view {
    void* data;
    std::int64_t rows, cols, row_stride, col_stride, batch_stride;
};

template <class Body>
int guarded(Body body) {
    try {
        body();
        g_last_error.clear();
        return TROPICAL_SUCCESS;
    } catch (const tropical::Error& e) {
        g_last_error = e.what();
        return static_cast<int>(e.status());
    } catch (const std::invalid_argument& e) {
        g_last_error = e.what();
        return TROPICAL_INVALID_ARGUMENT;
    } catch (const std::bad_alloc&) {
        g_last_error = "out of host memory";
        return TROPICAL_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
        g_last_error = e.what();
        return TROPICAL_INTERNAL_ERROR;
    } catch (...) {
        g_last_error = "unknown exception";
        return TROPICAL_INTERNAL_ERROR;
    }
}

void require(bool ok, const std::string& what) {
    if (!ok) throw tropical::InvalidArgument(what);
}

tropical::Semiring semiring_of(std::int32_t s) {
    require(s >= 0 && s <= 2, "unknown semiring (" + std::to_string(s) + ")");
    return static_cast<tropical::Semiring>(s);
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
void with_dtype(std::int32_t dtype, F&& f) {
    switch (dtype) {
    case TROPICAL_F32: f(float{}); return;
    case TROPICAL_F64: f(double{}); return;
    case TROPICAL_I32: f(std::int32_t{}); return;
    case TROPICAL_I64: f(std::int64_t{}); return;
    default: throw tropical::InvalidArgument("unknown element type (" + std::to_string(dtype) + ")");
    }
}

// One GPU product or backward pass (tgh_gpu_run). The operands follow tropical/c_api.h, with an
// all-zero descriptor for one the operation does not use; `operation` is 0 gemm, 1 gemm with argmax,
// 2 backward for A, 3 backward for B (c is then grad_C and grad the gradient).
struct tgh_gpu_call {
    std::int32_t operation, semiring, dtype, device;
    tropical_matrix a, b, c, argmax, grad;
    std::int64_t batch;
    void* stream;
    std::int32_t accumulate, reserved;
};
static_assert(sizeof(tgh_gpu_call) == 280, "python/tropical_gemm/_native.py packs this layout");

void require_view(const tgh_view* v, const char* name) {
    require(v != nullptr, std::string("the view ") + name + " is NULL");
    require(v->rows >= 0 && v->cols >= 0, std::string(name) + " has a negative size");
    require(v->data != nullptr || v->rows == 0 || v->cols == 0, std::string(name) + " is a null pointer");
}

}  // namespace

// C = A (x) B (and the argmax, when `argmax` is not NULL) for `batch` products, on the CPU.
TGH_EXPORT int tgh_cpu_gemm(std::int32_t semiring, std::int32_t dtype, const tgh_view* a, const tgh_view* b,
                            const tgh_view* c, const tgh_view* argmax, std::int64_t batch) {
    return guarded([&] {
        const auto s = semiring_of(semiring);
        require_view(a, "A"), require_view(b, "B"), require_view(c, "C");
        if (argmax) require_view(argmax, "argmax");
        require(batch >= 0, "the batch count must be 0 or more");
        with_dtype(dtype, [&]<class T>(T) {
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

// grad_A += the route of grad_C through argmax (b is read for MaxMul only and may be NULL
// otherwise), for `batch` products. A grad_A batch stride of 0 sums the batch into one matrix.
// The caller zeroes grad_A first for an overwrite.
TGH_EXPORT int tgh_cpu_backward_a(std::int32_t semiring, std::int32_t dtype, const tgh_view* grad_c,
                                  const tgh_view* argmax, const tgh_view* b, const tgh_view* grad_a, std::int64_t batch) {
    return guarded([&] {
        const auto s = semiring_of(semiring);
        require(dtype == TROPICAL_F32 || dtype == TROPICAL_F64, "backward is implemented for f32 and f64 only");
        require_view(grad_c, "grad_C"), require_view(argmax, "argmax"), require_view(grad_a, "grad_A");
        if (s == tropical::Semiring::MaxMul) require_view(b, "B");
        with_dtype(dtype, [&]<class T>(T) {
            if constexpr (std::is_floating_point_v<T>) {
                // Without B (MaxPlus, MinPlus) a stand-in of the right shape, never read.
                const tgh_view none{nullptr, grad_a->cols, grad_c->cols, 0, 0, 0};
                const tgh_view* other = s == tropical::Semiring::MaxMul ? b : &none;
                for (std::int64_t i = 0; i < batch; ++i)
                    tropical::reference::backward_a<T>(s, at<const T>(grad_c, i), at<const std::int32_t>(argmax, i),
                                                       at<const T>(other, i), at<T>(grad_a, i));
            }
        });
    });
}

// grad_B += the route of grad_C through argmax (a is read for MaxMul only), as above.
TGH_EXPORT int tgh_cpu_backward_b(std::int32_t semiring, std::int32_t dtype, const tgh_view* grad_c,
                                  const tgh_view* argmax, const tgh_view* a, const tgh_view* grad_b, std::int64_t batch) {
    return guarded([&] {
        const auto s = semiring_of(semiring);
        require(dtype == TROPICAL_F32 || dtype == TROPICAL_F64, "backward is implemented for f32 and f64 only");
        require_view(grad_c, "grad_C"), require_view(argmax, "argmax"), require_view(grad_b, "grad_B");
        if (s == tropical::Semiring::MaxMul) require_view(a, "A");
        with_dtype(dtype, [&]<class T>(T) {
            if constexpr (std::is_floating_point_v<T>) {
                const tgh_view none{nullptr, grad_c->rows, grad_b->rows, 0, 0, 0};
                const tgh_view* other = s == tropical::Semiring::MaxMul ? a : &none;
                for (std::int64_t i = 0; i < batch; ++i)
                    tropical::reference::backward_b<T>(s, at<const T>(grad_c, i), at<const std::int32_t>(argmax, i),
                                                       at<const T>(other, i), at<T>(grad_b, i));
            }
        });
    });
}

// --- the kernel registry and the cache --------------------------------------------------------

TGH_EXPORT std::int64_t tgh_kernel_count() { return static_cast<std::int64_t>(tropical::kernel_registry().size()); }

// The name of kernel `index` (a static string), or NULL past the end.
TGH_EXPORT const char* tgh_kernel_name(std::int64_t index) {
    const auto kernels = tropical::kernel_registry();
    if (index < 0 || index >= static_cast<std::int64_t>(kernels.size())) return nullptr;
    return kernels[static_cast<std::size_t>(index)].name.data();  // the registry's strings are NUL-terminated
}

// The cache folder the library uses (from the environment), into `out` (size `capacity`);
// *enabled is 0 where TROPICAL_GEMM_CACHE=off.
TGH_EXPORT int tgh_cache_directory(char* out, std::int64_t capacity, std::int32_t* enabled) {
    return guarded([&] {
        const auto settings = tropical::cache_settings_from_environment();
        const std::string root = settings.root.string();
        require(capacity > static_cast<std::int64_t>(root.size()), "the buffer is too small for the cache path");
        root.copy(out, root.size());
        out[root.size()] = '\0';
        *enabled = settings.enabled ? 1 : 0;
    });
}

// The architectures (XY of sm_XY) of this machine's CUDA devices, by ordinal: up to `capacity`
// into `out`, the count into *count. Needs the driver, not NVRTC and not a context.
TGH_EXPORT int tgh_device_architectures(std::int32_t* out, std::int64_t capacity, std::int64_t* count) {
    return guarded([&] {
        const auto archs = tropical::device_architectures();
        *count = static_cast<std::int64_t>(archs.size());
        for (std::size_t i = 0; i < archs.size() && static_cast<std::int64_t>(i) < capacity; ++i) out[i] = archs[i];
    });
}

// Puts kernel `name` for sm_<arch> into the disk cache of the environment's settings, compiling
// it only if the cache has no valid entry. *compiled: 1 if this call compiled it; *seconds: time.
TGH_EXPORT int tgh_warm_kernel(const char* name, std::int32_t arch, std::int32_t* compiled, std::int32_t* ptx_for_jit,
                               double* seconds) {
    return guarded([&] {
        const tropical::KernelInfo* kernel = tropical::find_kernel(name ? name : "");
        require(kernel != nullptr, std::string("no kernel named '") + (name ? name : "") +
                                       "'; tropical_gemm.kernel_names() lists them");
        const auto result = tropical::warm_kernel(tropical::cache_settings_from_environment(), *kernel, arch);
        *compiled = result.compiled ? 1 : 0;
        *ptx_for_jit = result.ptx_for_jit ? 1 : 0;
        *seconds = result.seconds;
    });
}

TGH_EXPORT const char* tgh_last_error() { return g_last_error.c_str(); }

// The GPU path of the PyTorch ops. `device` is the CUDA device of every operand and `stream` that
// device's current PyTorch stream, so the library skips asking the driver about each pointer and
// about the stream (about 1.5 us per call on the H200 host); everything else is checked as for
// the C ABI.
TGH_EXPORT int tgh_gpu_run(const tgh_gpu_call* call) {
    return guarded([&] {
        require(call != nullptr, "the call is NULL");
        require(call->operation >= 0 && call->operation <= 3, "unknown operation (" + std::to_string(call->operation) + ")");
        require(call->device >= 0, "the device must be a CUDA device ordinal (0 or more)");
        const tropical_options options{call->stream, call->accumulate};
        tropical::detail::Request q = tropical::detail::request_from_c(
            static_cast<tropical::detail::Operation>(call->operation), call->semiring, call->dtype, &call->a, &call->b,
            &call->c, &call->argmax, &call->grad, call->batch, &options);
        q.known_device = call->device;
        tropical::detail::run(q);
    });
}
