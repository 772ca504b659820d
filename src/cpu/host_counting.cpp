// Counting products on the CPU: a validated request cut into bands of rows of C that the thread pool
// hands to the SIMD kernels of cpu/counting_kernel.cpp (compiled per target and chosen at run time,
// as the other semirings' are). Each result is a (value, count) pair whose count follows its value
// through compares and selects, so those kernels run their own register tiles of pairs rather than
// the other semirings' (cpu/kernel-inl.h); every result still takes its terms in increasing k, with
// the reference's roundings, so that the pairs are bit for bit the reference's.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <tropical/counting.hpp>
#include "cpu/counting.hpp"
#include "cpu/host.hpp"
#include "cpu/thread_pool.hpp"

namespace tropical::cpu {
namespace {

// A thread is worth waking for this many terms.
constexpr double kTermsPerThread = double(1 << 18);

// Operand r of product `index` of the batch, elements of `bytes` each.
Strided strided_at(const detail::OperandRef& r, std::int64_t index, std::size_t bytes) {
    auto* data = static_cast<const char*>(r.data) + index * r.batch_stride * static_cast<std::int64_t>(bytes);
    return {const_cast<char*>(data), row_stride(r), col_stride(r)};
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
    const std::size_t size = size_of(q.dtype);
    parallel_for(used, q.batch * bands, [&](std::int64_t task) {
        const std::int64_t b = task / bands, r0 = (task % bands) * band;
        CountingTask t;
        t.dtype = q.dtype;
        t.accumulate = q.options.accumulate;
        t.n = s.n, t.k = s.k;
        t.a_values = strided_at(q.a, b, size), t.a_counts = strided_at(q.a_count, b, sizeof(double));
        t.b_values = strided_at(q.b, b, size), t.b_counts = strided_at(q.b_count, b, sizeof(double));
        t.c_values = strided_at(q.c, b, size), t.c_counts = strided_at(q.c_count, b, sizeof(double));
        t.row0 = r0, t.row1 = std::min(s.m, r0 + band);
        counting_rows(t);
    });
}

}  // namespace tropical::cpu

namespace tropical::detail {

void host_counting_product(DType dtype, const CountingOperands& a, const CountingOperands& b, const CountingOperands& c,
                           std::int64_t batch, const host::Options& options) {
    cpu::run(counting_request(dtype, a, b, c, batch, options.accumulate), options.threads);
}

}  // namespace tropical::detail
