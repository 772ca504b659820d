// tropical-gemm's device code, the piece after logplus_factored.cuh: the Tiled f32 LogPlus gradients,
// which factor a tile where its values allow (with logplus_factored.cuh's scan, statistics and staged
// exponentials) and take logplus_backward.cuh's straight loop where they do not.

namespace tg {

// The gradients (kernels/logplus_backward.cuh's out[p,q] = sum_r G[p,r] 2^((O[r,q] - Cv[p,r]) log2(e) +
// S[p,q] log2(e))) factor the same way: with c_p the smallest finite Cv[p,r] of row p and o_q the
// largest finite O[r,q] of column q (base 2),
//     out[p,q] = 2^(S[p,q] log2(e) - c_p + o_q) * sum_r W[p,r] EO[r,q],
//     W[p,r] = G[p,r] 2^(c_p - Cv[p,r] log2(e)),   EO[r,q] = 2^(O[r,q] log2(e) - o_q),
// a plain sum of products (G signed, as the straight loop sums it), with W and EO formed as they are
// staged (G and Cv must then share a staging map: the same layout), and the factor in front applied
// once per result by an exact power of two (ldexp) and an ex2 of its fraction. Factored where G is
// finite, no Cv, O or S is NaN or +inf, |values| <= 2^100, and the widest row of Cv and column of O
// span at most kFactorSpan together; C = -inf weighs 0 as in the straight loop (its W is 0).
template <class Cfg, int THREADS>
__device__ __forceinline__ bool factor_gradient_tile(const TgLogBackwardParams& p, long long b, long long m0,
                                                     long long n0, FactorStats<Cfg::bm, Cfg::bn>& st) {
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk;
    static_assert(THREADS >= BM + BN, "a thread per row and column");
    using StageP = Stager<float, BM, BK, THREADS>;
    using StageQ = Stager<float, BN, BK, THREADS>;
    const float* const g_batch = element<float>(p.g, b, 0, 0);
    const float* const c_batch = element<float>(p.c, b, 0, 0);
    const float* const o_batch = element<float>(p.other, b, 0, 0);
    const bool c_along = StageP::k_along(p.c.row_stride, p.c.col_stride);
    if (StageP::k_along(p.g.row_stride, p.g.col_stride) != c_along) return false;  // (the same in every thread)
    const bool fast_tile = StageP::vec_ok(g_batch, p.g.row_stride, p.g.col_stride) &&
                           StageP::vec_ok(c_batch, p.c.row_stride, p.c.col_stride) &&
                           StageQ::vec_ok(o_batch, p.other.col_stride, p.other.row_stride) && m0 + BM <= p.p &&
                           n0 + BN <= p.q;
    factor_begin(st);
    // The tile's own elements S: a NaN or +inf is the straight loop's.
    bool bad = false;
    for (int e = static_cast<int>(threadIdx.x); e < BM * BN; e += THREADS) {
        const long long row = m0 + e / BN, col = n0 + e % BN;
        if (row < p.p && col < p.q) {
            const float s = *element<const float>(p.self, b, row, col);
            bad = bad || !(s < infinity(0.0f)) || !(s <= kFactorMagnitude);
        }
    }
    StageP fg(g_batch, p.g.row_stride, p.g.col_stride, m0);
    StageP fc(c_batch, p.c.row_stride, p.c.col_stride, m0);
    StageQ fo(o_batch, p.other.col_stride, p.other.row_stride, n0);
    PanelScan<StageP> scan_c;
    PanelScan<StageQ> scan_o;
    const long long slices = (p.r + BK - 1) / BK;
    for (long long s0 = 0; s0 < slices; s0 += 4) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const long long s = s0 + u;
            const bool fast = fast_tile && (s + 1) * BK <= p.r;
            Vec16<float> vg[StageP::VECS], vc[StageP::VECS], vo[StageQ::VECS];
            fg.template fetch<GradientPad<float>>(vg, fast, p.g.row_stride, p.g.col_stride, p.p - m0, p.r - s * BK);
            fc.template fetch<LogRing<float>>(vc, fast, p.c.row_stride, p.c.col_stride, p.p - m0, p.r - s * BK);
            fo.template fetch<LogRing<float>>(vo, fast, p.other.col_stride, p.other.row_stride, p.q - n0, p.r - s * BK);
            fg.next_stage(p.g.col_stride);
            fc.next_stage(p.c.col_stride);
            fo.next_stage(p.other.row_stride);
#pragma unroll
            for (int r = 0; r < StageP::VECS; ++r)
#pragma unroll
                for (int e = 0; e < StageP::VEC; ++e) bad = bad || !(fabsf(vg[r].v[e]) < infinity(0.0f));
            bad = scan_c.add(vc) || bad;
            bad = scan_o.add(vo) || bad;
        }
        if (__syncthreads_or(bad || scan_c.too_wide() || scan_o.too_wide())) return false;
    }
    scan_c.publish(c_along, st.hi, st.lo);
    scan_o.publish(StageQ::k_along(p.other.col_stride, p.other.row_stride), st.hi + BM, st.lo + BM);
    return factor_vote<BM, BN, true>(st, bad);
}

