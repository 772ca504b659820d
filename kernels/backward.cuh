// tropical-gemm's device code, piece 5 of 5: the Scatter kernels, which route grad_C through the
// argmax into the gradient of A or B.

namespace tg {

// Backward: route grad_C through the argmax. Two ways, chosen by the host through the dynamic
// shared memory it gives the launch:
//  - in shared memory (enough of it for K values per block): grad_A one row at a time (a block
//    reads row i of grad_C and argmax and adds into a shared row of K values; grad_B one slab of
//    kTgBackwardBSlabBytes' worth of columns at a time (a block walks those columns down all rows, into a
//    shared K x slab); then the block writes the row or slab to grad once. Every byte is moved
//    once, and the additions are shared-memory atomics. With `overwrite` the result replaces grad
//    (the host then skips zeroing it); otherwise it is added.
//  - else global atomics over the elements of grad_C (grad zeroed by the host unless accumulating).
// g, grad_C[i,j] of product b, as it reaches the gradient of A at (i,k) (GRAD_A) or of B at (k,j)
// by p.route; false where the route gives that gradient nothing (MaxMin, MinMax: the other operand
// took the term).
template <class T, bool GRAD_A>
__device__ __forceinline__ bool routed(const TgBackwardParams& p, long long b, long long i, long long j, int k, T& g) {
    if (p.route == kTgRouteAsIs) return true;
    if (p.route == kTgRouteProduct) {
        g *= GRAD_A ? *element<const T>(p.b, b, k, j) : *element<const T>(p.a, b, i, k);
        return true;
    }
    const T x = *element<const T>(p.a, b, i, k), y = *element<const T>(p.b, b, k, j);
    const bool a_took = x != x || (y == y && (p.route == kTgRouteToMin ? x <= y : x >= y));
    return a_took == GRAD_A;
}

template <class T, bool GRAD_A>
__device__ __forceinline__ void backward(const TgBackwardParams& p) {
    const long long M = p.m, N = p.n, K = p.k;
    extern __shared__ Vec16<T> backward_smem[];
    T* const shared = backward_smem[0].v;
    unsigned smem_bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(smem_bytes));
    const int tid = threadIdx.x, threads = blockDim.x;
    auto contribution = [&](long long b, long long i, long long j, int& k, T& g) {
        k = *element<const int>(p.argmax, b, i, j);
        if (k < 0 || k >= K) return false;
        g = *element<const T>(p.grad_c, b, i, j);
        return routed<T, GRAD_A>(p, b, i, j, k, g);
    };
    auto store = [&](T* d, T v) {
        if (p.overwrite) *d = v;
        else if (v != T(0)) *d += v;
    };
    if (GRAD_A && smem_bytes >= K * sizeof(T)) {
        // Rows of argmax and grad_C that are contiguous and 16-byte aligned are read 4 elements
        // at a time (one 128-bit load of argmax, one or two of grad_C): with a load pair per
        // thread in flight the loop was latency-bound at 46% of HBM bandwidth (bench/NOTES.md).
        constexpr int V = 4;
        const auto aligned = [](const void* q) { return reinterpret_cast<unsigned long long>(q) % 16 == 0; };
        const bool vec = p.argmax.col_stride == 1 && p.grad_c.col_stride == 1 && p.argmax.row_stride % V == 0 &&
                         p.grad_c.row_stride % V == 0 &&
                         (p.batch == 1 || (p.argmax.batch_stride % V == 0 && p.grad_c.batch_stride % V == 0)) &&
                         aligned(p.argmax.ptr) && aligned(p.grad_c.ptr);
        for (long long r = blockIdx.x; r < p.batch * M; r += gridDim.x) {
            const long long b = r / M, i = r % M;
            for (long long k = tid; k < K; k += threads) shared[k] = T(0);
            __syncthreads();
            if (vec) {
                const int* const arg_row = element<const int>(p.argmax, b, i, 0);
                const T* const grad_row = element<const T>(p.grad_c, b, i, 0);
                for (long long j0 = tid * V; j0 < N; j0 += threads * V) {
                    int kv[V];
                    T gv[V];
                    if (j0 + V <= N) {
                        const int4 k4 = *reinterpret_cast<const int4*>(arg_row + j0);
                        kv[0] = k4.x, kv[1] = k4.y, kv[2] = k4.z, kv[3] = k4.w;
                        constexpr int PER = 16 / static_cast<int>(sizeof(T));  // elements per 128-bit load
#pragma unroll
                        for (int h = 0; h < V / PER; ++h) {
                            const Vec16<T> g = reinterpret_cast<const Vec16<T>*>(grad_row + j0)[h];
#pragma unroll
                            for (int e = 0; e < PER; ++e) gv[h * PER + e] = g.v[e];
                        }
                    } else {
#pragma unroll
                        for (int e = 0; e < V; ++e) {
                            kv[e] = j0 + e < N ? arg_row[j0 + e] : -1;
                            gv[e] = j0 + e < N ? grad_row[j0 + e] : T(0);
                        }
                    }
#pragma unroll
                    for (int e = 0; e < V; ++e) {
                        if (kv[e] < 0 || kv[e] >= K) continue;
                        T g = gv[e];
                        if (routed<T, true>(p, b, i, j0 + e, kv[e], g)) atomicAdd(&shared[kv[e]], g);
                    }
                }
            } else {
                for (long long j = tid; j < N; j += threads) {
                    int k;
                    T g;
                    if (contribution(b, i, j, k, g)) atomicAdd(&shared[k], g);
                }
            }
            __syncthreads();
            for (long long k = tid; k < K; k += threads) store(element<T>(p.grad, b, i, k), shared[k]);
            __syncthreads();
        }
        return;
    }
    constexpr int SLAB = kTgBackwardBSlabBytes / sizeof(T);  // columns per block
    if (!GRAD_A && smem_bytes >= K * SLAB * sizeof(T)) {
        const long long slabs = (N + SLAB - 1) / SLAB;
        for (long long r = blockIdx.x; r < p.batch * slabs; r += gridDim.x) {
            const long long b = r / slabs, j0 = (r % slabs) * SLAB;
            for (long long e = tid; e < K * SLAB; e += threads) shared[e] = T(0);
            __syncthreads();
            // A thread keeps one column of the slab (threads is a multiple of SLAB) and walks its
            // rows threads / SLAB apart by pointer steps: the index arithmetic per element (64-bit
            // divisions and three strided products) had cost ~115 instructions per element, which
            // made the loop instruction-bound (ncu: 63% issue active, 34% of HBM).
            // Eight elements' loads in flight per thread before their additions (one block per
            // multiprocessor holds its K x SLAB shared values, so its loads must cover latency);
            // grad_C is read with argmax, not after it. (f64: four, within the 64 registers that
            // 1024 threads leave each.)
            constexpr int UNROLL = sizeof(T) == 4 ? 8 : 4;
            const int column = tid % SLAB, rows_apart = threads / SLAB;
            const long long j = j0 + column;
            if (j < N) {
                const int* arg = element<const int>(p.argmax, b, tid / SLAB, j);
                const T* grad_c = element<const T>(p.grad_c, b, tid / SLAB, j);
                const long long arg_step = rows_apart * p.argmax.row_stride,
                                grad_step = rows_apart * p.grad_c.row_stride;
                for (long long i0 = tid / SLAB; i0 < M; i0 += UNROLL * rows_apart) {
                    int k[UNROLL];
                    T g[UNROLL];
#pragma unroll
                    for (int u = 0; u < UNROLL; ++u) {
                        const bool inside = i0 + u * rows_apart < M;
                        k[u] = inside ? arg[u * arg_step] : -1;
                        g[u] = inside ? grad_c[u * grad_step] : T(0);
                    }
                    if (p.route != kTgRouteAsIs) {
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u)
                            if (k[u] >= 0 && k[u] < K && !routed<T, false>(p, b, i0 + u * rows_apart, j, k[u], g[u]))
                                k[u] = -1;
                    }
#pragma unroll
                    for (int u = 0; u < UNROLL; ++u)
                        if (k[u] >= 0 && k[u] < K) atomicAdd(&shared[k[u] * SLAB + column], g[u]);
                    arg += UNROLL * arg_step;
                    grad_c += UNROLL * grad_step;
                }
            }
            __syncthreads();
            if (j < N) {
                T* out = element<T>(p.grad, b, tid / SLAB, j);
                const long long out_step = rows_apart * p.grad.row_stride;
                for (long long k = tid / SLAB; k < K; k += rows_apart, out += out_step)
                    store(out, shared[k * SLAB + column]);
            }
            __syncthreads();
        }
        return;
    }
    const long long total = p.batch * M * N;
    const long long stride = static_cast<long long>(gridDim.x) * threads;
    for (long long e = static_cast<long long>(blockIdx.x) * threads + tid; e < total; e += stride) {
        const long long j = e % N, row = e / N;
        const long long i = row % M, b = row / M;
        int k;
        T g;
        if (contribution(b, i, j, k, g))
            atomicAdd(GRAD_A ? element<T>(p.grad, b, i, k) : element<T>(p.grad, b, k, j), g);
    }
}

}  // namespace tg
