// tropical-gemm's device code, the piece after logplus.cuh: LogPlus's gradients, for its BackwardA
// and BackwardB rows of kernels/catalogue.def.
//
// grad_A[i,k] = sum_j grad_C[i,j] * exp(A[i,k] + B[k,j] - C[i,j]) is a product of its own: out (P x Q)
// from G and Cv (P x R) and O (R x Q), with the output's own element S[p,q] in each term:
//     out[p,q] = sum_r G[p,r] * 2^((O[r,q] - Cv[p,r]) log2(e) + S[p,q] log2(e))
// grad_A is P = M, Q = K, R = N with G = grad_C, Cv = C, O = B^T, S = A; grad_B^T is P = N, Q = K, R = M
// with G = grad_C^T, Cv = C^T, O = A, S = B^T (src/gemm/plan.cpp transposes by strides). The softmax
// weights are never stored: one ex2 per term, as in the forward.
//
// The weights are exactly the reference's, exp(term - C) as IEEE computes it (a term of -inf weighs 0,
// anything against C = NaN is NaN, a term of +inf against C = +inf is NaN) but 0 where C = -inf
// (every term of it is -inf): such a C is staged as +inf, so that every weight of that (p, r) is
// 2^-inf. The padding past R stages C as +inf too.

namespace tg {

// The staging of the three operands: G and O pad with 0, Cv with +inf (a padded r weighs 0).
template <class T>
struct GradientPad {
    static __device__ __forceinline__ T zero() { return T(0); }
    static __device__ __forceinline__ T stage(T x) { return x; }
};
template <class T>
struct ResultPad {
    static __device__ __forceinline__ T zero() { return infinity(T()); }
    static __device__ __forceinline__ T stage(T x) { return x == -infinity(T()) ? infinity(T()) : x; }
};

// The shared memory of log_gradient_tile: three double-buffered operands, or the k groups' merge.
template <class Cfg, class T, int K_GROUPS>
struct LogGradientShared {
    static constexpr int VEC = 16 / sizeof(T);
    static constexpr int TILE_VECS = 2 * Cfg::bk * (2 * (Cfg::bm + VEC) + Cfg::bn + VEC) / VEC;
    static constexpr int RESULTS = Cfg::threads * Cfg::tm * Cfg::tn;  // of a k group
    static constexpr int MERGE_VECS = K_GROUPS > 1 ? (K_GROUPS / 2) * RESULTS / VEC : 0;
    static constexpr int vecs = TILE_VECS > MERGE_VECS ? TILE_VECS : MERGE_VECS;
};

// One BM x BN tile of out (rows from m0, columns from n0, of batch b): one ex2 per term. Ends with a
// barrier, so that the caller's next tile may reuse smem.
template <class Cfg, class T, int K_GROUPS, int THREADS>
__device__ __forceinline__ void log_gradient_tile(const TgLogBackwardParams& p, long long b, long long m0, long long n0,
                                                  Vec16<T>* smem) {
    using C = LogConstants<T>;
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, SK = Cfg::sk, TM = Cfg::tm, TN = Cfg::tn;
    static_assert(BK == SK * K_GROUPS && Cfg::threads * K_GROUPS == THREADS, "each k group takes sk of a slice");
    constexpr int VEC = 16 / sizeof(T);
    static_assert(TM % VEC == 0 && TN % VEC == 0, "fragments are read in 128-bit pieces");
    using StageP = Stager<T, BM, BK, THREADS>;  // G and Cv: P x R
    using StageQ = Stager<T, BN, BK, THREADS>;  // O: R x Q
    constexpr int LDP = StageP::LD, LDQ = StageQ::LD;
    constexpr int GROUP_M = BM / (TM / VEC), GROUP_N = BN / (TN / VEC);
    static_assert(K_GROUPS == 1 || (K_GROUPS & (K_GROUPS - 1)) == 0, "k groups merge in halves");
    T* const tile_g = smem[0].v;
    T* const tile_c = tile_g + 2 * BK * LDP;
    T* const tile_o = tile_c + 2 * BK * LDP;

    const int group = static_cast<int>(threadIdx.x) / Cfg::threads;
    const int local = static_cast<int>(threadIdx.x) % Cfg::threads;
    const int tx = local % (BN / TN), ty = local / (BN / TN);
    const long long P = p.p, Q = p.q, R = p.r;
    const long long slices = (R + BK - 1) / BK;
    const T* const g_batch = element<T>(p.g, b, 0, 0);
    const T* const c_batch = element<T>(p.c, b, 0, 0);
    const T* const o_batch = element<T>(p.other, b, 0, 0);
    const bool g_along = StageP::k_along(p.g.row_stride, p.g.col_stride);
    const bool c_along = StageP::k_along(p.c.row_stride, p.c.col_stride);
    const bool o_along = StageQ::k_along(p.other.col_stride, p.other.row_stride);
    const bool vec = StageP::vec_ok(g_batch, p.g.row_stride, p.g.col_stride) &&
                     StageP::vec_ok(c_batch, p.c.row_stride, p.c.col_stride) &&
                     StageQ::vec_ok(o_batch, p.other.col_stride, p.other.row_stride);
    StageP sg(g_batch, p.g.row_stride, p.g.col_stride, m0);
    StageP sc(c_batch, p.c.row_stride, p.c.col_stride, m0);
    StageQ so(o_batch, p.other.col_stride, p.other.row_stride, n0);
    const bool fast_tile = vec && m0 + BM <= P && n0 + BN <= Q;
    Vec16<T> rg[StageP::VECS], rc[StageP::VECS], ro[StageQ::VECS];
    auto fetch = [&](long long s) {
        const bool fast = fast_tile && (s + 1) * BK <= R;
        sg.template fetch<GradientPad<T>>(rg, fast, p.g.row_stride, p.g.col_stride, P - m0, R - s * BK);
        sc.template fetch<ResultPad<T>>(rc, fast, p.c.row_stride, p.c.col_stride, P - m0, R - s * BK);
        so.template fetch<GradientPad<T>>(ro, fast, p.other.col_stride, p.other.row_stride, Q - n0, R - s * BK);
    };
    auto stash = [&](int buf) {
        sg.template stash<GradientPad<T>, false>(tile_g + buf * BK * LDP, rg, g_along);
        sc.template stash<ResultPad<T>, true>(tile_c + buf * BK * LDP, rc, c_along);
        so.template stash<GradientPad<T>, false>(tile_o + buf * BK * LDQ, ro, o_along);
        sg.next_stage(p.g.col_stride);
        sc.next_stage(p.c.col_stride);
        so.next_stage(p.other.row_stride);
    };

    // Each result's own element, in base 2 (-inf outside the output: never stored).
    T self[TM][TN], acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const long long row = m0 + (i / VEC) * GROUP_M + ty * VEC + i % VEC;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const long long col = n0 + (j / VEC) * GROUP_N + tx * VEC + j % VEC;
            self[i][j] = row < P && col < Q ? *element<const T>(p.self, b, row, col) * C::log2e : -infinity(T());
            acc[i][j] = T(0);
        }
    }
    fetch(0);
    stash(0);
    __syncthreads();
    for (long long s = 0; s < slices; ++s) {
        const int buf = static_cast<int>(s & 1);
        fetch(s + 1);
        const T* const g_buf = tile_g + buf * BK * LDP + group * SK * LDP + ty * VEC;
        const T* const c_buf = tile_c + buf * BK * LDP + group * SK * LDP + ty * VEC;
        const T* const o_buf = tile_o + buf * BK * LDQ + group * SK * LDQ + tx * VEC;
#pragma unroll
        for (int kk = 0; kk < SK; ++kk) {
            T fg[TM], fc[TM], fo[TN];
            load_fragment<T, TM, GROUP_M>(fg, g_buf + kk * LDP);
            load_fragment<T, TM, GROUP_M>(fc, c_buf + kk * LDP);
            load_fragment<T, TN, GROUP_N>(fo, o_buf + kk * LDQ);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] = fma(fg[i], exp2_term(fma(fo[j] - fc[i], C::log2e, self[i][j])), acc[i][j]);
        }
        stash(buf ^ 1);
        __syncthreads();
    }
    if constexpr (K_GROUPS > 1) {
        T* const merge = smem[0].v;
#pragma unroll 1
        for (int half = K_GROUPS / 2; half >= 1; half /= 2) {
            if (group >= half && group < 2 * half) {
                T* const out = merge + ((group - half) * Cfg::threads + local) * TM * TN;
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) out[i * TN + j] = acc[i][j];
            }
            __syncthreads();
            if (group < half) {
                const T* const in = merge + (group * Cfg::threads + local) * TM * TN;
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i][j] += in[i * TN + j];
            }
            __syncthreads();
        }
    }
    if (group == 0) {
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const long long row = m0 + (i / VEC) * GROUP_M + ty * VEC + i % VEC;
            if (row >= P) continue;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const long long col = n0 + (j / VEC) * GROUP_N + tx * VEC + j % VEC;
                if (col >= Q) continue;
                T* const out = element<T>(p.out, b, row, col);
                *out = p.accumulate ? *out + acc[i][j] : acc[i][j];
            }
        }
    }
    __syncthreads();
}

template <class Cfg, class T, int K_GROUPS, int THREADS>
__device__ __forceinline__ void logplus_gradient(const TgLogBackwardParams& p) {
    __shared__ Vec16<T> smem[LogGradientShared<Cfg, T, K_GROUPS>::vecs];
    for_each_tile<Cfg::bm, Cfg::bn>(p.batch, p.p, p.q, [&](long long b, long long m0, long long n0) {
        log_gradient_tile<Cfg, T, K_GROUPS, THREADS>(p, b, m0, n0, smem);
    });
}

}  // namespace tg
