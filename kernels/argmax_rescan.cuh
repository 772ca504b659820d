// tropical-gemm's device code, the piece before main_loop.cuh: the argmax rescans of the tiled main
// loop. For 32-bit types the main loop records, per result, the last slice of BK terms that changed
// it; these find, in that slice, the first k whose term equals the result: after the loop from global
// memory (rescan_each), or at the end of each chunk of K from shared memory (rescan_panel).

namespace tg {

// Bits equal, or both NaN: the term that gave an accumulator its value.
template <class T>
__device__ __forceinline__ bool same_term(T term, T acc) {
    if constexpr (IsInt<T>::value) return term == acc;
    else return bits(term) == bits(acc) || (term != term && acc != acc);
}

// rescan_each (the Tiled kernels, slices of 16): the block's (result bits, slice) pairs lie in shared
// memory (`table`); each result looks in its recorded slice of BK terms for the first k whose term
// equals it, from global memory, and stores that k (-1 where no slice changed the result). Threads
// take consecutive columns, so that the loads of B and the stores of argmax coalesce where they can.
// All 2 * BK loads of a result are in flight at once.
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

// rescan_panel (the Batched argmax kernels, slices of 8 for a short K): the block keeps the slices of
// a chunk of K resident in shared memory (the panel, kTgPanelSlices slices at most; see gemm's PANEL),
// so that at the end of each chunk a thread rescans its own results whose recorded slice lies in it,
// from registers and the panel, without a table, a barrier or a global load. A k found is recorded
// as -2 - k, which tells it apart from the slices (>= 0) that later chunks record, and from -1.
// Unlike the global rescans it needs no bound on k: padding beyond K (pad (x) pad) never beats an
// accumulator, so the recorded slice's first term equal to the result is always one inside K.
template <class R, class T, int TM, int TN, int GROUP_M, int GROUP_N, int BK, int LDA, int LDB, int SLICE>
__device__ __forceinline__ void rescan_panel(const T (&acc)[TM][TN], int (&arg)[TM][TN], const T* panel, int row0,
                                             int col0) {
    constexpr int VEC = 16 / sizeof(T);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int s = arg[i][j];
            if (s < 0) continue;
            const T* const slice = panel + (s % kTgPanelSlices) * SLICE;
            const T* const pa = slice + (i / VEC) * GROUP_M + row0 + i % VEC;
            const T* const pb = slice + BK * LDA + (j / VEC) * GROUP_N + col0 + j % VEC;
            int found = -1;
#pragma unroll
            for (int t = BK - 1; t >= 0; --t)
                if (same_term(R::times(pa[t * LDA], pb[t * LDB]), acc[i][j])) found = t;
            arg[i][j] = found < 0 ? -1 : -2 - (s * BK + found);
        }
}

// The argmax a result's arg stands for once rescan_panel has run: -2 - k for k, -1 for none.
__device__ __forceinline__ int panel_argmax(int arg) { return arg <= -2 ? -2 - arg : -1; }

}  // namespace tg
