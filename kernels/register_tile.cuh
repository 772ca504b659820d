// tropical-gemm's device code, the piece before main_loop.cuh (after argmax_rescan.cuh): one
// thread's register tile of the tiled main loop. A thread owns TM x TN results; its rows (and
// columns) come in groups of VEC adjacent elements, GROUP_M (GROUP_N) apart, read with 128-bit
// shared loads that fall in distinct banks. k_step and track_term also serve the Small, Tiny,
// SplitK, Vector and Column kernels.

namespace tg {
// A thread's N values of one k row of a staged tile: groups of VEC adjacent elements, GROUP apart,
// each group one 128-bit shared load.
template <class T, int N, int GROUP>
__device__ __forceinline__ void load_fragment(T (&f)[N], const T* row) {
    constexpr int VEC = 16 / sizeof(T);
#pragma unroll
    for (int g = 0; g < N / VEC; ++g) {
        const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(row + g * GROUP);
#pragma unroll
        for (int e = 0; e < VEC; ++e) f[g * VEC + e] = v.v[e];
    }
}

// One term a (x) b added to a result that tracks its argmax: acc = acc (+) a (x) b, and arg = k where
// the term beats acc (strictly better, or the first NaN), so that arg ends as the smallest k that
// attains the result. The operands come staged (no -0 from a float input).
template <class R, class T>
__device__ __forceinline__ void track_term(T a, T b, T& acc, int& arg, int k) {
    if constexpr (sizeof(T) == 4) {
        // One mac and one compare: for 32-bit types the accumulator's bits change exactly when the
        // term beats it. Staging leaves no -0 term but MaxMul's out-of-domain 0 * -x, and FMNMX
        // keeps the +0 accumulator then.
        const T n = R::mac(a, b, acc);
        if (bits(n) != bits(acc)) arg = k;
        acc = n;
    } else {
        const T t = R::times(a, b);
        if (R::beats(t, acc)) {
            acc = t;
            arg = k;
        }
    }
}

// One k step of the register tile: acc[i][j] = acc[i][j] (+) A[row_i, k] (x) B[k, col_j].
template <class R, class T, int TM, int TN, int GROUP_M, int GROUP_N, bool ARGMAX, bool ORDERED = false>
__device__ __forceinline__ void k_step(T (&acc)[TM][TN], int (&arg)[TM][TN], const T* a_row, const T* b_row, int k) {
    T fa[TM], fb[TN];
    load_fragment<T, TM, GROUP_M>(fa, a_row);
    load_fragment<T, TN, GROUP_N>(fb, b_row);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            if constexpr (ARGMAX) {
                track_term<R>(fa[i], fb[j], acc[i][j], arg[i][j], k);
            } else if constexpr (ORDERED) {
                acc[i][j] = R::mac_ordered(fa[i], fb[j], acc[i][j]);
            } else {
                acc[i][j] = R::mac(fa[i], fb[j], acc[i][j]);
            }
        }
}

// The same for the argmax of 32-bit types: a slice's own accumulators, whose first term needs no
// (+) (so that the tracking costs nothing per term).
template <class R, class T, int TM, int TN, int GROUP_M, int GROUP_N, bool FIRST>
__device__ __forceinline__ void k_step_slice(T (&sacc)[TM][TN], const T* a_row, const T* b_row) {
    T fa[TM], fb[TN];
    load_fragment<T, TM, GROUP_M>(fa, a_row);
    load_fragment<T, TN, GROUP_N>(fb, b_row);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) sacc[i][j] = FIRST ? R::times(fa[i], fb[j]) : R::mac(fa[i], fb[j], sacc[i][j]);
}

}  // namespace tg
