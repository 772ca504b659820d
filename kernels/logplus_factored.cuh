// tropical-gemm's device code, the piece after logplus_backward.cuh: the Tiled f32 LogPlus product,
// which factors a tile where its values allow and takes logplus.cuh's straight loop where it does not
// (kernels/logplus_factored_backward.cuh does the same for the gradients, with the pieces here).
//
// exp(A[i,k] + B[k,j]) = 2^(A[i,k] log2(e) - a_i) * 2^(B[k,j] log2(e) - b_j) * 2^(a_i + b_j), so that with
// a_i the largest A[i,k] of row i (in base 2) and b_j the largest B[k,j] of column j, C[i,j] =
// (a_i + b_j + log2 sum_k EA[i,k] EB[k,j]) ln 2: a plain sum of products, one FFMA per term, of
// operands each turned into its exponential once as it is staged. That is exact, not a guess, when no
// product EA EB under- or overflows. Before its main loop the block reads its panels of A and B once
// (each row's and column's largest and smallest finite value, and whether a NaN or +inf is there) and
// factors the tile when
//   - no value is NaN or +inf (their semantics are the straight loop's),
//   - every finite |value| is at most 2^100 (references and their sums stay far inside float's range;
//     the exponent's argument x log2(e) - a_i is one FMA, rounded once whatever |x| is),
//   - the widest row of A and the widest column of B together span at most kFactorSpan (96 in base 2,
//     about 66 in natural units: values within +-15 or so): each exponential and each product is then
//     at least 2^-97, a normal float, so every term keeps its 24 bits, and at most 2^0.5 (no sum of K
//     terms overflows).
// -inf (the zero) gives the exponential +0 and needs no care; a row with no finite value takes 0 as
// its reference and gives a sum of zeros, -inf. Otherwise the tile runs logplus.cuh's straight loop
// (the same tile and threads), so the result of a tile is always that of one exact method. The scan
// reads four slices of both panels at a time and stops at the first sign that the tile cannot be
// factored, so the straight loop's data pays little for it.
//
// Rounding, for the README's bound (1e-5 max(1, |C|) at K <= 8192): a term's two arguments are
// rounded once each, together at most 2^-24 kFactorSpan (in base 2: 4.0e-6 in C); ex2.approx adds
// 2^-22 to each factor; the sums have three levels (32 k in FFMAs, 32 of those, the rest), 31 + 31 +
// K / 1024 roundings of 2^-24 (4.2e-6 at K = 8192); forming C rounds 2^-24 (|C| + 1) twice.

namespace tg {

constexpr float kFactorSpan = 96.0f;                // base 2: the widest row of A and column of B together
constexpr float kFactorMagnitude = 1.2676506e+30f;  // 2^100: the largest finite |value| factored

// A float's bits as an int that orders as the float does (-0 just below +0), for shared atomics.
__device__ __forceinline__ int ordered_bits(float x) {
    const int b = __float_as_int(x);
    return b >= 0 ? b : b ^ 0x7fffffff;
}
__device__ __forceinline__ float from_ordered_bits(int b) { return __int_as_float(b >= 0 ? b : b ^ 0x7fffffff); }

// One operand's panel statistics as a thread reads them through the main loop's staging map
// (coalesced in every layout): for each element position of its vectors, the largest and smallest
// finite value over the slices so far.
template <class Stage>
struct PanelScan {
    static constexpr int VECS = Stage::VECS, VEC = Stage::VEC;
    float h[VECS][VEC], l[VECS][VEC];

    __device__ __forceinline__ PanelScan() {
#pragma unroll
        for (int r = 0; r < VECS; ++r)
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
                h[r][e] = -infinity(0.0f);
                l[r][e] = infinity(0.0f);
            }
    }
    // Takes a slice's vectors; true where one holds a NaN or +inf.
    __device__ __forceinline__ bool add(const Vec16<float> (&v)[VECS]) {
        bool bad = false;
#pragma unroll
        for (int r = 0; r < VECS; ++r)
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
                const float x = v[r].v[e];
                bad = bad || !(x < infinity(0.0f));
                h[r][e] = fmaxf(h[r][e], x);
                l[r][e] = x > -infinity(0.0f) ? fminf(l[r][e], x) : l[r][e];
            }
        return bad;
    }
    // Whether the values seen already span more than a factored tile may (so the tile is not factored,
    // whatever the rest holds).
    __device__ __forceinline__ bool too_wide() const {
        bool wide = false;
#pragma unroll
        for (int r = 0; r < VECS; ++r)
#pragma unroll
            for (int e = 0; e < VEC; ++e) wide = wide || (h[r][e] - l[r][e]) * LogConstants<float>::log2e > kFactorSpan;
        return wide;
    }
    // Into hi and lo (ordered_bits, per outer index of the tile).
    __device__ __forceinline__ void publish(bool ka, int* hi, int* lo) const {
#pragma unroll
        for (int r = 0; r < VECS; ++r) {
            int o, k;
            Stage::place(ka, r, o, k);
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                if (h[r][e] >= l[r][e]) {  // a finite value
                    atomicMax(hi + (ka ? o : o + e), ordered_bits(h[r][e]));
                    atomicMin(lo + (ka ? o : o + e), ordered_bits(l[r][e]));
                }
        }
    }
};

