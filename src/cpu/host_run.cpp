// The host entry points of tropical/host.hpp, and the one run() behind them and the C ABI.
#include <atomic>

#include <fmt/format.h>

#include <tropical/error.hpp>
#include <tropical/host.hpp>
#include "cpu/host.hpp"
#include "cpu/targets.hpp"
#include "cpu/thread_pool.hpp"

namespace tropical::cpu {
namespace {

std::atomic<double> g_work_scale{1.0};

}  // namespace

int threads_for(double work, double per_thread, int threads) {
    const double scale = g_work_scale.load(std::memory_order_relaxed);
    if (scale <= 0) return threads;
    const double useful = work / (per_thread * scale);
    return useful >= threads ? threads : useful < 1 ? 1 : static_cast<int>(useful);
}

void set_work_per_thread_scale(double scale) { g_work_scale.store(scale, std::memory_order_relaxed); }

void run(const detail::Request& q, int threads) {
    if (threads < 0)
        throw InvalidArgument(
            fmt::format("threads is {}; it must be 0 (one thread per core) or a positive number of threads", threads));
    const detail::ValidatedRequest v = detail::validate(q);
    load_highway();
    const int used = threads == 0 ? available_cores() : threads;
    const bool backward = q.operation == detail::Operation::BackwardA || q.operation == detail::Operation::BackwardB;
    if (backward) run_backward(q, v.shape, used);
    else if (q.operation == detail::Operation::PackBits) run_pack(q, v.shape, used);
    else if (q.operation == detail::Operation::Backtrack) run_backtrack(q, v.shape);
    else if (q.with_counts) run_counting(q, v.shape, used);
    else if (q.semiring == Semiring::OrAnd) run_orand(q, v.shape, used);
    else run_product(q, v.shape, used);
}

}  // namespace tropical::cpu

namespace tropical::host {

const char* simd_target() { return cpu::target_name(); }

int default_threads() { return cpu::available_cores(); }

namespace detail {
namespace {

using tropical::detail::backtrack_request;
using tropical::detail::backward_request;
using tropical::detail::pack_request;
using tropical::detail::packed_product_request;
using tropical::detail::product_request;

// The request's options on the CPU: accumulate is all that matters there.
GemmOptions request_options(const Options& options) {
    GemmOptions o;
    o.accumulate = options.accumulate;
    return o;
}

}  // namespace

void product(Semiring semiring, DType dtype, const OperandRef& a, const OperandRef& b, const OperandRef& c,
             const OperandRef* argmax, std::int64_t batch, const Options& options) {
    cpu::run(product_request(semiring, dtype, a, b, c, argmax, batch, request_options(options)), options.threads);
}

void product_packed(Semiring semiring, const OperandRef& a, const OperandRef& b, std::int64_t k, const OperandRef& c,
                    const OperandRef* argmax, std::int64_t batch, const Options& options) {
    cpu::run(packed_product_request(semiring, a, b, k, c, argmax, batch, request_options(options)), options.threads);
}

void pack_bits(const OperandRef& bytes, PackAs as, const OperandRef& words, std::int64_t batch,
               const Options& options) {
    cpu::run(pack_request(bytes, as, words, batch, request_options(options)), options.threads);
}

void backtrack(const OperandRef& back, std::int64_t steps, const OperandRef& last, const OperandRef& path,
               const Options& options) {
    cpu::run(backtrack_request(back, steps, last, path, request_options(options)), options.threads);
}

void backward(Gradient of, Semiring semiring, DType dtype, const OperandRef& grad_c, const OperandRef& argmax,
              const OperandRef& a, const OperandRef& b, const OperandRef& grad, std::int64_t batch,
              const Options& options) {
    cpu::run(backward_request(of, semiring, dtype, grad_c, argmax, a, b, grad, batch, request_options(options)),
             options.threads);
}

}  // namespace detail
}  // namespace tropical::host
