#pragma once
// The CPU path of every request: what tropical/host.hpp's templates and the C ABI's tropical_host_*
// functions (src/c_api/host.cpp) call. The same Request and the same validation as the GPU path
// (request/validate.cpp); then the products (cpu/host_product.cpp) or the gradients
// (cpu/host_backward.cpp), cut into tasks for the thread pool.
#include "request/request.hpp"
#include "request/validate.hpp"

namespace tropical::cpu {

// Validates q (throws the tropical::Error that says what is wrong) and computes it in host memory
// on at most `threads` threads (0: one per core this process may run on).
void run(const detail::Request& q, int threads);

// The two halves of run(), for a request that passed validation with shape s, on `threads` >= 1.
void run_product(const detail::Request& q, const detail::Shape& s, int threads);
void run_backward(const detail::Request& q, const detail::Shape& s, int threads);
// LogPlus's gradients (the Softmax route), from the forward's C (cpu/host_softmax_backward.cpp).
void run_softmax_backward(const detail::Request& q, const detail::Shape& s, int threads);
void run_counting(const detail::Request& q, const detail::Shape& s, int threads);  // cpu/host_counting.cpp
// OrAnd's products (from bytes or packed words) and the packing (cpu/orand.cpp).
void run_orand(const detail::Request& q, const detail::Shape& s, int threads);
void run_pack(const detail::Request& q, const detail::Shape& s, int threads);
// The walk back through a chain's argmax tables (cpu/host_backtrack.cpp), on the calling thread.
void run_backtrack(const detail::Request& q, const detail::Shape& s);

// Element (i, j) of an operand is at data + i * row_stride + j * col_stride.
inline std::int64_t row_stride(const detail::OperandRef& r) { return r.layout == Layout::RowMajor ? r.ld : 1; }
inline std::int64_t col_stride(const detail::OperandRef& r) { return r.layout == Layout::RowMajor ? 1 : r.ld; }

// Threads worth using (1 to `threads`) for `work` units, where a thread is worth waking for
// `per_thread` of them (times the scale below).
int threads_for(double work, double per_thread, int threads);

// Scales the work a thread is worth waking for: 1 as tuned; 0 makes every call use every thread it
// may, however small (tests cut small problems into tasks that way).
void set_work_per_thread_scale(double scale);

}  // namespace tropical::cpu