// An outer index's reference (base 2: its largest finite value, or its smallest where `low`) from its
// statistics, and whether its values may be factored.
__device__ __forceinline__ float factor_reference(int hi_bits, int lo_bits, bool low, float& span, bool& ok) {
    const float h = from_ordered_bits(hi_bits), l = from_ordered_bits(lo_bits);
    if (!(h >= l)) {  // no finite value: every term is a zero
        span = 0.0f;
        ok = true;
        return 0.0f;
    }
    span = (h - l) * LogConstants<float>::log2e;
    ok = h <= kFactorMagnitude && l >= -kFactorMagnitude;
    return (low ? l : h) * LogConstants<float>::log2e;
}

// 2^(x log2(e) - ref) for each staged element, stored as the main loop's stash does.
template <class Stage>
__device__ __forceinline__ void stash_exponentials(const Stage& st, float* tile,
                                                   const Vec16<float> (&regs)[Stage::VECS], bool ka, const float* ref) {
    constexpr int VECS = Stage::VECS, VEC = Stage::VEC, LD = Stage::LD;
#pragma unroll
    for (int r = 0; r < VECS; ++r) {
        int o, k;
        Stage::place(ka, r, o, k);
        Vec16<float> v;
        if (ka) {
            const float base = ref[o];
#pragma unroll
            for (int e = 0; e < VEC; ++e) v.v[e] = exp2_term(fmaf(regs[r].v[e], LogConstants<float>::log2e, -base));
#pragma unroll
            for (int e = 0; e < VEC; ++e) tile[st.smem[r] + e * LD] = v.v[e];
        } else {
            const Vec16<float> base = *reinterpret_cast<const Vec16<float>*>(ref + o);
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                v.v[e] = exp2_term(fmaf(regs[r].v[e], LogConstants<float>::log2e, -base.v[e]));
            *reinterpret_cast<Vec16<float>*>(tile + st.smem[r]) = v;
        }
    }
}

// The shared memory of a factored tile: its statistics and references beside the slices.
template <int BM, int BN>
struct FactorStats {
    int hi[BM + BN];                   // A's rows, then B's columns: largest finite value (ordered_bits)
    int lo[BM + BN];                   // smallest finite value
    int spans[2];                      // the widest row of A, the widest column of B (base 2, float bits)
    __align__(16) float ref[BM + BN];  // references (base 2)
};

// Before the scans: no value seen yet. Ends with a barrier.
template <int BM, int BN>
__device__ __forceinline__ void factor_begin(FactorStats<BM, BN>& st) {
    const int tid = static_cast<int>(threadIdx.x);
    if (tid < BM + BN) {
        st.hi[tid] = ordered_bits(-infinity(0.0f));
        st.lo[tid] = ordered_bits(infinity(0.0f));
    }
    if (tid < 2) st.spans[tid] = 0;
    __syncthreads();
}

// After the scans have published: each outer index's reference (the largest finite value; the
// smallest for the first BM where FIRST_LOW), the widest span of each side, and the block's vote
// (`bad`: this thread saw a value that cannot be factored). The same answer in every thread.
template <int BM, int BN, bool FIRST_LOW>
__device__ __forceinline__ bool factor_vote(FactorStats<BM, BN>& st, bool bad) {
    __syncthreads();
    const int tid = static_cast<int>(threadIdx.x);
    if (tid < BM + BN) {
        float span;
        bool ok;
        st.ref[tid] = factor_reference(st.hi[tid], st.lo[tid], FIRST_LOW && tid < BM, span, ok);
        bad = bad || !ok;
        atomicMax(st.spans + (tid < BM ? 0 : 1), __float_as_int(span));  // (spans >= 0: their bits order)
    }
    bad = __syncthreads_or(bad) != 0;
    return !bad && __int_as_float(st.spans[0]) + __int_as_float(st.spans[1]) <= kFactorSpan;
}

