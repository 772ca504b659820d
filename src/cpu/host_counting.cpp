// Counting products on the CPU: a validated request cut into bands of rows of C that the thread pool
// runs. A plain loop rather than SIMD kernels of cpu/: each result is a (value, count) pair whose
// count must follow its value through compares and selects, and the einsum steps this path serves
// are small. Each row of C is computed as k outer, j inner over contiguous scratch rows, so that the
// inner loop streams a row of B; every result still takes its terms in increasing k, as in the
// reference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <tropical/counting.hpp>
#include "cpu/host.hpp"
#include "cpu/thread_pool.hpp"

namespace tropical::cpu {
namespace {

// A thread is worth waking for this many terms.
constexpr double kTermsPerThread = double(1 << 18);

template <class T>
struct Matrix {
    const T* data;
    std::int64_t rs, cs, bs;
    const T& at(std::int64_t b, std::int64_t i, std::int64_t j) const { return data[b * bs + i * rs + j * cs]; }
};

template <class T>
Matrix<T> matrix(const detail::OperandRef& r) {
    return {static_cast<const T*>(r.data), row_stride(r), col_stride(r), r.batch_stride};
}

// The rules of a finished pair (src/reference/reference.hpp): -inf counts 0, NaN has count NaN, -0 is +0.
template <class T>
void finish(T& value, double& count) {
    if (std::isnan(value)) count = std::numeric_limits<double>::quiet_NaN();
    else if (value == -std::numeric_limits<T>::infinity()) count = 0.0;
    value = value + T(0);
}

template <class T>
void run_rows(const detail::Request& q, const detail::Shape& s, std::int64_t b, std::int64_t row_begin,
              std::int64_t row_end) {
    const auto av = matrix<T>(q.a), bv = matrix<T>(q.b);
    const auto ac = matrix<double>(q.a_count), bc = matrix<double>(q.b_count);
    auto* const cv = static_cast<T*>(const_cast<void*>(q.c.data));
    auto* const cc = static_cast<double*>(const_cast<void*>(q.c_count.data));
    const std::int64_t cv_rs = row_stride(q.c), cv_cs = col_stride(q.c);
    const std::int64_t cc_rs = row_stride(q.c_count), cc_cs = col_stride(q.c_count);
    std::vector<T> value(static_cast<std::size_t>(s.n));
    std::vector<double> count(static_cast<std::size_t>(s.n));
    for (std::int64_t i = row_begin; i < row_end; ++i) {
        std::fill(value.begin(), value.end(), -std::numeric_limits<T>::infinity());
        std::fill(count.begin(), count.end(), 0.0);
        for (std::int64_t k = 0; k < s.k; ++k) {
            const T a = av.at(b, i, k);
            const double ca = ac.at(b, i, k);
            for (std::int64_t j = 0; j < s.n; ++j) {
                // The kernels' step (kernels/counting.cuh): NaN-propagating max of the value, the
                // count restarted, added to, or kept.
                const T term = a + bv.at(b, k, j);
                const T acc = value[j];
                const T best = term > acc || std::isnan(term) ? term : acc;
                const double base = acc == best ? count[j] : 0.0;
                if (term == best) count[j] = ca * bc.at(b, k, j) + base;
                value[j] = best;
            }
        }
        for (std::int64_t j = 0; j < s.n; ++j) {
            T v = value[j];
            double c = count[j];
            finish(v, c);
            T& out_v = cv[b * q.c.batch_stride + i * cv_rs + j * cv_cs];
            double& out_c = cc[b * q.c_count.batch_stride + i * cc_rs + j * cc_cs];
            if (q.options.accumulate) {
                T old_v = out_v;
                double old_c = out_c;
                finish(old_v, old_c);
                const T best = std::isnan(old_v) || old_v > v ? old_v : v;
                c = (old_v == best ? old_c : 0.0) + (v == best ? c : 0.0);
                v = best;
                finish(v, c);
            }
            out_v = v;
            out_c = c;
        }
    }
}

}  // namespace

void run_counting(const detail::Request& q, const detail::Shape& s, int threads) {
    if (q.batch == 0 || s.empty()) return;
    const double terms =
        static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(std::max<std::int64_t>(s.k, 1));
    const int used = threads_for(terms * static_cast<double>(q.batch), kTermsPerThread, threads);
    // Bands of rows: enough that every thread gets work, at least 4 rows each.
    const std::int64_t per_product =
        std::clamp<std::int64_t>(4 * used / std::max<std::int64_t>(q.batch, 1), 1, std::max<std::int64_t>(s.m / 4, 1));
    const std::int64_t band = (s.m + per_product - 1) / per_product;
    const std::int64_t bands = (s.m + band - 1) / band;
    parallel_for(used, q.batch * bands, [&](std::int64_t task) {
        const std::int64_t b = task / bands, r0 = (task % bands) * band, r1 = std::min(s.m, r0 + band);
        if (q.dtype == DType::F32) run_rows<float>(q, s, b, r0, r1);
        else run_rows<double>(q, s, b, r0, r1);
    });
}

}  // namespace tropical::cpu

namespace tropical::detail {

void host_counting_product(DType dtype, const CountingOperands& a, const CountingOperands& b, const CountingOperands& c,
                           std::int64_t batch, const host::Options& options) {
    cpu::run(counting_request(dtype, a, b, c, batch, options.accumulate), options.threads);
}

}  // namespace tropical::detail
