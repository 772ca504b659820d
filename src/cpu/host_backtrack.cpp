// The backtrack in host memory: the rule of kernels/backtrack.cuh (a row's walk ends at the first
// index outside [0, S), which and whose earlier entries are written -1), row after row. One pass of T
// dependent loads per row: too little work to wake threads for.
#include <cstdint>

#include "cpu/host.hpp"

namespace tropical::cpu {

void run_backtrack(const detail::Request& q, const detail::Shape& s) {
    const detail::OperandRef &back = q.argmax, &last = q.a, &path = q.c;
    const auto at = [](const detail::OperandRef& r, std::int64_t batch, std::int64_t i, std::int64_t j) {
        return static_cast<const std::int32_t*>(r.data) + batch * r.batch_stride + i * row_stride(r) +
               j * col_stride(r);
    };
    const auto out = [&](std::int64_t i, std::int64_t j) { return const_cast<std::int32_t*>(at(path, 0, i, j)); };
    const std::int64_t states = s.n, steps = s.k;
    for (std::int64_t b = 0; b < s.m; ++b) {
        std::int64_t state = *at(last, 0, b, 0);
        bool on_path = state >= 0 && state < states;
        *out(b, steps) = on_path ? static_cast<std::int32_t>(state) : -1;
        for (std::int64_t t = steps - 1; t >= 0; --t) {
            if (on_path) {
                state = *at(back, t, b, state);
                on_path = state >= 0 && state < states;
            }
            *out(b, t) = on_path ? static_cast<std::int32_t>(state) : -1;
        }
    }
}

}  // namespace tropical::cpu