// Whether the tile from (m0, n0) of batch b may be factored (the same answer in every thread); if so,
// st.ref holds its references.
template <class Cfg, int THREADS>
__device__ __forceinline__ bool factor_tile(const TgGemmParams& p, long long b, long long m0, long long n0,
                                            FactorStats<Cfg::bm, Cfg::bn>& st) {
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk;
    static_assert(THREADS >= BM + BN, "a thread per row and column");
    using StageA = Stager<float, BM, BK, THREADS>;
    using StageB = Stager<float, BN, BK, THREADS>;
    const float* const a_batch = element<float>(p.a, b, 0, 0);
    const float* const b_batch = element<float>(p.b, b, 0, 0);
    const bool fast_tile = StageA::vec_ok(a_batch, p.a.row_stride, p.a.col_stride) &&
                           StageB::vec_ok(b_batch, p.b.col_stride, p.b.row_stride) && m0 + BM <= p.m && n0 + BN <= p.n;
    factor_begin(st);
    // Four slices of both panels at a time (their loads in flight together), then a vote: a NaN, a
    // +inf or a span already too wide anywhere ends the scan (the straight loop's data pays little).
    StageA fa(a_batch, p.a.row_stride, p.a.col_stride, m0);
    StageB fb(b_batch, p.b.col_stride, p.b.row_stride, n0);
    PanelScan<StageA> scan_a;
    PanelScan<StageB> scan_b;
    bool bad = false;
    const long long slices = (p.k + BK - 1) / BK;
    for (long long s0 = 0; s0 < slices; s0 += 4) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const long long s = s0 + u;
            const bool fast = fast_tile && (s + 1) * BK <= p.k;
            Vec16<float> va[StageA::VECS], vb[StageB::VECS];
            fa.template fetch<LogRing<float>>(va, fast, p.a.row_stride, p.a.col_stride, p.m - m0, p.k - s * BK);
            fb.template fetch<LogRing<float>>(vb, fast, p.b.col_stride, p.b.row_stride, p.n - n0, p.k - s * BK);
            fa.next_stage(p.a.col_stride);
            fb.next_stage(p.b.row_stride);
            bad = scan_a.add(va) || bad;
            bad = scan_b.add(vb) || bad;
        }
        if (__syncthreads_or(bad || scan_a.too_wide() || scan_b.too_wide())) return false;
    }
    scan_a.publish(StageA::k_along(p.a.row_stride, p.a.col_stride), st.hi, st.lo);
    scan_b.publish(StageB::k_along(p.b.col_stride, p.b.row_stride), st.hi + BM, st.lo + BM);
    return factor_vote<BM, BN, false>(st, bad);
}

