// LogPlus's gradients on the CPU (the Softmax route): every term of a result gets its share of
// grad_C[i,j], weighted by exp(A[i,k] + B[k,j] - C[i,j]) from the forward's C (which the request
// carries in its argmax operand), as src/reference/reference.hpp's softmax_backward says:
//
//   grad_A[i,k] (+)= sum_j grad_C[i,j] * w,   grad_B[k,j] (+)= sum_i grad_C[i,j] * w,
//   w = exp(A[i,k] + B[k,j] - C[i,j]) as IEEE computes it, and 0 where C[i,j] is -inf.
//
// A product of its own (M x N x K terms, an exp each), never the weights stored: each thread owns
// whole rows of grad_A or whole columns of grad_B, as in cpu/host_backward.cpp, and sums its
// elements' shares in double before adding them to the gradient (no two threads touch one element,
// and the order is fixed, so results do not vary from run to run). The term is A + B rounded in the
// element type, as the forward product and the reference take it; its difference with C and the
// exp are in double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "cpu/host.hpp"
#include "cpu/strided_matrix.hpp"
#include "cpu/thread_pool.hpp"

namespace tropical::cpu {
namespace {

// A thread is worth waking for this many terms (each an exp).
constexpr double kTermsPerThread = double(1 << 14);

// A term's share of c: what exp gives (0 for a term of -inf, NaN against a C of NaN), and 0 where c is
// -inf (every term of it is -inf).
template <class T>
double weight(T a, T b, T c) {
    const T term = T(a + T(0)) + T(b + T(0));
    if (c == -std::numeric_limits<T>::infinity()) return 0.0;
    return std::exp(static_cast<double>(term) - static_cast<double>(c));
}

// Rows [first, last) of grad_A (of_a) or columns [first, last) of grad_B, for one product.
template <class T>
void softmax_band(const detail::Request& q, const detail::Shape& s, std::int64_t product, std::int64_t first,
                  std::int64_t last) {
    const bool of_a = q.operation == detail::Operation::BackwardA;
    const auto grad_c = strided_matrix<const T>(q.c, product);
    const auto c = strided_matrix<const T>(q.argmax, product);  // the forward's C
    const auto a = strided_matrix<const T>(q.a, product), b = strided_matrix<const T>(q.b, product);
    const auto grad = strided_matrix<T>(q.grad, product);
    const bool add = q.options.accumulate;
    if (of_a) {
        for (std::int64_t i = first; i < last; ++i)
            for (std::int64_t k = 0; k < s.k; ++k) {
                const T a_ik = a(i, k);
                double share = 0;
                for (std::int64_t j = 0; j < s.n; ++j)
                    share += static_cast<double>(grad_c(i, j)) * weight(a_ik, b(k, j), c(i, j));
                grad(i, k) = static_cast<T>((add ? static_cast<double>(grad(i, k)) : 0.0) + share);
            }
        return;
    }
    // Along the band's columns, row after row of A, so that the inner loop reads rows of B and C.
    std::vector<double> shares(static_cast<std::size_t>(last - first));
    for (std::int64_t k = 0; k < s.k; ++k) {
        std::fill(shares.begin(), shares.end(), 0.0);
        for (std::int64_t i = 0; i < s.m; ++i) {
            const T a_ik = a(i, k);
            for (std::int64_t j = first; j < last; ++j)
                shares[static_cast<std::size_t>(j - first)] +=
                    static_cast<double>(grad_c(i, j)) * weight(a_ik, b(k, j), c(i, j));
        }
        for (std::int64_t j = first; j < last; ++j)
            grad(k, j) = static_cast<T>((add ? static_cast<double>(grad(k, j)) : 0.0) +
                                        shares[static_cast<std::size_t>(j - first)]);
    }
}

}  // namespace

void run_softmax_backward(const detail::Request& q, const detail::Shape& s, int threads) {
    const bool of_a = q.operation == detail::Operation::BackwardA;
    const std::int64_t lines = of_a ? s.m : s.n;         // rows of grad_A, or columns of grad_B
    if (q.batch == 0 || lines == 0 || s.k == 0) return;  // a gradient without elements
    const double terms = double(q.batch) * double(s.m) * double(s.n) * double(s.k);
    const int used = threads_for(terms, kTermsPerThread, threads);
    const std::int64_t per_product =
        used <= 1 || q.batch >= 4 * used ? 1 : 4 * used / std::gcd<std::int64_t>(q.batch, used);
    const std::int64_t bands = std::clamp<std::int64_t>(per_product, 1, lines);
    parallel_for(used, q.batch * bands, [&](std::int64_t task) {
        const std::int64_t product = task / bands, band = task % bands;
        const std::int64_t first = lines * band / bands, last = lines * (band + 1) / bands;
        if (q.dtype == DType::F32) softmax_band<float>(q, s, product, first, last);
        else softmax_band<double>(q, s, product, first, last);  // validation admits f32 and f64 only
    });
}

}  // namespace tropical::cpu
