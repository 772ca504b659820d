// tropical-gemm's device code, a piece before main_loop.cuh: the argmax rescans of the tiled main
// loop, and the Serial kernels' merge. For 32-bit types the main loop records, per result, the last
// slice of BK terms that changed it; the rescans find, in that slice, the first k whose term equals
// the result: after the loop from global memory (rescan_each), or at the end of each chunk of K from
// shared memory (rescan_panel). merge_serial combines the (value, k) pairs of blocks that computed
// parts of K for the same tile.

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

// Two (value, k) pairs of one result from different k: the better value, and on equal values the
// smaller k, where -1 (no term beat the zero) is the largest; NaN as `beats` says. (acc, arg) becomes
// the winner.
template <class R, class T>
__device__ __forceinline__ void merge_tracked(T& acc, int& arg, T other, int other_arg) {
    const bool tie_won = !R::beats(acc, other) && static_cast<unsigned>(other_arg) < static_cast<unsigned>(arg);
    if (R::beats(other, acc) || tie_won) {
        acc = other;
        arg = other_arg;
    }
}

// A 16-byte load from L2, where other blocks' merges left their stores, never from a line this
// multiprocessor's L1 kept.
template <class T>
__device__ __forceinline__ Vec16<T> load_from_l2(const T* at) {
    static_assert(sizeof(T) == 4, "four 32-bit words");
    const int4 w = __ldcg(reinterpret_cast<const int4*>(at));
    Vec16<T> v;
    v.v[0] = from_bits(w.x, T()), v.v[1] = from_bits(w.y, T()), v.v[2] = from_bits(w.z, T()),
    v.v[3] = from_bits(w.w, T());
    return v;
}

// merge_serial (the Serial argmax kernels: each block computes a tile over one chunk of K, starting
// at k_begin): the block's (value, k) pairs merge into C and argmax, which start as the zero and -1,
// one block at a time per tile. The tile's first argmax element is its lock: a block takes it by
// swapping in kTgTileLocked (the value it takes out is that element's argmax so far, and thread 0,
// which owns that result, keeps it), merges, and gives it back by writing that element's merged
// argmax last, after every thread's stores are visible. Merging is commutative and associative (a
// total order on pairs), so the blocks may come in any order; a block holds the lock only while it
// runs, so a waiting block never waits on one that has not started.
template <class R, class T, int TM, int TN, int GROUP_M, int GROUP_N>
__device__ __forceinline__ void merge_serial(const TgGemmParams& p, long long b, long long m0, long long n0, int row0,
                                             int col0, bool vec, const T (&acc)[TM][TN], const int (&arg)[TM][TN],
                                             long long k_begin) {
    constexpr int VEC = 16 / sizeof(T);
    static_assert(VEC == 4, "32-bit results: an argmax vector per C vector");
    int* const lock = element<int>(p.argmax, b, m0, n0);
    const bool owner = threadIdx.x == 0;  // its results' first is the tile's first (row0 = col0 = 0)
    int first = 0;                        // owner: the argmax of the tile's first result
    if (owner) {
        while ((first = atomicExch(lock, kTgTileLocked)) == kTgTileLocked) __nanosleep(100);
        __threadfence();
    }
    __syncthreads();
    const long long M = p.m, N = p.n;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const long long row = m0 + (i / VEC) * GROUP_M + row0 + i % VEC;
        if (row >= M) continue;
#pragma unroll
        for (int g = 0; g < TN / VEC; ++g) {
            const long long col = n0 + g * GROUP_N + col0;
            T value[VEC];
            int k[VEC];
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
                value[e] = R::finish(acc[i][g * VEC + e]);
                const int local = panel_argmax(arg[i][g * VEC + e]);
                k[e] = local < 0 ? -1 : static_cast<int>(k_begin + local);
            }
            // The tile's first result: its argmax so far is the one the lock took out.
            const bool first_here = owner && i == 0 && g == 0;
            if (vec && col + VEC <= N) {
                T* const c = element<T>(p.c, b, row, col);
                int* const a = element<int>(p.argmax, b, row, col);
                Vec16<T> cv = load_from_l2(c);
                Vec16<int> av = load_from_l2(a);
                if (first_here) av.v[0] = first;
#pragma unroll
                for (int e = 0; e < VEC; ++e) merge_tracked<R>(cv.v[e], av.v[e], value[e], k[e]);
                if (first_here) first = av.v[0], av.v[0] = kTgTileLocked;  // given back last
                *reinterpret_cast<Vec16<T>*>(c) = cv;
                *reinterpret_cast<Vec16<int>*>(a) = av;
                continue;
            }
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
                if (col + e >= N) continue;
                T* const c = element<T>(p.c, b, row, col + e);
                int* const a = element<int>(p.argmax, b, row, col + e);
                T cv = __ldcg(c);
                int av = first_here && e == 0 ? first : __ldcg(a);
                merge_tracked<R>(cv, av, value[e], k[e]);
                *c = cv;
                if (first_here && e == 0) first = av;
                else *a = av;
            }
        }
    }
    __threadfence();
    __syncthreads();
    if (owner) atomicExch(lock, first);
}

}  // namespace tg