// The factored tile: a plain sum of products of the staged exponentials, double-buffered as in
// main_loop.cuh, in two levels of sums. Ends with a barrier.
template <class Cfg, int THREADS>
__device__ __forceinline__ void factored_tile(const TgGemmParams& p, long long b, long long m0, long long n0,
                                              const float* ref, Vec16<float>* smem) {
    using T = float;
    using R = LogRing<T>;
    using C = LogConstants<T>;
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, TM = Cfg::tm, TN = Cfg::tn;
    constexpr int VEC = 4;
    static_assert(TM % VEC == 0 && TN % VEC == 0, "fragments are read in 128-bit pieces");
    using StageA = Stager<T, BM, BK, THREADS>;
    using StageB = Stager<T, BN, BK, THREADS>;
    constexpr int LDA = StageA::LD, LDB = StageB::LD;
    constexpr int GROUP_M = BM / (TM / VEC), GROUP_N = BN / (TN / VEC);
    // Three levels of sums: a block of 32 k in FFMAs, 32 blocks (1024 k), the rest.
    constexpr int BLOCK_K = 32, GROUP_BLOCKS = 32;
    static_assert(BLOCK_K % BK == 0, "a block of sums is whole slices");
    constexpr int BLOCK_SLICES = BLOCK_K / BK;
    T* const tile_a = smem[0].v;
    T* const tile_b = tile_a + 2 * BK * LDA;
    const int tid = static_cast<int>(threadIdx.x);
    const int tx = tid % (BN / TN), ty = tid / (BN / TN);
    const long long M = p.m, N = p.n, K = p.k;
    const long long slices = (K + BK - 1) / BK;
    const T* const a_batch = element<T>(p.a, b, 0, 0);
    const T* const b_batch = element<T>(p.b, b, 0, 0);
    const bool a_k_along = StageA::k_along(p.a.row_stride, p.a.col_stride);
    const bool b_k_along = StageB::k_along(p.b.col_stride, p.b.row_stride);
    const bool fast_tile = StageA::vec_ok(a_batch, p.a.row_stride, p.a.col_stride) &&
                           StageB::vec_ok(b_batch, p.b.col_stride, p.b.row_stride) && m0 + BM <= M && n0 + BN <= N;
    StageA sa(a_batch, p.a.row_stride, p.a.col_stride, m0);
    StageB sb(b_batch, p.b.col_stride, p.b.row_stride, n0);
    Vec16<T> ra[StageA::VECS], rb[StageB::VECS];
    auto fetch = [&](long long s) {
        const bool fast = fast_tile && (s + 1) * BK <= K;
        sa.template fetch<R>(ra, fast, p.a.row_stride, p.a.col_stride, M - m0, K - s * BK);
        sb.template fetch<R>(rb, fast, p.b.col_stride, p.b.row_stride, N - n0, K - s * BK);
    };
    auto stash = [&](int buf) {
        stash_exponentials(sa, tile_a + buf * BK * LDA, ra, a_k_along, ref);
        stash_exponentials(sb, tile_b + buf * BK * LDB, rb, b_k_along, ref + BM);
        sa.next_stage(p.a.col_stride);
        sb.next_stage(p.b.row_stride);
    };
    T block[TM][TN], group[TM][TN], total[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            block[i][j] = 0.0f;
            group[i][j] = 0.0f;
            total[i][j] = 0.0f;
        }
    fetch(0);
    stash(0);
    __syncthreads();
    for (long long s = 0; s < slices; ++s) {
        const int buf = static_cast<int>(s & 1);
        fetch(s + 1);  // past the last slice it reads nothing, and its stash is never read
        const T* const a_buf = tile_a + buf * BK * LDA + ty * VEC;
        const T* const b_buf = tile_b + buf * BK * LDB + tx * VEC;
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            T fa[TM], fb[TN];
            load_fragment<T, TM, GROUP_M>(fa, a_buf + kk * LDA);
            load_fragment<T, TN, GROUP_N>(fb, b_buf + kk * LDB);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) block[i][j] = fmaf(fa[i], fb[j], block[i][j]);
        }
        if ((s + 1) % BLOCK_SLICES == 0) {
            const bool to_total = (s + 1) % (BLOCK_SLICES * GROUP_BLOCKS) == 0;
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    group[i][j] += block[i][j];
                    block[i][j] = 0.0f;
                    if (to_total) {
                        total[i][j] += group[i][j];
                        group[i][j] = 0.0f;
                    }
                }
        }
        stash(buf ^ 1);
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = (i / VEC) * GROUP_M + ty * VEC + i % VEC;
        if (m0 + r >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int q = (j / VEC) * GROUP_N + tx * VEC + j % VEC;
            if (n0 + q >= N) continue;
            T* const c = element<T>(p.c, b, m0 + r, n0 + q);
            const T sum = total[i][j] + (group[i][j] + block[i][j]);
            T v = sum > 0.0f ? (ref[r] + ref[BM + q] + log2_sum(sum)) * C::ln2 + 0.0f : R::zero();
            if (p.accumulate) v = R::plus(*c + 0.0f, v) + 0.0f;
            *c = v;
        }
    }
    // Before the next tile's statistics and first stash overwrite what this one read.
    __syncthreads();
}

template <class Cfg, int THREADS>
__device__ __forceinline__ void gemm_logplus_factored(const TgGemmParams& p) {
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, VEC = 4;
    static_assert(Cfg::sk == BK && Cfg::threads == THREADS, "one k group");
    constexpr int FACTORED = 2 * BK * (BM + VEC + BN + VEC) / VEC;
    constexpr int STRAIGHT = LogTileShared<Cfg, float, 1>::vecs;
    __shared__ Vec16<float> smem[FACTORED > STRAIGHT ? FACTORED : STRAIGHT];
    __shared__ FactorStats<BM, BN> stats;
    // (Only the tile's coordinates live across the two paths: each recomputes the rest from p.)
    for_each_tile<BM, BN>(p.batch, p.m, p.n, [&](long long b, long long m0, long long n0) {
        if (factor_tile<Cfg, THREADS>(p, b, m0, n0, stats)) factored_tile<Cfg, THREADS>(p, b, m0, n0, stats.ref, smem);
        else log_tile<Cfg, float, 1, THREADS>(p, b, m0, n0, smem);  // (ends with a barrier)
    });
}

}  // namespace tg