// The factored gradient tile: W and EO staged, one FFMA per term, the factor in front per result.
// Ends with a barrier.
template <class Cfg, int THREADS>
__device__ __forceinline__ void factored_gradient_tile(const TgLogBackwardParams& p, long long b, long long m0,
                                                       long long n0, const float* ref, Vec16<float>* smem) {
    using T = float;
    using C = LogConstants<T>;
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, TM = Cfg::tm, TN = Cfg::tn;
    constexpr int VEC = 4;
    static_assert(TM % VEC == 0 && TN % VEC == 0, "fragments are read in 128-bit pieces");
    using StageP = Stager<T, BM, BK, THREADS>;
    using StageQ = Stager<T, BN, BK, THREADS>;
    constexpr int LDP = StageP::LD, LDQ = StageQ::LD;
    constexpr int GROUP_M = BM / (TM / VEC), GROUP_N = BN / (TN / VEC);
    T* const tile_w = smem[0].v;
    T* const tile_e = tile_w + 2 * BK * LDP;
    const int tid = static_cast<int>(threadIdx.x);
    const int tx = tid % (BN / TN), ty = tid / (BN / TN);
    const long long P = p.p, Q = p.q, R = p.r;
    const long long slices = (R + BK - 1) / BK;
    const T* const g_batch = element<T>(p.g, b, 0, 0);
    const T* const c_batch = element<T>(p.c, b, 0, 0);
    const T* const o_batch = element<T>(p.other, b, 0, 0);
    const bool p_along = StageP::k_along(p.c.row_stride, p.c.col_stride);  // G's too (factor_gradient_tile)
    const bool o_along = StageQ::k_along(p.other.col_stride, p.other.row_stride);
    const bool fast_tile = StageP::vec_ok(g_batch, p.g.row_stride, p.g.col_stride) &&
                           StageP::vec_ok(c_batch, p.c.row_stride, p.c.col_stride) &&
                           StageQ::vec_ok(o_batch, p.other.col_stride, p.other.row_stride) && m0 + BM <= P &&
                           n0 + BN <= Q;
    StageP sg(g_batch, p.g.row_stride, p.g.col_stride, m0);
    StageP sc(c_batch, p.c.row_stride, p.c.col_stride, m0);
    StageQ so(o_batch, p.other.col_stride, p.other.row_stride, n0);
    Vec16<T> rg[StageP::VECS], rc[StageP::VECS], ro[StageQ::VECS];
    auto fetch = [&](long long s) {
        const bool fast = fast_tile && (s + 1) * BK <= R;
        sg.template fetch<GradientPad<T>>(rg, fast, p.g.row_stride, p.g.col_stride, P - m0, R - s * BK);
        sc.template fetch<ResultPad<T>>(rc, fast, p.c.row_stride, p.c.col_stride, P - m0, R - s * BK);
        so.template fetch<GradientPad<T>>(ro, fast, p.other.col_stride, p.other.row_stride, Q - n0, R - s * BK);
    };
    // W = G 2^(c_p - Cv log2(e)), with C = -inf (and the padding) staged as +inf: W = 0.
    auto stash = [&](int buf) {
        T* const tile = tile_w + buf * BK * LDP;
#pragma unroll
        for (int r = 0; r < StageP::VECS; ++r) {
            int o, k;
            StageP::place(p_along, r, o, k);
            Vec16<T> w;
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                w.v[e] =
                    rg[r].v[e] * exp2_term(fmaf(-ResultPad<T>::stage(rc[r].v[e]), C::log2e, ref[p_along ? o : o + e]));
            if (p_along) {
#pragma unroll
                for (int e = 0; e < VEC; ++e) tile[sc.smem[r] + e * LDP] = w.v[e];
            } else {
                *reinterpret_cast<Vec16<T>*>(tile + sc.smem[r]) = w;
            }
        }
        stash_exponentials(so, tile_e + buf * BK * LDQ, ro, o_along, ref + BM);
        sg.next_stage(p.g.col_stride);
        sc.next_stage(p.c.col_stride);
        so.next_stage(p.other.row_stride);
    };
    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    fetch(0);
    stash(0);
    __syncthreads();
    for (long long s = 0; s < slices; ++s) {
        const int buf = static_cast<int>(s & 1);
        fetch(s + 1);
        const T* const w_buf = tile_w + buf * BK * LDP + ty * VEC;
        const T* const e_buf = tile_e + buf * BK * LDQ + tx * VEC;
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            T fw[TM], fe[TN];
            load_fragment<T, TM, GROUP_M>(fw, w_buf + kk * LDP);
            load_fragment<T, TN, GROUP_N>(fe, e_buf + kk * LDQ);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(fw[i], fe[j], acc[i][j]);
        }
        stash(buf ^ 1);
        __syncthreads();
    }
    // out = acc 2^E, E = S log2(e) - c_p + o_q: an exact power of two and the ex2 of E's fraction (E
    // clamped far beyond float's range, where the result is 0 or overflows as the sum says).
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = (i / VEC) * GROUP_M + ty * VEC + i % VEC;
        if (m0 + r >= P) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int q = (j / VEC) * GROUP_N + tx * VEC + j % VEC;
            if (n0 + q >= Q) continue;
            const T self = *element<const T>(p.self, b, m0 + r, n0 + q);
            const T e = fminf(fmaxf(fmaf(self, C::log2e, -ref[r]) + ref[BM + q], -400.0f), 400.0f);
            const T whole = floorf(e);
            const T v = ldexpf(acc[i][j] * exp2_term(e - whole), static_cast<int>(whole));
            T* const out = element<T>(p.out, b, m0 + r, n0 + q);
            *out = p.accumulate ? *out + v : v;
        }
    }
    __syncthreads();
}

template <class Cfg, int THREADS>
__device__ __forceinline__ void logplus_gradient_factored(const TgLogBackwardParams& p) {
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, VEC = 4;
    static_assert(Cfg::sk == BK && Cfg::threads == THREADS, "one k group");
    constexpr int FACTORED = 2 * BK * (BM + VEC + BN + VEC) / VEC;
    constexpr int STRAIGHT = LogGradientShared<Cfg, float, 1>::vecs;
    __shared__ Vec16<float> smem[FACTORED > STRAIGHT ? FACTORED : STRAIGHT];
    __shared__ FactorStats<BM, BN> stats;
    for_each_tile<BM, BN>(p.batch, p.p, p.q, [&](long long b, long long m0, long long n0) {
        if (factor_gradient_tile<Cfg, THREADS>(p, b, m0, n0, stats))
            factored_gradient_tile<Cfg, THREADS>(p, b, m0, n0, stats.ref, smem);
        else log_gradient_tile<Cfg, float, 1, THREADS>(p, b, m0, n0, smem);  // (ends with a barrier)
    });
}

}  // namespace tg
