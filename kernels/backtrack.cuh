// tropical-gemm's device code, the backtrack piece (after orand.cuh, before entry.cuh): the walk back
// through a chain's argmax tables (kernel_params.h's TgBacktrackParams says what it writes).

namespace tg {

// A thread per row, striding over the rows: T dependent loads, each the index the next one reads
// at. Nothing to share between rows or steps, so no shared memory and no barrier; the rows' loads
// are independent, so many rows hide each other's latency.
__device__ __forceinline__ void backtrack(const TgBacktrackParams& p) {
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long b = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; b < p.rows; b += stride) {
        long long s = *element<const int>(p.last, 0, b, 0);
        bool on_path = s >= 0 && s < p.states;
        *element<int>(p.path, 0, b, p.steps) = on_path ? static_cast<int>(s) : -1;
        for (long long t = p.steps - 1; t >= 0; --t) {
            if (on_path) {
                s = *element<const int>(p.back, t, b, s);
                on_path = s >= 0 && s < p.states;
            }
            *element<int>(p.path, 0, b, t) = on_path ? static_cast<int>(s) : -1;
        }
    }
}

}  // namespace tg
