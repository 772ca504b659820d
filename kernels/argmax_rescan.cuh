// tropical-gemm's device code, the piece before main_loop.cuh: the argmax rescans of the tiled main
// loop. For 32-bit types the main loop records, per result, the last slice of BK terms that changed
// it; after the loop these find, in that slice, the first k whose term equals the result.

namespace tg {

// N consecutive elements of an operand along k, `stride` apart, of which the first `remaining` exist
// (the rest read as the zero): 128-bit loads where they are contiguous and aligned, else a pointer
// walk, and bounds checks only where the run is cut short.
template <class R, int N, class T>
__device__ __forceinline__ void load_run(T (&v)[N], const T* ptr, long long stride, long long remaining) {
    constexpr int VEC = 16 / sizeof(T);
    static_assert(N % VEC == 0, "a run is whole 128-bit pieces");
    if (remaining >= N && stride == 1 && reinterpret_cast<unsigned long long>(ptr) % 16 == 0) {
#pragma unroll
        for (int g = 0; g < N / VEC; ++g) {
            const Vec16<T> w = reinterpret_cast<const Vec16<T>*>(ptr)[g];
#pragma unroll
            for (int e = 0; e < VEC; ++e) v[g * VEC + e] = w.v[e];
        }
    } else if (remaining >= N) {
#pragma unroll
        for (int t = 0; t < N; ++t, ptr += stride) v[t] = *ptr;
    } else {
#pragma unroll
        for (int t = 0; t < N; ++t) v[t] = t < remaining ? ptr[t * stride] : R::zero();
    }
}

// Bits equal, or both NaN: the term that gave an accumulator its value.
template <class T>
__device__ __forceinline__ bool same_term(T term, T acc) {
    if constexpr (IsInt<T>::value) return term == acc;
    else return bits(term) == bits(acc) || (term != term && acc != acc);
}

// The argmax rescans: the block's (result bits, slice) pairs lie in shared memory (`table`); each
// result looks in its recorded slice of BK terms for the first k whose term equals it, from global
// memory, and stores that k (-1 where no slice changed the result). Threads take consecutive
// columns, so that the loads of B and the stores of argmax coalesce where they can.
//
// rescan_each (the Tiled kernels, slices of 16): all 2 * BK loads of a result in flight at once.
template <class R, class T, int BM, int BN, int BK, int THREADS, class Table>
__device__ __forceinline__ void rescan_each(const TgGemmParams& p, long long b, long long m0, long long n0, long long K,
                                            const Table* table) {
    const long long M = p.m, N = p.n;
#pragma unroll 1
    for (int o = threadIdx.x; o < BM * BN; o += THREADS) {
        const long long row = m0 + o / BN, col = n0 + o % BN;
        if (row >= M || col >= N) continue;
        const int2 entry = reinterpret_cast<const int2*>(table)[o];
        int found = entry.y;
        if (found >= 0) {
            const long long k0 = static_cast<long long>(found) * BK;
            const T* const pa = element<const T>(p.a, b, row, k0);
            const T* const pb = element<const T>(p.b, b, k0, col);
            T ta[BK], tb[BK];
#pragma unroll
            for (int t = 0; t < BK; ++t) {
                const bool inside = k0 + t < K;
                ta[t] = inside ? pa[t * p.a.col_stride] : R::zero();
                tb[t] = inside ? pb[t * p.b.row_stride] : R::zero();
            }
            found = -1;
#pragma unroll
            for (int t = BK - 1; t >= 0; --t) {
                const T term = R::times(R::stage(ta[t]), R::stage(tb[t]));
                if (k0 + t < K && same_term(term, from_bits(entry.x, T()))) found = static_cast<int>(k0 + t);
            }
        }
        *element<int>(p.argmax, b, row, col) = found;
    }
}

// rescan_runs (the Batched argmax kernels, slices of 8 for a short K, where the rescan is a large
// share of the work): each operand's run of the slice with 128-bit loads where it is contiguous
// along k, else a pointer walk, and bounds checks only in the last slice. On the H200 this was 10 to
// 23% faster there than rescan_each, and up to 17% slower in the Tiled kernels (bench/NOTES.md).
template <class R, class T, int BM, int BN, int BK, int THREADS, class Table>
__device__ __forceinline__ void rescan_runs(const TgGemmParams& p, long long b, long long m0, long long n0, long long K,
                                            const Table* table) {
    const long long M = p.m, N = p.n;
#pragma unroll 1
    for (int o = threadIdx.x; o < BM * BN; o += THREADS) {
        const long long row = m0 + o / BN, col = n0 + o % BN;
        if (row >= M || col >= N) continue;
        const int2 entry = reinterpret_cast<const int2*>(table)[o];
        int found = -1;
        if (entry.y >= 0) {
            const long long k0 = static_cast<long long>(entry.y) * BK, inside = K - k0;
            T ta[BK], tb[BK];
            load_run<R>(ta, element<const T>(p.a, b, row, k0), p.a.col_stride, inside);
            load_run<R>(tb, element<const T>(p.b, b, k0, col), p.b.row_stride, inside);
            const T value = from_bits(entry.x, T());
#pragma unroll
            for (int t = BK - 1; t >= 0; --t) {
                const T term = R::times(R::stage(ta[t]), R::stage(tb[t]));
                if (t < inside && same_term(term, value)) found = static_cast<int>(k0 + t);
            }
        }
        *element<int>(p.argmax, b, row, col) = found;
    }
}

}  // namespace tg
