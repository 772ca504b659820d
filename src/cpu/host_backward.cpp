// Gradients on the CPU: grad_C routed through the argmax by the semiring's gradient route
// (src/semiring/gradient_route.hpp), as src/reference/reference.hpp does it; LogPlus's, which read
// the forward's C instead, in cpu/host_softmax_backward.cpp.
//
// Each thread owns whole rows of grad_A (only row i of grad_C feeds row i of grad_A) or whole
// columns of grad_B (only column j of grad_C feeds column j), so no two threads add to one element,
// and each element receives its terms in the reference's order (j, then i, ascending): the result
// equals the reference's bit for bit, on any number of threads. The work is a scatter of M x N
// loads and adds, bound by memory rather than arithmetic, so it stays scalar.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "cpu/host.hpp"
#include "cpu/strided_matrix.hpp"
#include "cpu/thread_pool.hpp"
#include "semiring/gradient_route.hpp"

namespace tropical::cpu {
namespace {

// A thread is worth waking for this many elements of grad_C.
constexpr double kElementsPerThread = double(1 << 16);

// The part of the gradient one band adds into, at most: a band of grad_B's columns spans all K of
// its rows and the adds land wherever the argmax says, so a narrower band keeps them in cache; but
// it reads grad_C and the argmax in shorter pieces of each row. 2 MiB measured best on 2048^2
// (8 bands: 52 ms, against 68 ms for one and 78 ms for 64 bands of 256 KiB).
constexpr double kBandBytes = double(2 << 20);

// What grad_C[i,j] adds to the gradient at its argmax k: itself, times the other operand (MaxMul),
// or nothing where the other operand took the term (MaxMin, MinMax), as the reference rules.
template <class T>
struct Route {
    Semiring semiring;
    bool of_a;
    StridedMatrix<const T> a, b;  // read where the semiring needs them
    bool to(std::int64_t i, std::int64_t j, std::int64_t k, T& g) const {
        const T a_ik = gradient_reads_a(semiring, of_a) ? a(i, k) : T(0);
        const T b_kj = gradient_reads_b(semiring, of_a) ? b(k, j) : T(0);
        return detail::route_term(info(semiring).gradient, of_a, a_ik, b_kj, g);
    }
};

// Rows [first, last) of grad_A (of_a) or columns [first, last) of grad_B, for one product.
template <class T>
void backward_band(const detail::Request& q, const detail::Shape& s, std::int64_t product, std::int64_t first,
                   std::int64_t last) {
    const bool of_a = q.operation == detail::Operation::BackwardA;
    const auto grad_c = strided_matrix<const T>(q.c, product);
    const auto argmax = strided_matrix<const std::int32_t>(q.argmax, product);
    const Route<T> route{q.semiring, of_a, strided_matrix<const T>(q.a, product),
                         strided_matrix<const T>(q.b, product)};
    const auto grad = strided_matrix<T>(q.grad, product);
    if (of_a) {
        if (!q.options.accumulate)
            for (std::int64_t i = first; i < last; ++i)
                for (std::int64_t k = 0; k < s.k; ++k) grad(i, k) = T(0);
        for (std::int64_t i = first; i < last; ++i) {
            for (std::int64_t j = 0; j < s.n; ++j) {
                const std::int64_t k = argmax(i, j);
                T g = grad_c(i, j);
                if (k >= 0 && k < s.k && route.to(i, j, k, g)) grad(i, k) += g;
            }
        }
    } else {
        if (!q.options.accumulate)
            for (std::int64_t k = 0; k < s.k; ++k)
                for (std::int64_t j = first; j < last; ++j) grad(k, j) = T(0);
        for (std::int64_t i = 0; i < s.m; ++i) {
            for (std::int64_t j = first; j < last; ++j) {
                const std::int64_t k = argmax(i, j);
                T g = grad_c(i, j);
                if (k >= 0 && k < s.k && route.to(i, j, k, g)) grad(k, j) += g;
            }
        }
    }
}

}  // namespace

void run_backward(const detail::Request& q, const detail::Shape& s, int threads) {
    // LogPlus: every term gets a share, from the forward's C (cpu/host_softmax_backward.cpp).
    if (info(q.semiring).gradient == GradientRoute::Softmax) return run_softmax_backward(q, s, threads);
    const bool of_a = q.operation == detail::Operation::BackwardA;
    const std::int64_t lines = of_a ? s.m : s.n;         // rows of grad_A, or columns of grad_B
    if (q.batch == 0 || lines == 0 || s.k == 0) return;  // a gradient without elements
    const double work = double(q.batch) * double(lines) * double(std::max(s.k, of_a ? s.n : s.m));
    const int used = threads_for(work, kElementsPerThread, threads);
    const std::int64_t for_threads =
        used <= 1 || q.batch >= 4 * used ? 1 : used / std::gcd<std::int64_t>(q.batch, used);
    const auto for_cache =
        static_cast<std::int64_t>(double(lines) * double(s.k) * double(size_of(q.dtype)) / kBandBytes);
    const std::int64_t bands = std::clamp<std::int64_t>(std::max(for_threads, for_cache), 1, lines);
    parallel_for(used, q.batch * bands, [&](std::int64_t task) {
        const std::int64_t product = task / bands, band = task % bands;
        const std::int64_t first = lines * band / bands, last = lines * (band + 1) / bands;
        if (q.dtype == DType::F32) backward_band<float>(q, s, product, first, last);
        else backward_band<double>(q, s, product, first, last);  // validation admits f32 and f64 only
    });
}

}  // namespace tropical::cpu
